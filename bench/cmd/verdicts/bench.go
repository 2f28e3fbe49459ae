package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Plan is what a bench run measures, as plan.json records it: -from
// renders with it, and a rerun into the same directory must ask for the
// same (it then resumes, skipping the steps already done).
type Plan struct {
	// Quick is -quick: tiny counts and short runs that exercise every
	// step; its figures are not measurements.
	Quick bool `json:"quick"`
	// RTLoad and Interleave are the binaries run; Version is rtload's
	// `rtload version`.
	RTLoad     string `json:"rtload"`
	Interleave string `json:"interleave"`
	Version    string `json:"version"`
	// RunFlags are given to every rtload run the bench makes and to every
	// power check (whose scenario is a file, not the baseline's): empty
	// at the defaults.
	RunFlags []string `json:"run_flags,omitempty"`
	// Budget and Looks are given to every check when set; 0 leaves the
	// check's defaults (DefaultBudget, DefaultLooks: what `rtload check
	// --help` says).
	Budget        time.Duration `json:"budget_ns,omitempty"`
	Looks         int           `json:"looks,omitempty"`
	DefaultBudget time.Duration `json:"default_budget_ns"`
	DefaultLooks  int           `json:"default_looks"`
	// AA, AADefault, Medium and Large are each series' number of checks:
	// A/A against the recommended baseline, A/A against the default one,
	// and the two power changes (against the recommended baseline).
	AA        int `json:"aa"`
	AADefault int `json:"aa_default"`
	Medium    int `json:"medium"`
	Large     int `json:"large"`
	// BaseProcesses is the recommended baseline's processes (0: what the
	// default run's sizing line recommends).
	BaseProcesses int `json:"base_processes"`
	// TrueProcesses is the processes of the true-size run; Ladder the
	// changes it measures; MediumChange and LargeChange force the power
	// changes ("": picked from the true sizes).
	TrueProcesses int      `json:"true_processes"`
	Ladder        []string `json:"ladder"`
	MediumChange  string   `json:"medium_change,omitempty"`
	LargeChange   string   `json:"large_change,omitempty"`
	// ILSeed, ILAA and ILAADuration are bench/cmd/interleave's -seed, -aa
	// and -aa-duration.
	ILSeed       time.Duration `json:"il_seed_ns"`
	ILAA         int           `json:"il_aa"`
	ILAADuration time.Duration `json:"il_aa_duration_ns"`
	// Phases are the parts run (truesize, interleave, aa, aa-default,
	// medium, large).
	Phases []string `json:"phases"`
	// Label says how the machine was (e.g. "under load"), in the title.
	Label string `json:"label,omitempty"`
	// Command is how the bench was started; Started when; Host the
	// machine (kernel, CPUs, model).
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	Host    string    `json:"host"`
}

// allPhases are the parts of the bench, in the order they run.
var allPhases = []string{"truesize", "interleave", "aa", "aa-default", "medium", "large"}

// same says whether two plans ask for the same measurement.
func (p Plan) same(q Plan) bool {
	p.Command, p.Started, q.Command, q.Started = "", time.Time{}, "", time.Time{}
	a, _ := json.Marshal(p)
	b, _ := json.Marshal(q)
	return string(a) == string(b)
}

func (p Plan) has(phase string) bool { return slices.Contains(p.Phases, phase) }

// checks says whether any check series is in the plan.
func (p Plan) checks() bool {
	return p.has("aa") || p.has("aa-default") || p.has("medium") || p.has("large")
}

const planFile = "plan.json"

