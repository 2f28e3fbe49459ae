package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/configs"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/interop"
	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
	"github.com/rtload/rtload/verdict"
)

type runFlags struct {
	duration      string
	repeat        int
	repeatSet     bool // --repeat was given
	interval      string
	metricsAddr   string
	sets          []string
	out           string
	allowDegraded bool
	noWakeupLog   bool
	taskPerf      bool
	quiet         bool
	verbose       bool
	// strict (--strict) makes a run that was not the run asked for exit
	// ExitNotAsAsked.
	strict bool
	format string
	// rounds: auto: --rounds, --precision, --max-rounds, --max-time, and
	// which of the last three were given.
	rounds      string
	precision   string
	maxRounds   int
	maxTime     time.Duration
	autoFlagSet []string
	// auto is the stopping rule of a rounds: auto run (prepareRun).
	auto    *compare.AutoRule
	profile bool
	// processes (--processes) overrides the scenario's processes when
	// given (processesSet).
	processes    int
	processesSet bool
	// afterProcess is engine.Options.AfterProcess (check's stop rule).
	afterProcess func(*results.Summary, time.Duration) bool
	// appendTo (--append BASE) makes the run a new session of the
	// sessions directory BASE (results.Sessions).
	appendTo string
	// firstProcessLimit, when > 0, stops a multi-process run whose first
	// process is still running after it (check's --budget; the stop
	// rule, afterProcess, bounds the later ones), its cause budgetSpent.
	firstProcessLimit time.Duration
	// forced are check's own settings, "path=value", applied after --set
	// and named "check" (not listed as the user's --set in the plan).
	forced []string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [FILE|NAME]",
		Short: "Run a scenario for real and print the per-call and wakeup-latency tables",
		Long: `Run builds the scenario (sockets, senders, real-time readers, noise), runs
every variant in alternating order for the scenario's rounds, writes a
results directory (summary.json and one per-wakeup CSV per reader and trial)
and prints the seed's table: per-call histograms, one column per variant.

Without an argument it runs the built-in default scenario (laight-450, seed
000). NAME is a built-in scenario (see rtload list); FILE a YAML file.
The argument is a file when a path of that name exists and is not a
directory, else a built-in name: a directory ./laight-450/ does not hide
the built-in laight-450.
Ctrl-C (SIGINT) or SIGTERM stops the run early and still writes complete
results for every trial that ran (exit 130); so do SIGHUP, a closed
terminal or ssh session (exit 129), and SIGQUIT (exit 131, then the
goroutine stacks).

--profile (or profile: in the scenario) follows each variant's trial with a
profiled twin whose reader threads are sampled with perf_event_open
(cpu-clock, or cycles where a PMU counts them; kernel and user call chains):
the timed histograms are never measured under the sampler. It writes
profile-<variant>.pb.gz (go tool pprof) and .folded (flamegraph.pl) per
variant; rtload explain DIR then says which kernel functions carry each
variant's extra cost per call.`,
		Example: `  rtload run
  rtload run laight-450 --duration 2s
  rtload run configs/laight-450.yaml --set readers[0].cpu=0 --set noise[0].threads=2
  rtload run my.yaml --out /tmp/res --allow-degraded
  rtload run laight-450 --profile --duration 3s && rtload explain rtload-results/laight-450-*`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := configs.Default
			if len(args) == 1 {
				name = args[0]
			}
			f.repeatSet = cmd.Flags().Changed("repeat")
			f.processesSet = cmd.Flags().Changed("processes")
			autoFlagsChanged(cmd, &f)
			return runScenario(cmd, name, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.duration, "duration", "", "measured time per trial, a Go duration up to 24h, or forever (a soak run until Ctrl-C, its logs rotated: for anything longer)")
	fl.StringVar(&f.interval, "interval", "", "emit an interval record every D (intervals.jsonl, a live line); default 10s for soak runs")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (loopback only, e.g. 127.0.0.1:9100)")
	fl.IntVar(&f.repeat, "repeat", 0, "run the whole scenario N times (variants alternating inside each repeat); same as --set rounds=N")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario field: path=value, e.g. readers[0].cpu=0 (repeatable); a field a variant sets is refused (the variant's value would run)")
	fl.StringVar(&f.out, "out", "", "results directory: a new path, or an empty directory of yours not writable by others (default rtload-results/<scenario>-<timestamp>; $RTLOAD_RESULTS replaces rtload-results)")
	fl.StringVar(&f.appendTo, "append", "", "add this run as a new session (one boot, or one sitting) to the sessions directory BASE (made when new): BASE/sNNN plus its index; refused when the scenario (but processes, rounds), the kernel, its command line or the machine differ from BASE's first session; compare and check pool BASE's sessions")
	fl.BoolVar(&f.allowDegraded, "allow-degraded", false, "run without missing privileges (SCHED_OTHER, unpinned, unlocked memory) or unmet requirements, and mark results degraded")
	fl.BoolVar(&f.noWakeupLog, "no-wakeup-log", false, "do not write the per-wakeup CSV logs")
	fl.BoolVar(&f.taskPerf, "task-perf-counters", false, "count the reader threads' context switches, faults and CPU time with task-bound perf events instead of procfs (they add a few µs to every wakeup latency; results say so)")
	levelFlags(cmd, &f.quiet, &f.verbose)
	strictFlag(cmd, &f.strict)
	fl.StringVar(&f.format, "format", "text", "report format: text or json (schema rtload-report, see docs/results.md; the plan then goes to stderr)")
	autoFlags(cmd, &f)
	fl.BoolVar(&f.profile, "profile", false, "add a profiled trial after each variant's trial (kernel and user call chains of the readers); same as --set profile.enabled=true")
	processesFlag(cmd, &f)
	return cmd
}

// processesFlag adds --processes to cmd.
func processesFlag(cmd *cobra.Command, f *runFlags) {
	cmd.Flags().IntVar(&f.processes, "processes", 0, "run the whole plan in N fresh processes one after the other, setup randomised, so that verdicts have independent samples (n = processes × rounds); same as --set processes=N")
}

// autoFlags adds --rounds and rounds: auto's --precision, --max-rounds
// and --max-time to cmd.
func autoFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.rounds, "rounds", "", "rounds: a count, or auto (alternate the variants until the 95% CI of the headline difference is within --precision); same as --set rounds=…")
	fl.StringVar(&f.precision, "precision", "2%", "rounds: auto: stop once the 95% CI of the headline difference is within ± this much of the baseline")
	fl.IntVar(&f.maxRounds, "max-rounds", compare.DefaultMaxRounds, "rounds: auto: stop after this many rounds")
	fl.DurationVar(&f.maxTime, "max-time", 0, "rounds: auto: stop before a round that would end past this long into the run (0: no limit)")
}

