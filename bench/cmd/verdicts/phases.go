package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// bench runs a plan's steps.
type bench struct {
	p   Plan
	r   *runner
	dir string
}

// A series is one line of checks: A/A against a baseline, or a power
// change against the recommended baseline.
type series struct {
	// Key names its steps (checks/<key>-01 …) and its phase.
	Key   string
	Title string
	// Base is the baseline's step and directory name (base, base-default).
	Base string
	// Change is the power change (nil: A/A); Scenario its candidate
	// scenario file under the bench directory.
	Change   *pick
	Scenario string
	N        int
}

// series are the plan's check series, in the order each round runs
// them; medium and large are the power changes (nil: not picked yet).
func (p Plan) series(medium, large *pick) []series {
	var out []series
	if p.has("aa") {
		out = append(out, series{Key: "aa", Title: "A/A against the recommended baseline", Base: "base", N: p.AA})
	}
	if p.has("medium") {
		out = append(out, series{Key: "medium", Title: "power: the +8–15% change", Base: "base", Change: medium, Scenario: "scenarios/medium.yaml", N: p.Medium})
	}
	if p.has("aa-default") {
		out = append(out, series{Key: "aa-default", Title: "A/A against the default baseline", Base: "base-default", N: p.AADefault})
	}
	if p.has("large") {
		out = append(out, series{Key: "large", Title: "power: the +25% change", Base: "base", Change: large, Scenario: "scenarios/large.yaml", N: p.Large})
	}
	return out
}

// checkName is the step name of series s's check i (1-based).
func checkName(key string, i int) string { return fmt.Sprintf("checks/%s-%02d", key, i) }

func (b *bench) path(rel string) string { return filepath.Join(b.dir, rel) }

// run runs the plan: true sizes first (the power changes are picked from
// them), the interleaved figures, the baselines, then every series'
// checks in rounds (check i of every series, in an order reversed every
// other round, so that a drift of the machine over the hours weighs on
// every series alike).
func (b *bench) run() error {
	var medium, large *pick
	if b.p.has("truesize") {
		if err := b.trueSize(); err != nil {
			return err
		}
	}
	if b.p.has("medium") || b.p.has("large") {
		var err error
		if medium, large, err = b.picks(); err != nil {
			return err
		}
	}
	if b.p.has("interleave") {
		if _, err := b.r.run(stepSpec{name: "interleave", ext: ".md.log", timeout: b.p.interleaveTimeout(), clear: []string{b.path("interleave")},
			argv: b.interleaveArgv()}); err != nil {
			return err
		}
	}
	if !b.p.checks() {
		return nil
	}
	ok, err := b.baselines()
	if err != nil {
		return err
	}
	for _, c := range checkOrder(b.p.series(medium, large)) {
		if !ok[c.s.Base] {
			continue
		}
		if _, err := b.r.run(b.checkStep(c.s, c.i)); err != nil {
			return err
		}
	}
	return nil
}

// planned is check i (1-based) of series s.
type planned struct {
	s series
	i int
}

// checkOrder is the order the checks run in: round i takes check i of
// every series that has one, in the series' order in even rounds and in
// reverse in odd ones (ABBA over rounds).
func checkOrder(all []series) []planned {
	rounds := 0
	for _, s := range all {
		rounds = max(rounds, s.N)
	}
	var out []planned
	for i := range rounds {
		for k := range all {
			s := all[k]
			if i%2 == 1 {
				s = all[len(all)-1-k]
			}
			if i < s.N {
				out = append(out, planned{s, i + 1})
			}
		}
	}
	return out
}

// trueSize writes the true-size scenario and runs it.
func (b *bench) trueSize() error {
	var ladder []change
	for _, n := range b.p.Ladder {
		c, err := parseChange(n)
		if err != nil {
			return err
		}
		ladder = append(ladder, c)
	}
	y, err := truesizeScenario(ladder)
	if err != nil {
		return err
	}
	if err := b.writeScenario("scenarios/truesize.yaml", y); err != nil {
		return err
	}
	argv := []string{b.p.RTLoad, "run", b.path("scenarios/truesize.yaml"), "--processes", strconv.Itoa(b.p.TrueProcesses)}
	argv = append(append(argv, b.p.RunFlags...), "-q", "--out", b.path("truesize"))
	_, err = b.r.run(stepSpec{name: "truesize", ext: ".out", timeout: runTimeout(b.p.TrueProcesses), clear: []string{b.path("truesize")}, argv: argv})
	return err
}

