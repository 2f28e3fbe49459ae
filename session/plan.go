package session

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/compare/auto"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/scenario"
)

// Overrides are a command's typed changes to its scenario, applied after
// the scenario's own values. Each goes in under the flag that gave it, so
// that a bad value is blamed on what the user typed (--duration 2:
// "--duration: invalid duration", not "--set duration"); then Sets, which
// win. The zero value changes nothing.
type Overrides struct {
	// Duration (--duration) is a Go duration, or "forever" (a soak).
	Duration string
	// Interval (--interval) is a Go duration.
	Interval string
	// Rounds (--rounds) is a count or "auto".
	Rounds string
	// Repeat (--repeat), when given, is the rounds per process (1–MaxRounds).
	Repeat *int
	// Processes (--processes), when given, replaces the scenario's.
	Processes *int
	// Profile (--profile) adds a profiled trial after each variant's.
	Profile bool
	// Sets are --set's path=value entries, in the order given.
	Sets []string
	// Check applies check's own settings, named "check" (not listed as the
	// user's --set in the plan): fresh processes up to
	// verdict.MaxProcesses, never profiled.
	Check bool
	// CheckProcesses is the process count Check sets.
	CheckProcesses int
	// Auto are rounds: auto's flags.
	Auto AutoOverrides
}

// AutoOverrides are rounds: auto's flags: --precision (a percentage),
// --max-rounds and --max-time, and which of them were given (Given,
// "--precision", …: refused without rounds: auto).
type AutoOverrides struct {
	Precision string
	MaxRounds int
	MaxTime   time.Duration
	Given     []string
}

// Plan is what a session runs: the scenario with its overrides applied,
// validated for this machine, and its trials.
type Plan struct {
	Spec   *scenario.Spec
	Trials []scenario.Trial
	// Auto is the stopping rule of a rounds: auto run; nil otherwise.
	Auto *auto.Rule
}

// Load plans a run of the scenario name (a file or a built-in, ReadSpec)
// with ov.
func Load(name string, ov Overrides) (*Plan, error) {
	spec, err := ReadSpec(name)
	if err != nil {
		return nil, err
	}
	return NewPlan(spec, ov)
}

// NewPlan applies ov to spec, validates it for this machine and expands
// its trials.
func NewPlan(spec *scenario.Spec, ov Overrides) (*Plan, error) {
	if err := ov.apply(spec); err != nil {
		return nil, err
	}
	if err := spec.Validate(ThisHost()); err != nil {
		return nil, err
	}
	if spec.Rounds != scenario.RoundsAuto {
		if len(ov.Auto.Given) > 0 {
			return nil, UsageError{fmt.Errorf("%s: only with rounds: auto (--rounds auto)", strings.Join(ov.Auto.Given, ", "))}
		}
		trials, err := spec.Expand()
		if err != nil {
			return nil, err
		}
		return &Plan{Spec: spec, Trials: trials}, nil
	}
	rule, err := ov.Auto.rule()
	if err != nil {
		return nil, err
	}
	trials, err := spec.ExpandRounds(rule.MaxRounds)
	if err != nil {
		return nil, err
	}
	return &Plan{Spec: spec, Trials: trials, Auto: &rule}, nil
}

// flagSet is one override as the flag that gave it.
type flagSet struct{ flag, path, value string }

// flags are ov's overrides but Sets, each under its flag.
func (ov Overrides) flags() ([]flagSet, error) {
	var flags []flagSet
	if ov.Processes != nil {
		flags = append(flags, flagSet{"--processes", "processes", strconv.Itoa(*ov.Processes)})
	}
	if ov.Rounds != "" {
		flags = append(flags, flagSet{"--rounds", "rounds", ov.Rounds})
	}
	if r := ov.Repeat; r != nil {
		if *r < 1 || *r > scenario.MaxRounds {
			return nil, UsageError{fmt.Errorf("--repeat %d out of range (allowed: 1–%d)", *r, scenario.MaxRounds)}
		}
		if ov.Rounds != "" {
			return nil, UsageError{fmt.Errorf("--repeat and --rounds: give one")}
		}
		flags = append(flags, flagSet{"--repeat", "rounds", strconv.Itoa(*r)}, flagSet{"--repeat", "repeat", strconv.Itoa(*r)})
	}
	if ov.Profile {
		flags = append(flags, flagSet{"--profile", "profile.enabled", "true"})
	}
	if ov.Interval != "" {
		flags = append(flags, flagSet{"--interval", "interval", ov.Interval})
	}
	if d := ov.Duration; d != "" {
		if d == "forever" {
			d = "0"
		}
		flags = append(flags, flagSet{"--duration", "duration", d})
	}
	return flags, nil
}

// apply applies ov to spec, every problem in one list.
func (ov Overrides) apply(spec *scenario.Spec) error {
	flags, err := ov.flags()
	if err != nil {
		return err
	}
	var errs scenario.ErrorList
	collect := func(err error) {
		var el scenario.ErrorList
		if errors.As(err, &el) {
			errs = append(errs, el...)
		}
	}
	for _, fl := range flags {
		collect(spec.ApplyFlag(fl.flag, fl.path, fl.value))
	}
	collect(spec.Apply(ov.Sets))
	if ov.Check {
		collect(spec.ApplyFlag("check", "profile.enabled", "false"))
		collect(spec.ApplyFlag("check", "processes", strconv.Itoa(ov.CheckProcesses)))
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// rule reads rounds: auto's flags.
func (a AutoOverrides) rule() (auto.Rule, error) {
	p, err := ParsePercent("precision", a.Precision)
	if err != nil {
		return auto.Rule{}, err
	}
	if a.MaxRounds < 2 || a.MaxRounds > scenario.MaxRounds {
		return auto.Rule{}, UsageError{fmt.Errorf("--max-rounds %d out of range (allowed: 2–%d)", a.MaxRounds, scenario.MaxRounds)}
	}
	if a.MaxTime < 0 {
		return auto.Rule{}, UsageError{fmt.Errorf("--max-time %v: not negative", a.MaxTime)}
	}
	return auto.Rule{Precision: p, MaxRounds: a.MaxRounds, MaxTime: a.MaxTime}, nil
}

// ParsePercent reads a percentage flag's value ("3%", "3") as a fraction
// (0.03); a usage error names the flag.
func ParsePercent(flag, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || !(v > 0 && v < 100) {
		return 0, UsageError{fmt.Errorf("--%s %q: a percentage above 0 and below 100, e.g. 3%%", flag, s)}
	}
	return v / 100, nil
}

// printPlan says what the run will do before it starts: the scenario's
// name and description, and what --set changed (the description is the
// scenario's own: "reader on CPU 1" stays in it after --set
// readers[0].cpu=0).
func printPlan(out io.Writer, spec *scenario.Spec, trials int, auto *auto.Rule, sequential bool) {
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