// autoFlagsChanged records which of the rounds: auto flags cmd was given.
func autoFlagsChanged(cmd *cobra.Command, f *runFlags) {
	for _, n := range []string{"precision", "max-rounds", "max-time"} {
		if cmd.Flags().Changed(n) {
			f.autoFlagSet = append(f.autoFlagSet, "--"+n)
		}
	}
}

func runScenario(cmd *cobra.Command, name string, f runFlags) error {
	sw := watchSignals(cmd.ErrOrStderr())
	if err := checkFormat(f.format); err != nil {
		return err
	}
	level, err := levelOf(f.quiet, f.verbose)
	if err != nil {
		return err
	}
	spec, trials, err := loadRun(name, &f)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	plan := out
	switch {
	case f.format == "json":
		plan = cmd.ErrOrStderr()
	case level == report.Quiet:
		plan = io.Discard
	}
	var sess *results.Sessions
	if f.appendTo != "" {
		if f.out != "" {
			return usageError{errors.New("--append and --out: give one (--append BASE writes the session into BASE/sNNN)")}
		}
		if sess, err = openAppend(f.appendTo, spec, sysinfo.Gather()); err != nil {
			return err
		}
		defer sess.Close()
		if f.out, err = sess.Next(); err != nil {
			return err
		}
	}
	o, err := execute(cmd, sw, spec, trials, f, plan)
	if sess != nil {
		if aerr := endAppend(cmd.ErrOrStderr(), sess, f.out, o); aerr != nil {
			return errors.Join(err, o.runErr, aerr)
		}
	}
	if err != nil {
		return err
	}
	if o.sum == nil {
		return o.runErr
	}
	if f.format == "json" {
		if err := writeRunJSON(out, o); err != nil {
			return errors.Join(o.runErr, o.saveErr, err)
		}
		return errors.Join(o.runErr, o.saveErr, strictExit(f.strict, o.sum))
	}
	saveErr := ""
	if o.saveErr != nil {
		saveErr = o.saveErr.Error() + "; " + o.kept
	}
	if err := writeRun(out, o.sum, o.path, saveErr, level); err != nil {
		return errors.Join(o.runErr, o.saveErr, err)
	}
	if o.saveErr != nil {
		return errors.Join(o.runErr, o.saveErr)
	}
	if o.runErr != nil {
		return o.runErr
	}
	return strictExit(f.strict, o.sum)
}