// picks chooses the power changes from the true-size run and writes
// their candidate scenarios.
func (b *bench) picks() (medium, large *pick, err error) {
	sizes, err := trueSizes(b.path("truesize"), b.p.Ladder)
	if err != nil && (b.p.MediumChange == "" || b.p.LargeChange == "") {
		return nil, nil, fmt.Errorf("power changes: %w (run the truesize part, or name both with -medium-change and -large-change)", err)
	}
	if err != nil { // both named: their true sizes are simply unknown
		sizes = nil
		for _, n := range []string{b.p.MediumChange, b.p.LargeChange} {
			sizes = append(sizes, trueSize{Change: n})
		}
	}
	medium, large, perr := pickChanges(sizes, b.p.MediumChange, b.p.LargeChange)
	if medium == nil || large == nil {
		return nil, nil, perr
	}
	for _, x := range []struct {
		p    *pick
		file string
	}{{medium, "scenarios/medium.yaml"}, {large, "scenarios/large.yaml"}} {
		c, err := parseChange(x.p.Size.Change)
		if err != nil {
			return nil, nil, err
		}
		y, err := candidateScenario(c)
		if err != nil {
			return nil, nil, err
		}
		if err := b.writeScenario(x.file, y); err != nil {
			return nil, nil, err
		}
	}
	return medium, large, nil
}

func (b *bench) writeScenario(rel string, y []byte) error {
	if err := os.MkdirAll(filepath.Dir(b.path(rel)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(b.path(rel), y, 0o644)
}

func (b *bench) interleaveArgv() []string {
	return []string{b.p.Interleave, "-rtload", b.p.RTLoad, "-only", "seed,aa", "-keep", b.path("interleave"),
		"-json", b.path("interleave.json"), "-out", b.path("interleave.md"),
		"-seed", b.p.ILSeed.String(), "-aa", strconv.Itoa(b.p.ILAA), "-aa-duration", b.p.ILAADuration.String()}
}

// recommended matches the processes a one-process run's sizing line asks
// of a baseline ("a baseline for rtload check wants rtload run
// --processes 10 (or more)").
var recommended = regexp.MustCompile(`sizing: .*rtload run --processes ([0-9]+)`)

// baseProcesses is the recommended baseline's size: -base-processes, else
// what the default run's sizing line recommends, else basePlanned; why
// says which.
func (b *bench) baseProcesses() (n int, why string) {
	if b.p.BaseProcesses > 0 {
		return b.p.BaseProcesses, "-base-processes"
	}
	out, err := os.ReadFile(b.path("base-default.out"))
	if err == nil {
		if m := recommended.FindSubmatch(out); m != nil {
			if n, err := strconv.Atoi(string(m[1])); err == nil && n >= 2 {
				return n, "as the default run's sizing line recommends"
			}
		}
	}
	return basePlanned, fmt.Sprintf("the default run's output had no sizing line recommending a size: %d assumed", basePlanned)
}

// baselines runs the default baseline (rtload run as make run runs it)
// and the recommended one; ok says which finished with exit 0 (checks
// against a failed baseline are not run).
func (b *bench) baselines() (map[string]bool, error) {
	ok := map[string]bool{}
	argv := append([]string{b.p.RTLoad, "run"}, b.p.RunFlags...)
	argv = append(argv, "-q", "--out", b.path("base-default"))
	s, err := b.r.run(stepSpec{name: "base-default", ext: ".out", timeout: runTimeout(1), clear: []string{b.path("base-default")}, argv: argv})
	if err != nil {
		return nil, err
	}
	ok["base-default"] = s.ExitCode == 0
	if !(b.p.has("aa") || b.p.has("medium") || b.p.has("large")) {
		return ok, nil
	}
	n, _ := b.baseProcesses()
	argv = append([]string{b.p.RTLoad, "run", "--processes", strconv.Itoa(n)}, b.p.RunFlags...)
	argv = append(argv, "-q", "--out", b.path("base"))
	s, err = b.r.run(stepSpec{name: "base", ext: ".out", timeout: runTimeout(n), clear: []string{b.path("base")}, argv: argv})
	if err != nil {
		return nil, err
	}
	ok["base"] = s.ExitCode == 0
	return ok, nil
}

// checkStep is check i of series s: the check's defaults unless -budget
// or -looks; a power check names its candidate scenario and gets the run
// flags the baseline got (an A/A check runs the baseline's own scenario,
// as recorded, flags included).
func (b *bench) checkStep(s series, i int) stepSpec {
	name := checkName(s.Key, i)
	argv := []string{b.p.RTLoad, "check", b.path(s.Base)}
	if s.Scenario != "" {
		argv = append(argv, b.path(s.Scenario))
	}
	argv = append(argv, "--trust-baseline", "-q", "--format", "json", "--out", b.path(name))
	if b.p.Budget > 0 {
		argv = append(argv, "--budget", b.p.Budget.String())
	}
	if b.p.Looks > 0 {
		argv = append(argv, "--looks", strconv.Itoa(b.p.Looks))
	}
	if s.Scenario != "" {
		argv = append(argv, b.p.RunFlags...)
	}
	return stepSpec{name: name, ext: ".json", timeout: b.p.checkTimeout(), clear: []string{b.path(name)}, argv: argv}
}

// errNoStep is a step the directory has no record of.
var errNoStep = errors.New("not run")

// stepTook is the wall time of the named steps together.
func stepTook(steps map[string]Step, names ...string) time.Duration {
	var d time.Duration
	for _, n := range names {
		if s, ok := steps[n]; ok {
			d += s.Took()
		}
	}
	return d
}