// benchMain is `verdicts bench`: make bench-verdicts.
func benchMain(args []string) error {
	fs := flag.NewFlagSet("verdicts bench", flag.ContinueOnError)
	var (
		p                           Plan
		dir, from, md, only, ladder string
		runFlags                    stringList
		timeout                     time.Duration
	)
	fs.BoolVar(&p.Quick, "quick", os.Getenv("VERDICTS_QUICK") != "" && os.Getenv("VERDICTS_QUICK") != "0",
		"tiny counts and short runs (about 3 minutes: a smoke test) that exercise every step; not a measurement (also VERDICTS_QUICK=1)")
	fs.StringVar(&p.RTLoad, "rtload", "bin/rtload", "rtload binary")
	fs.StringVar(&p.Interleave, "interleave", "bin/interleave", "bench/cmd/interleave binary")
	fs.StringVar(&dir, "dir", "", "bench directory: every run's results, every check's JSON, steps.jsonl (default results/bench-verdicts-<time>); an existing one resumes")
	fs.StringVar(&from, "from", "", "run nothing: render the Markdown from the bench directory a run left")
	fs.StringVar(&md, "md", "", "Markdown file to write (default bench/VERDICTS.md; with -quick bench/VERDICTS-quick.md; - for stdout)")
	fs.StringVar(&only, "only", strings.Join(allPhases, ","), "parts to run, comma-separated: "+strings.Join(allPhases, ", "))
	fs.Var(&runFlags, "run-flag", "a flag for every rtload run and power check, e.g. -run-flag=--set -run-flag=readers[0].cpu=0 (repeatable; the figures are then not the defaults')")
	fs.DurationVar(&p.Budget, "budget", 0, "every check's --budget (0: check's default)")
	fs.IntVar(&p.Looks, "looks", 0, "every check's --looks (0: check's default)")
	fs.IntVar(&p.AA, "aa", 20, "A/A checks against the recommended baseline")
	fs.IntVar(&p.AADefault, "aa-default", 10, "A/A checks against the default baseline (rtload run as make run runs it)")
	fs.IntVar(&p.Medium, "medium", 10, "checks of the +8–15% change")
	fs.IntVar(&p.Large, "large", 10, "checks of the +25% change")
	fs.IntVar(&p.BaseProcesses, "base-processes", 0, "processes of the recommended baseline (0: as the default run's sizing line recommends)")
	fs.IntVar(&p.TrueProcesses, "true-processes", 6, "processes of the true-size run")
	fs.StringVar(&ladder, "ladder", "recvmsg,recvmmsg-1,recvmmsg-8,recvmmsg-32", "changes whose true size is measured, the power changes picked from them")
	fs.StringVar(&p.MediumChange, "medium-change", "", "the +8–15% change (default: picked from the true sizes)")
	fs.StringVar(&p.LargeChange, "large-change", "", "the +25% change (default: picked from the true sizes)")
	fs.DurationVar(&p.ILSeed, "il-seed", 60*time.Second, "interleave -seed: measured time per variant of seed 000's run")
	fs.IntVar(&p.ILAA, "il-aa", 20, "interleave -aa: interleaved A/A runs")
	fs.DurationVar(&p.ILAADuration, "il-aa-duration", 15*time.Second, "interleave -aa-duration")
	fs.StringVar(&p.Label, "label", "", `how the machine was, in the title (e.g. "under load")`)
	fs.DurationVar(&timeout, "timeout", 0, "bound on the whole bench (0: the sum of every step's bound)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if md == "" {
		md = "bench/VERDICTS.md"
		if p.Quick {
			md = "bench/VERDICTS-quick.md"
		}
	}
	if from != "" {
		return renderDir(from, md)
	}
	p.RunFlags = runFlags
	p.Phases = splitList(only)
	for _, ph := range p.Phases {
		if !slices.Contains(allPhases, ph) {
			return fmt.Errorf("-only %q: allowed %s", ph, strings.Join(allPhases, ", "))
		}
	}
	p.Ladder = splitList(ladder)
	if p.Quick {
		p.quick(fs)
	}
	if err := p.complete(); err != nil {
		return err
	}
	if dir == "" {
		dir = filepath.Join("results", "bench-verdicts-"+time.Now().Format("20060102-150405"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if timeout <= 0 {
		timeout = p.bound()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p.Command = "verdicts bench " + strings.Join(args, " ")
	err := runBench(ctx, p, dir, os.Stderr)
	if rerr := renderDir(dir, md); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if errors.Is(err, errInterrupted) {
		return exitError{code: 130, err: fmt.Errorf("interrupted (or past -timeout %v): %s holds what ran; rerun the same command to resume", timeout, dir)}
	}
	return err
}

// quick sets the counts and durations of -quick, except those given on
// the command line.
func (p *Plan) quick(fs *flag.FlagSet) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	def := func(name string, v *int, q int) {
		if !set[name] {
			*v = q
		}
	}
	def("aa", &p.AA, 2)
	def("aa-default", &p.AADefault, 1)
	def("medium", &p.Medium, 1)
	def("large", &p.Large, 1)
	def("base-processes", &p.BaseProcesses, 3)
	def("true-processes", &p.TrueProcesses, 2)
	def("il-aa", &p.ILAA, 2)
	if !set["budget"] {
		p.Budget = 30 * time.Second
	}
	if !set["il-seed"] {
		p.ILSeed = 5 * time.Second
	}
	if !set["il-aa-duration"] {
		p.ILAADuration = 2 * time.Second
	}
	if !slices.Contains(p.RunFlags, "--duration") {
		p.RunFlags = append([]string{"--duration", "1s"}, p.RunFlags...)
	}
}

// complete checks the plan and fills in what the machine and binaries
// say: the check's default budget and looks, rtload's version, the host.
func (p *Plan) complete() error {
	if len(p.Phases) == 0 {
		return errors.New("-only: no part to run")
	}
	for _, n := range []int{p.AA, p.AADefault, p.Medium, p.Large, p.TrueProcesses, p.ILAA} {
		if n < 0 || n > 1000 {
			return fmt.Errorf("a count of %d: allowed 0–1000", n)
		}
	}
	if p.BaseProcesses < 0 || p.BaseProcesses > 200 {
		return fmt.Errorf("-base-processes %d: allowed 0 (as run recommends) to 200", p.BaseProcesses)
	}
	if p.TrueProcesses < 1 && p.has("truesize") {
		return errors.New("-true-processes: at least 1")
	}
	var ladder []change
	for _, s := range append(slices.Clone(p.Ladder), p.MediumChange, p.LargeChange) {
		if s == "" {
			continue
		}
		c, err := parseChange(s)
		if err != nil {
			return err
		}
		if c.Name == baseVariant {
			return fmt.Errorf("change %q: that is the baseline variant itself", s)
		}
		if !slices.ContainsFunc(ladder, func(x change) bool { return x.Name == c.Name }) {
			ladder = append(ladder, c)
		}
	}
	if len(ladder) == 0 && (p.has("medium") || p.has("large")) {
		return errors.New("-ladder: no change to measure")
	}
	p.Ladder = p.Ladder[:0]
	for _, c := range ladder {
		p.Ladder = append(p.Ladder, c.Name)
	}
	if os.Geteuid() != 0 {
		return errors.New("needs root (SCHED_FIFO readers, as rtload run does): run as root, e.g. sudo make bench-verdicts")
	}
	for _, b := range []string{p.RTLoad, p.Interleave} {
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("%w (make bench-verdicts builds it)", err)
		}
	}
	help, err := output(p.RTLoad, "check", "--help")
	if err != nil {
		return err
	}
	p.DefaultBudget, p.DefaultLooks, err = checkDefaults(help)
	if err != nil {
		return err
	}
	v, err := output(p.RTLoad, "--version")
	if err != nil {
		return err
	}
	p.Version = strings.TrimSpace(v)
	p.Started = time.Now().UTC()
	p.Host = host()
	return nil
}

var (
	budgetDefault = regexp.MustCompile(`--budget duration .*\(default ([0-9a-zµ.]+)\)`)
	looksDefault  = regexp.MustCompile(`--looks int .*\(default ([0-9]+)\)`)
)

// checkDefaults reads check's default --budget and --looks from its help.
func checkDefaults(help string) (time.Duration, int, error) {
	b, l := budgetDefault.FindStringSubmatch(help), looksDefault.FindStringSubmatch(help)
	if b == nil || l == nil {
		return 0, 0, errors.New("rtload check --help: no default --budget or --looks found (has the flag changed?)")
	}
	d, err := time.ParseDuration(b[1])
	if err != nil {
		return 0, 0, fmt.Errorf("rtload check --help: --budget default %q: %w", b[1], err)
	}
	n, err := strconv.Atoi(l[1])
	if err != nil {
		return 0, 0, fmt.Errorf("rtload check --help: --looks default %q: %w", l[1], err)
	}
	return d, n, nil
}

// budget is every check's budget: -budget, else check's default.
func (p Plan) budget() time.Duration {
	if p.Budget > 0 {
		return p.Budget
	}
	return p.DefaultBudget
}

// Bounds of the steps: a check takes at most its budget and the process
// running when the budget is reached (it stops adding processes before
// one would pass it); a run a few minutes per process of the default
// scenario (about 20 s each here).
const (
	checkSlack     = 5 * time.Minute
	runPerProcess  = 5 * time.Minute
	runSlack       = 5 * time.Minute
	interleaveRuns = 2 * time.Minute // bench/cmd/interleave's own slack per run
)

func (p Plan) checkTimeout() time.Duration { return p.budget() + checkSlack }

func runTimeout(processes int) time.Duration {
	return time.Duration(max(processes, 1))*runPerProcess + runSlack
}

// interleaveTimeout bounds bench/cmd/interleave -only seed,aa: its own
// bound of each run (3 × the duration per variant + 2 minutes) summed,
// and a minute.
func (p Plan) interleaveTimeout() time.Duration {
	return 3*p.ILSeed + interleaveRuns + time.Duration(p.ILAA)*(3*p.ILAADuration+interleaveRuns) + time.Minute
}

// basePlanned is the recommended baseline's processes the bound assumes
// when run is to say.
const basePlanned = 10

// bound is the sum of every step's bound.
func (p Plan) bound() time.Duration {
	d := runTimeout(1) // the default baseline
	if p.has("truesize") {
		d += runTimeout(p.TrueProcesses)
	}
	if p.has("interleave") {
		d += p.interleaveTimeout()
	}
	if p.checks() {
		d += runTimeout(cmp0(p.BaseProcesses, basePlanned))
	}
	n := 0
	for _, s := range p.series(nil, nil) {
		n += s.N
	}
	return d + time.Duration(n)*p.checkTimeout()
}

func cmp0(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// output runs a short command and returns its stdout.
func output(argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return string(b), nil
}

// host names the machine: kernel, CPUs, CPU model.
func host() string {
	k, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("Linux %s, %d CPUs, %s", strings.TrimSpace(string(k)), runtime.NumCPU(), model)
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// exitError ends the command with code.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }

// runBench runs the plan's steps into dir, resuming a run of the same
// plan there.
func runBench(ctx context.Context, p Plan, dir string, log io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(dir, planFile)); err == nil {
		var old Plan
		if err := json.Unmarshal(b, &old); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, planFile), err)
		}
		if !old.same(p) {
			return fmt.Errorf("%s holds a bench of other settings (%s): render it with -from, or give a new -dir", dir, planFile)
		}
		p = old
		fmt.Fprintf(log, "verdicts: resuming %s\n", dir)
	} else if errors.Is(err, os.ErrNotExist) {
		b, _ := json.MarshalIndent(p, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, planFile), append(b, '\n'), 0o644); err != nil {
			return err
		}
	} else {
		return err
	}
	done, _, err := readSteps(dir)
	if err != nil {
		return err
	}
	r := &runner{dir: dir, ctx: ctx, done: done, log: log, cleanup: []string{p.RTLoad, "cleanup"}}
	fmt.Fprintf(log, "verdicts: %s into %s, bounded by %v in all\n", strings.Join(p.Phases, ", "), dir, p.bound().Round(time.Minute))
	b := &bench{p: p, r: r, dir: dir}
	err = b.run()
	// Whatever a killed step left: rtload cleanup removes the namespaces of
	// dead runs (only those), and the children's TMPDIR is emptied.
	r.runCleanup("the bench")
	if rest, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(rest) > 0 {
		fmt.Fprintf(log, "verdicts: %d entries left in %s (kept for a look)\n", len(rest), filepath.Join(dir, "tmp"))
	} else {
		os.Remove(filepath.Join(dir, "tmp"))
	}
	return err
}