// writeRun prints a run's results at level, ending on its closing block:
// the brief report (report.Brief) or, verbose, the whole of it with the
// interleaved changes and the sizing; then compare.RunClosing. saveErr,
// when the summary was not saved in full, says so in the closing block.
// run and report both print with it.
func writeRun(w io.Writer, s *results.Summary, dir, saveErr string, level report.Level) error {
	w = termsafe.Writer(w)
	res, cerr := compare.Compare([]compare.Run{{Label: "run", Summary: s}})
	switch level {
	case report.Verbose:
		if err := report.Report(w, s); err != nil {
			return err
		}
		if err := compare.WriteInterleaved(w, s); err != nil {
			return err
		}
		printSizing(w, res)
	case report.Normal:
		if err := report.Brief(w, s); err != nil {
			return err
		}
		if processes(s) > 1 {
			printSizing(w, res) // a baseline's sizing: what run --processes is for
		}
	}
	var c report.Closing
	if cerr != nil {
		c.AddText("no comparison: " + cerr.Error())
		c.Add(compare.MarksLine(compare.RunMarks(s), len(s.Trials)))
		c.Add("results: " + dir)
	} else {
		c = compare.RunClosing(res, s, dir, saveErr)
	}
	if d := verdict.RunDropped(s); d != nil && processes(s) > 1 {
		// Before the last line (the results directory or why not saved).
		c.Lines = slices.Insert(c.Lines, max(len(c.Lines)-1, 0), d.RunLine())
	}
	return c.Write(w, level == report.Quiet)
}

// processes counts the processes of s's trials.
func processes(s *results.Summary) int {
	var ps []int
	for _, t := range s.Trials {
		if !slices.Contains(ps, t.Process) {
			ps = append(ps, t.Process)
		}
	}
	return max(len(ps), 1)
}

// writeRunJSON prints the run as compare.RunReport: read back from its
// results directory when saved (with its wakeup logs), else from memory.
func writeRunJSON(w io.Writer, o outcome) error {
	r := compare.Run{Label: filepath.Base(o.path), Dir: o.path, Summary: o.sum}
	if o.saveErr == nil {
		if runs, err := compare.Load([]string{o.path}, nil); err == nil {
			r = runs[0]
		}
	}
	doc, err := compare.NewRunReport(r)
	if err != nil {
		return err
	}
	if o.saveErr != nil {
		doc.Saved, doc.SaveError = false, o.saveErr.Error()+"; "+o.kept
	}
	if o.runErr != nil {
		doc.Error = o.runErr.Error()
	}
	out := struct {
		*compare.RunReport
		// Sizing is what a default check against this run can see
		// (verdict.SizeRun), Replaced its processes the machine disturbed,
		// which a check leaves out (verdict.RunDropped): a run of several
		// processes, a baseline.
		Sizing   *verdict.Detectable `json:"sizing,omitempty"`
		Replaced *verdict.Dropped    `json:"replaced,omitempty"`
	}{RunReport: doc}
	if n := processes(r.Summary); n > 1 {
		out.Replaced = verdict.RunDropped(r.Summary)
		clean := n
		if out.Replaced != nil {
			clean -= len(out.Replaced.Disturbed)
		}
		out.Sizing = verdict.SizeRun(r, clean, verdict.PerProcess(r.Summary), verdict.Options{})
	}
	return compare.WriteJSON(w, out)
}

// outcome is what a run left: its summary (nil when nothing was
// measured), the results directory, the run's own error (a failed or
// stopped run), the error saving summary.json and, then, what it still
// holds.
type outcome struct {
	sum     *results.Summary
	path    string
	runErr  error
	saveErr error
	kept    string
}

// execute runs the trials of spec with f's options into a new results
// directory (f.out, or rtload-results/<scenario>-<time>), saving summary.json
// after every trial and at the end, with the plan printed to plan; sw's
// signals stop it. It returns an error only when the run could not start
// (a refused directory or metrics address, a signal before anything was
// created); a run that fails or is stopped returns its outcome with
// runErr set. A directory created for a run that measured nothing is
// removed again.
func execute(cmd *cobra.Command, sw *signalWatch, spec *scenario.Spec, trials []scenario.Trial, f runFlags, plan io.Writer) (outcome, error) {
	var o outcome
	errw := cmd.ErrOrStderr()
	// A run that cannot fit ulimit -v would die part way with a runtime
	// dump: refused before anything exists.
	if err := engine.CheckAddressSpace(trials, engine.Options{}); err != nil {
		return o, err
	}
	// Every refusal comes before anything is printed or created; a
	// directory created for a run that then measures nothing is removed
	// again.
	env := sysinfo.Gather()
	unmet, err := fitMachine(errw, spec, trials, &env, f.allowDegraded)
	var reqErr *engine.RequirementsError
	if err != nil && !errors.As(err, &reqErr) {
		return o, err
	}
	// Unmet requirements and missing privileges in one refusal, not one
	// layer at a time (engine.Run checks the privileges again).
	if err := errors.Join(err, engine.Preflight(trials, f.allowDegraded)); err != nil {
		return o, err
	}
	// What will disturb the readers, named with its fix, before anything
	// is paid for (a long baseline above all).
	for _, w := range engine.Disturbances(trials) {
		fmt.Fprintf(errw, "warning: %s\n", termsafe.Escape(w))
	}
	var srv *exporter.Server
	if f.metricsAddr != "" {
		if srv, err = exporter.Listen(f.metricsAddr, false); err != nil {
			return o, usageError{fmt.Errorf("--metrics-addr: %w", err)}
		}
		defer srv.Close()
	}
	if err := sw.stopped(); err != nil {
		return o, fmt.Errorf("%w before the run started: nothing was measured or created", err)
	}
	_, parentErr := os.Stat(resultsParent())
	if f.out != "" {
		_, parentErr = os.Stat(filepath.Dir(f.out))
	}
	// In a container as root, results into a volume another user owns
	// are given to that user at the end (resultsOwner).
	now := time.Now()
	target := f.out
	if target == "" {
		target = defaultOut(spec.Name, now)
	}
	own := resultsOwner(env.Container, os.Geteuid(), target)
	mounts := sysinfo.ReadMounts(os.DirFS("/"))
	trustVolume(own, mounts)
	dir, created, err := createOut(f.out, spec.Name, now)
	if errors.Is(err, safeio.ErrUnsafeDir) && f.out == "" {
		return o, usageError{fmt.Errorf("%w (the default results directory: give --out)", err)}
	} else if errors.Is(err, safeio.ErrUnsafeDir) {
		return o, usageError{fmt.Errorf("%w (--out)", err)}
	} else if err != nil {
		return o, err
	}
	path := dir.Path()
	o.path = path
	defer dir.Close()
	fmt.Fprintf(errw, "rtload: results go to %s\n", termsafe.Escape(path))
	if took := dir.TakenOver(); took != "" {
		fmt.Fprintf(errw, "rtload: results directory %s: %s\n", termsafe.Escape(path), termsafe.Escape(took))
		// A killed run leaves its namespaces (and a --processes child's,
		// killed with its parent): remove every one whose run is gone.
		removed, err := netns.Sweep()
		for _, e := range removed {
			fmt.Fprintf(errw, "rtload: removed namespace %s left by a dead run: %s\n", e.Name, e.Why)
		}
		if err != nil {
			fmt.Fprintf(errw, "rtload: warning: sweeping leftover namespaces: %v (rtload cleanup removes them)\n", err)
		}
	}
	if note := volumeNote(env.Container, mounts, path, own); note != "" {
		fmt.Fprintln(errw, note)
	}
	removed := false
	if own.ok {
		defer func() { // before dir.Close
			if !removed {
				handOver(errw, dir, own)
			}
		}()
	}
	removeIfEmpty := func() {
		removed = true
		dir.Close() // releases the directory's lock file first
		if created {
			os.Remove(path) // only if empty: never removes results
			if parentErr != nil {
				os.Remove(filepath.Dir(path))
			}
		}
	}
	printPlan(plan, spec, len(trials), f.auto, f.afterProcess != nil)

	sv, err := newSaver(dir, spec, env, errw)
	if err != nil {
		removeIfEmpty()
		return o, err
	}
	sw.attach(sv)
	ctx := sw.context()
	if f.firstProcessLimit > 0 {
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		timer := time.AfterFunc(f.firstProcessLimit, func() { stop(budgetSpent{f.firstProcessLimit}) })
		defer timer.Stop()
		after := f.afterProcess
		f.afterProcess = func(s *results.Summary, elapsed time.Duration) bool {
			timer.Stop() // the first process has ended
			return after == nil || after(s, elapsed)
		}
	}

	opt := engine.Options{AllowDegraded: f.allowDegraded, OutDir: path, Results: dir, NoWakeupLog: f.noWakeupLog, Unmet: unmet,
		TaskPerfCounters: f.taskPerf}
	bar := progress(&opt, f, spec, trials, errw)
	live := newLiveLine(errw, term.IsTerminal(int(os.Stderr.Fd())))
	wireOptions(&opt, f, spec, env, sv, srv, live, errw)
	var sum *results.Summary
	var runErr error
	if spec.Processes > 1 {
		sum, runErr = runProcesses(ctx, spec, trials, opt, f, errw)
	} else {
		sum, runErr = engine.Run(ctx, spec, trials, opt)
	}
	if sum != nil && sum.Auto != nil && sum.Auto.Reason == "" && sum.Stopped {
		sum.Auto.Reason = "interrupted"
	}
	live.done()
	if bar != nil {
		_ = bar.Finish()
	}
	o.runErr = runErr
	if sum == nil || (runErr != nil && len(sum.Trials) == 0) {
		removeIfEmpty()
		return o, nil
	}
	o.sum = sum
	// Save first: the caller prints the report whatever the save gives,
	// from the summary in memory.
	o.saveErr = sv.final(sum)
	if o.saveErr == nil {
		// The same histograms in formats other tools read: HdrHistogram
		// interval logs and cyclictest's -h layout.
		if _, err := interop.WriteInterop(dir, sum); err != nil {
			fmt.Fprintf(errw, "rtload: interop files: %v\n", err)
		}
	} else {
		o.kept = sv.kept(path)
	}
	if names := writtenFiles(path); names != "" {
		fmt.Fprintf(errw, "rtload: wrote %s: %s\n", termsafe.Escape(path), names)
	}
	return o, nil
}

// wireOptions connects the run's callbacks to opt: the live line, the
// saver's checkpoints, the metrics endpoint srv (nil: none), rounds: auto
// and check's look after each process.
func wireOptions(opt *engine.Options, f runFlags, spec *scenario.Spec, env sysinfo.Facts, sv *saver, srv *exporter.Server, live *liveLine, errw io.Writer) {
	opt.OnInterval = live.update
	opt.OnCheckpoint = sv.checkpoint
	if srv != nil {
		srv.SetRunInfo(spec.Name, "", env.Kernel) // the clock is filled in by the engine once chosen
		opt.Exporter = srv
		opt.Kernel = env.Kernel
		fmt.Fprintf(errw, "metrics: http://%s/metrics\n", srv.Addr())
	}
	if f.auto != nil {
		opt.AfterRound = autoRounds(errw, *f.auto, time.Now())
	}
	if f.afterProcess != nil {
		// check looks at the candidate after each process: with the
		// scenario and the machine summary.json will record (the engine's
		// merged summary has neither), or its compare would say the runs
		// differ in every spec field and fact.
		opt.AfterProcess = func(sum *results.Summary, elapsed time.Duration) bool {
			sum.Spec, sum.Plan, sum.Env = sv.run.Spec, sv.run.Plan, sv.run.Env
			return f.afterProcess(sum, elapsed)
		}
	} else if spec.Processes > 1 {
		// A baseline: a fresh process in the place of each the machine
		// disturbed (at most a third), and what a check against it will
		// see, said after its first clean process, before the rest is paid
		// for.
		opt.Replacements = verdict.Replacer(spec.Processes, errw)
		said := false
		opt.AfterProcess = func(sum *results.Summary, elapsed time.Duration) bool {
			if d := verdict.SizeRun(compare.Run{Label: "run", Summary: sum}, spec.Processes, elapsed/time.Duration(len(sum.Processes)), verdict.Options{}); d != nil && !said {
				said = true
				fmt.Fprintln(errw, d.Line(fmt.Sprintf("sizing after process %d of %d", len(sum.Processes), spec.Processes)))
			}
			return true
		}
	}
}

// writtenFiles lists the files of the results directory path, as they
// are now: summary.json and the interop files by name, wakeup logs and
// profiles by count ("4 wakeup logs (wakeups-*.csv)"); "" when it cannot be
// read.
func writtenFiles(path string) string {
	ents, err := os.ReadDir(path)
	if err != nil {
		return ""
	}
	var names []string
	groups := map[string]int{}
	var order []string
	for _, e := range ents {
		n := e.Name()
		g := ""
		switch {
		case strings.HasPrefix(n, "wakeups-"):
			g = "wakeup logs (wakeups-*)"
		case strings.HasPrefix(n, "profile-"):
			g = "profile files (profile-*)"
		case strings.HasPrefix(n, "."):
			continue // a temporary file being written
		}
		if g == "" {
			names = append(names, n)
			continue
		}
		if groups[g] == 0 {
			order = append(order, g)
		}
		groups[g]++
	}
	for _, g := range order {
		names = append(names, fmt.Sprintf("%d %s", groups[g], g))
	}
	return termsafe.Escape(strings.Join(names, ", "))
}

// maxDefaultSuffix bounds the names createOut tries for one second.
const maxDefaultSuffix = 100

// createOut creates the run's results directory: out (--out) when given,
// else rtload-results/<scenario>-<YYYYMMDD-HHMMSS> (defaultOut), or with -2, -3, … up to
// -maxDefaultSuffix when runs started in the same second took the name
// first. Each default name is made with mkdir(2) (results.CreateNewDir),
// so no two runs share a directory and an existing one is never reused.
func createOut(out, scenarioName string, now time.Time) (*results.Dir, bool, error) {
	if out != "" {
		return results.CreateDir(out)
	}
	base := defaultOut(scenarioName, now)
	for i := 1; i <= maxDefaultSuffix; i++ {
		path := base
		if i > 1 {
			path = fmt.Sprintf("%s-%d", base, i)
		}
		d, err := results.CreateNewDir(path)
		if err == nil {
			return d, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, err
		}
	}
	return nil, false, fmt.Errorf("results directory %s: it and %s-2 … -%d exist already: give --out", base, base, maxDefaultSuffix)
}

// defaultResults is the directory, relative to the working directory,
// that a run's default results directory is made in (createOut), unless
// $RTLOAD_RESULTS (resultsEnv) names another: the image sets it to its
// volume, /results. It holds run output only, so `make clean` removes it
// whole and .gitignore lists it once. Until issue 26 runs went to
// results/<scenario>-<time>/, inside the source tree's results package;
// --out results/NAME (or RTLOAD_RESULTS=results) still puts one there.
const defaultResults = "rtload-results"

// resultsEnv names the environment variable that replaces defaultResults.
const resultsEnv = "RTLOAD_RESULTS"

// resultsParent is where default results directories go: $RTLOAD_RESULTS,
// else defaultResults.
func resultsParent() string {
	if d := os.Getenv(resultsEnv); d != "" {
		return d
	}
	return defaultResults
}

// defaultOut is the default results directory of a run of scenarioName
// started at now: <resultsParent>/<scenario>-<YYYYMMDD-HHMMSS> (createOut
// adds -2, -3, … when taken).
func defaultOut(scenarioName string, now time.Time) string {
	return filepath.Join(resultsParent(), fmt.Sprintf("%s-%s", scenarioName, now.Format("20060102-150405")))
}

// loadRun loads the scenario with the run's flags folded in as --set
// overrides, and expands its trials.
func loadRun(name string, f *runFlags) (*scenario.Spec, []scenario.Trial, error) {
	spec, err := readSpec(name)
	if err != nil {
		return nil, nil, err
	}
	return prepareRun(spec, f)
}

// prepareRun applies the run's flags to spec as --set overrides (after
// the scenario's own values), validates it for this machine and expands
// its trials.
func prepareRun(spec *scenario.Spec, f *runFlags) (*scenario.Spec, []scenario.Trial, error) {
	if f.duration == "forever" {
		f.duration = "0"
	}
	// Each flag goes in under its own name, so that a bad value is blamed
	// on what the user typed (--duration 2: "--duration: invalid
	// duration", not "--set duration"); then --set, which wins.
	type flagSet struct{ flag, path, value string }
	var flags []flagSet
	if f.processes != 0 || f.processesSet {
		flags = append(flags, flagSet{"--processes", "processes", strconv.Itoa(f.processes)})
	}
	if f.rounds != "" {
		flags = append(flags, flagSet{"--rounds", "rounds", f.rounds})
	}
	if f.repeatSet {
		if f.repeat < 1 || f.repeat > scenario.MaxRounds {
			return nil, nil, usageError{fmt.Errorf("--repeat %d out of range (allowed: 1–%d)", f.repeat, scenario.MaxRounds)}
		}
		if f.rounds != "" {
			return nil, nil, usageError{fmt.Errorf("--repeat and --rounds: give one")}
		}
		flags = append(flags, flagSet{"--repeat", "rounds", strconv.Itoa(f.repeat)}, flagSet{"--repeat", "repeat", strconv.Itoa(f.repeat)})
	}
	if f.profile {
		flags = append(flags, flagSet{"--profile", "profile.enabled", "true"})
	}
	if f.interval != "" {
		flags = append(flags, flagSet{"--interval", "interval", f.interval})
	}
	if f.duration != "" {
		flags = append(flags, flagSet{"--duration", "duration", f.duration})
	}
	var errs scenario.ErrorList
	for _, fl := range flags {
		var el scenario.ErrorList
		if err := spec.ApplyFlag(fl.flag, fl.path, fl.value); errors.As(err, &el) {
			errs = append(errs, el...)
		}
	}
	var el scenario.ErrorList
	if err := spec.Apply(f.sets); errors.As(err, &el) {
		errs = append(errs, el...)
	}
	for _, kv := range f.forced {
		path, value, _ := strings.Cut(kv, "=")
		if err := spec.ApplyFlag("check", path, value); errors.As(err, &el) {
			errs = append(errs, el...)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	if err := spec.Validate(thisHost()); err != nil {
		return nil, nil, err
	}
	if spec.Rounds != scenario.RoundsAuto {
		if len(f.autoFlagSet) > 0 {
			return nil, nil, usageError{fmt.Errorf("%s: only with rounds: auto (--rounds auto)", strings.Join(f.autoFlagSet, ", "))}
		}
		trials, err := spec.Expand()
		if err != nil {
			return nil, nil, err
		}
		return spec, trials, nil
	}
	rule, err := autoRule(f)
	if err != nil {
		return nil, nil, err
	}
	trials, err := spec.ExpandRounds(rule.MaxRounds)
	if err != nil {
		return nil, nil, err
	}
	f.auto = &rule
	return spec, trials, nil
}

// autoRule reads rounds: auto's flags.
func autoRule(f *runFlags) (compare.AutoRule, error) {
	p, err := parsePercent("precision", f.precision)
	if err != nil {
		return compare.AutoRule{}, err
	}
	if f.maxRounds < 2 || f.maxRounds > scenario.MaxRounds {
		return compare.AutoRule{}, usageError{fmt.Errorf("--max-rounds %d out of range (allowed: 2–%d)", f.maxRounds, scenario.MaxRounds)}
	}
	if f.maxTime < 0 {
		return compare.AutoRule{}, usageError{fmt.Errorf("--max-time %v: not negative", f.maxTime)}
	}
	return compare.AutoRule{Precision: p, MaxRounds: f.maxRounds, MaxTime: f.maxTime}, nil
}

// printPlan says what the run will do before it starts: the scenario's
// name and description, and what --set changed (the description is the
// scenario's own: "reader on CPU 1" stays in it after --set
// readers[0].cpu=0).
func printPlan(out io.Writer, spec *scenario.Spec, trials int, auto *compare.AutoRule, sequential bool) {
	fmt.Fprintf(out, "rtload %s: %s\n", spec.Name, spec.Description)
	if sets := spec.Sets(); len(sets) > 0 {
		fmt.Fprintf(out, "changed by --set (the description above is the scenario's own): %s\n", termsafe.Escape(strings.Join(sets, ", ")))
	}
	switch {
	case auto != nil:
		limit := ""
		if auto.MaxTime > 0 {
			limit = fmt.Sprintf(" or %v", auto.MaxTime)
		}
		fmt.Fprintf(out, "rounds: auto: variants alternate until the 95%% CI of the headline difference is within ±%s%% of the baseline, at most %d rounds%s (%d trials of %v, +%v warm-up each)\n",
			strconv.FormatFloat(auto.Precision*100, 'g', -1, 64), auto.MaxRounds, limit, trials, time.Duration(spec.Duration), time.Duration(spec.Warmup))
	case spec.Duration == 0:
		fmt.Fprintln(out, soakPlan(spec))
	case len(spec.Readers) == 0 && len(spec.Probes) > 0:
		fmt.Fprintf(out, "%d trial(s), each running its probes to the end\n", trials)
	case interleavePlan(spec) != "":
		fmt.Fprintln(out, interleavePlan(spec))
	default:
		fmt.Fprintf(out, "%d trial(s) of %v (+%v warm-up) each\n", trials, time.Duration(spec.Duration), time.Duration(spec.Warmup))
	}
	if _, note := spec.InterleaveBlock(); note != "" {
		fmt.Fprintf(out, "note: %s\n", note)
	}
	if spec.Processes > 1 && !sequential {
		fmt.Fprintf(out, "%d processes, one after the other, each running these trials in a fresh rtload with its setup randomised (n = %d processes × %s rounds)\n",
			spec.Processes, spec.Processes, spec.Rounds)
	}
	if p := spec.Profile; p.Enabled {
		fmt.Fprintf(out, "each variant's trial is followed by a profiled one (readers sampled: %s, %d samples per second of their CPU time); rtload explain says where in the kernel the time goes\n", p.Event, p.Frequency)
	}
}

// interleavePlan says how spec's variants run interleaved ("" when they
// do not): one trial per round measuring each variant's duration in
// turn, in ABBA blocks on the same threads and sockets.
func interleavePlan(spec *scenario.Spec) string {
	block, _ := spec.InterleaveBlock()
	if block <= 0 {
		return ""
	}
	var names []string
	for _, v := range spec.Variants {
		names = append(names, v.Name)
	}
	order := append([]string(nil), names...)
	for i := len(names) - 1; i >= 0; i-- {
		order = append(order, names[i])
	}
	rounds := spec.Rounds.String()
	return fmt.Sprintf("%s round(s) of one interleaved trial of %v (+%v warm-up): variants %s alternate in %v ABBA blocks (%s, …) "+
		"on the same reader thread and sockets, %v measured each",
		rounds, time.Duration(spec.Duration)*time.Duration(len(names)), time.Duration(spec.Warmup), strings.Join(names, ", "), time.Duration(block),
		strings.Join(order, " "), time.Duration(spec.Duration))
}

// soakPlan says what a soak (duration 0) will do, exactly as the engine
// does it (engine's trialSource): its variants alternating in slices, or
// one trial until stopped, and what Ctrl-C does then.
func soakPlan(spec *scenario.Spec) string {
	const again = "; a second Ctrl-C exits at once"
	const one = "Ctrl-C (or SIGTERM) ends it and writes its complete results" + again
	var names []string
	for _, v := range spec.Variants {
		names = append(names, v.Name)
	}
	switch {
	case len(names) > 1 && spec.Slice > 0:
		measured := time.Duration(spec.Slice - spec.Warmup)
		warm := ""
		if spec.Warmup > 0 {
			warm = fmt.Sprintf(", each %v measured after %v warm-up", measured, time.Duration(spec.Warmup))
		}
		return fmt.Sprintf("variants %s alternate in %v slices%s (%s, …) until stopped; Ctrl-C (or SIGTERM) ends the run "+
			"and writes complete results for every slice that ran, the current one up to the stop%s",
			strings.Join(names, ", "), time.Duration(spec.Slice), warm, strings.Join(append(names, names[0]), ", "), again)
	case len(names) > 1:
		verb := "never run"
		if len(names) == 2 {
			verb = "never runs"
		}
		return fmt.Sprintf("1 trial, variant %s, until stopped (slice: 0, so %s %s); %s", names[0], strings.Join(names[1:], ", "), verb, one)
	}
	return "1 trial, until stopped; " + one
}

// autoRounds is a rounds: auto run's engine.Options.AfterRound: after
// every round it applies rule (compare.AutoRound, which records the
// decision in the summary) and prints a line saying where the interval
// stands.
func autoRounds(w io.Writer, rule compare.AutoRule, start time.Time) func(*results.Summary) bool {
	return func(s *results.Summary) bool {
		stop := compare.AutoRound(s, rule, time.Since(start))
		a := s.Auto
		line := fmt.Sprintf("rounds: auto: %d round(s)", a.Rounds)
		if a.HalfWidthPct != nil {
			what := a.Metric + " difference"
			if len(a.Columns) < 2 {
				what = a.Metric + " (its mean: one variant)"
			}
			line += fmt.Sprintf(", 95%% CI of the %s ±%.2f%% of the baseline (target ±%s%%)", what, *a.HalfWidthPct, strconv.FormatFloat(a.PrecisionPct, 'g', -1, 64))
		}
		if stop {
			line += ": stop, " + a.Reason
		}
		fmt.Fprintln(w, line)
		return !stop
	}
}

// progress sets up the progress bar on a terminal (or the phase log) and
// returns the bar, nil when none.
func progress(opt *engine.Options, f runFlags, spec *scenario.Spec, trials []scenario.Trial, errw io.Writer) *progressbar.ProgressBar {
	if f.quiet {
		return nil
	}
	// The log names other processes' threads (their comm is anyone's to
	// choose): escaped for the terminal.
	if spec.Processes > 1 {
		opt.Log = termsafe.Writer(errw) // the children's phase logs
		return nil
	}
	if spec.Interval != 0 || !term.IsTerminal(int(os.Stderr.Fd())) {
		opt.Log = termsafe.Writer(errw)
		return nil
	}
	bar := progressbar.NewOptions(1000, progressbar.OptionSetWriter(errw), progressbar.OptionSetWidth(30),
		progressbar.OptionSetDescription("running"), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
	opt.Progress = func(trial, n int, frac float64) {
		bar.Describe(fmt.Sprintf("trial %d/%d %s", trial+1, n, trials[trial].Variant))
		_ = bar.Set(int(1000 * (float64(trial) + frac) / float64(n)))
	}
	return bar
}

// liveLine prints one line per interval record: the current interval and
// the worst wakeup latency so far (rewritten in place on a terminal).
type liveLine struct {
	w       io.Writer
	tty     bool
	worst   int64
	worstAt time.Time
	printed bool
}

func newLiveLine(w io.Writer, tty bool) *liveLine { return &liveLine{w: w, tty: tty} }

func (l *liveLine) update(iv results.Interval) {
	if iv.WakeupLatency.MaxNs > l.worst {
		l.worst, l.worstAt = iv.WakeupLatency.MaxNs, iv.Time
	}
	proc := fmt.Sprintf("rss %.1fMiB fds %d", float64(iv.RSSBytes)/(1<<20), iv.FDs)
	if iv.ProcessUnknown != "" {
		proc = "rss ? fds ? (" + iv.ProcessUnknown + ")"
	}
	line := fmt.Sprintf("%s %s/%s #%d: wakeup p99 %sµs max %sµs (worst %sµs at %s) | call p99 %d ticks | msgs %d lost %d | spikes %d | %s",
		iv.Time.Format("15:04:05"), iv.Variant, iv.Reader, iv.Seq,
		report.Microseconds(iv.WakeupLatency.Ns(results.P99)), report.Microseconds(iv.WakeupLatency.Ns(results.Max)),
		report.Microseconds(float64(l.worst)), l.worstAt.Format("15:04:05"), iv.PerCallTicks.P99Ticks, iv.Messages, iv.Lost, iv.Spikes, proc)
	if iv.Mark != "" {
		line += " | MARKED: " + iv.Mark
	}
	if l.tty {
		fmt.Fprintf(l.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(l.w, line)
	}
	l.printed = true
}

func (l *liveLine) done() {
	if l.tty && l.printed {
		fmt.Fprintln(l.w)
	}
}

// printSizing says how many processes a baseline like this run needs for
// a check to detect a 5% or a 10% change (verdict.Sizing), from the
// run's one-run Result (nil: nothing to say).
func printSizing(w io.Writer, res *compare.Result) {
	if res == nil {
		return
	}
	lines := verdict.Sizing(res, compare.DefaultThreshold, verdict.DefaultLooks)
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
