// Package verdict owns rtload's gates: judging the headline metrics of a
// comparison three ways (slower, not slower, undecided; or cannot judge),
// check's sequential looks at fresh processes and their stop rule, and
// the exit code of each verdict (k6's way: the code is the verdict's
// own, Verdict.ExitCode, not a string mapped back by the command).
//
// compare keeps the model (columns, metrics and their samples); a look
// reads only compare.Headlines, never the metadata, differences or
// profiles a person reads. The statistics are package stats'. The marks
// that make a run unjudgeable are results' (Unjudgeable).
//
// The core, from a parsed check to its exit code, reads in this order:
// verdict.go (the types), judge.go (Judge, Unjudgeable, the tail guard),
// adjust.go (a change adjusted on the drift controls), replace.go (the
// processes the machine disturbed, left out), check.go (a check from its
// baseline to its report: the looks and their stop rule). Beside it:
// sizing.go (what a check can see, printed before it runs) and text.go
// (the gate's and the check's views).
package verdict

import (
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/stats"
)

// Verdict is a gate's answer: NotSlower, Slower, Undecided or
// CannotJudge. Only a proven "not slower" passes; "not shown to be
// slower" is undecided.
type Verdict string

// Verdicts of a gate (Gate.Verdict, Report.Verdict).
const (
	NotSlower   Verdict = "not slower"   // every judged metric's whole CI lies on the better side of +threshold
	Slower      Verdict = "slower"       // a judged metric's whole CI lies beyond +threshold, in the worse direction
	Undecided   Verdict = "undecided"    // neither: more samples (or a larger threshold) could still go either way
	CannotJudge Verdict = "cannot judge" // a run cannot be judged (Gate.Reasons)
)

// Exit codes of a gate (`rtload check`, `rtload compare --fail-on`), so
// that `git bisect run` marks a commit good, bad or skipped.
const (
	ExitNotSlower   = 0   // git bisect: good
	ExitSlower      = 1   // git bisect: bad
	ExitCannotJudge = 125 // undecided or cannot judge; git bisect: skip
)

// ExitCode is the code a gate exits with on v: ExitNotSlower,
// ExitSlower, or ExitCannotJudge (Undecided, CannotJudge, and anything
// else).
func (v Verdict) ExitCode() int {
	switch v {
	case NotSlower:
		return ExitNotSlower
	case Slower:
		return ExitSlower
	}
	return ExitCannotJudge
}

// Options choose what a gate judges and how.
type Options struct {
	// Threshold is the tolerated change as a fraction of the baseline
	// value (0.03 = 3%); 0 means compare.DefaultThreshold.
	Threshold float64
	// Metrics names the headline metrics to judge, by compare.Metric.Name
	// ("mean per-call cost", every unit) or Key ("mean per-call cost
	// (ns)"), case-insensitive; empty judges the primary metric of every
	// column (compare.Primary: mean per-call cost in ns, a timer-only
	// reader's wakeup latency p99, a probe's first metric).
	Metrics []string
	// Level is the per-metric confidence level of the intervals judged; 0
	// means stats.FamilyLevel(m) for m judged metrics (Bonferroni: the
	// family-wise false-alarm rate stays at 5%). A check's looks pass
	// their own (Pocock over the looks: stats.Stop.Level).
	Level float64
	// GrowBaseline says the baseline side can still take more units (a
	// compare); a check's cannot, so MoreUnits counts only new processes.
	GrowBaseline bool
	// Control is the drift control per-call costs are adjusted on
	// (adjust.go): ControlNull (the zero value), ControlLoop, or
	// ControlNone to judge the raw change.
	Control Control
	// Estimator, when set, is the change judged for each metric instead
	// (Raw: the metric's own samples', whatever Control says). A spike
	// rate is always judged on its own counts (judge.go).
	Estimator Estimator
	// TailThreshold is the growth of a spike rate the tail guard
	// tolerates (1 = +100%, a doubling); 0 means DefaultTailThreshold.
	// SpikeThreshold is the wakeup latency past which a reader without a
	// readers[].threshold counts spikes for the gate; 0 means
	// DefaultSpikeThreshold (judge.go).
	TailThreshold  float64
	SpikeThreshold time.Duration
	// Machine is the comparison's machine lines (compare.Result.Machine):
	// the machine guard reads the user loop of the metric's run there
	// (adjust.go); JudgeRuns and a check's looks set it.
	Machine []compare.Machine
}

// threshold is o's threshold, its default filled in.
func (o Options) threshold() float64 {
	if o.Threshold == 0 {
		return compare.DefaultThreshold
	}
	return o.Threshold
}

// CompareOptions are the options of the comparison a gate with o judges
// (compare.Headlines, facts.CompareWith): its threshold and the spike
// threshold of readers without their own.
func (o Options) CompareOptions() compare.Options {
	return compare.Options{Threshold: o.Threshold, SpikeThreshold: o.spikeThreshold()}
}

// An Estimator is the change a gate judges for one metric at a two-sided
// confidence level, in place of the adjusted change Options.Control
// chooses. Raw is the metric's own samples' change.
type Estimator func(m *compare.Metric, level float64) stats.Change

// Raw is the change of m's own samples (compare.Metric.ChangeAt).
func Raw(m *compare.Metric, level float64) stats.Change { return m.ChangeAt(level) }

// Gate is the verdict of a gate over the headline metrics of a comparison.
type Gate struct {
	Verdict      Verdict `json:"verdict"`
	ThresholdPct float64 `json:"threshold_pct"`
	// Level is the per-metric confidence level the metrics were judged at
	// (FamilyLevel over the judged metrics, or a check's look's).
	Level float64 `json:"level"`
	// Reasons say why the runs cannot be judged (Unjudgeable), when the
	// verdict is CannotJudge.
	Reasons []string `json:"reasons,omitempty"`
	// Marked are the new run's marks that are the workload's own (a
	// reader starved by the run's own threads: a fresh process would
	// repeat them), when a metric was proven slower all the same: such a
	// run is never a pass, but what it proves slower is the code under
	// test's (JudgeMarked). Empty otherwise.
	Marked []string `json:"marked,omitempty"`
	// Slower names the metrics slower beyond the threshold ("mean per-call
	// cost (ns) recvfrom/new").
	Slower []string `json:"slower,omitempty"`
	// Metrics are every headline metric the gate judged, baselines left
	// out.
	Metrics []Metric `json:"metrics"`
}

// ExitCode is the code the gate exits with (Verdict.ExitCode).
func (g Gate) ExitCode() int { return g.Verdict.ExitCode() }

// Metric is one headline metric of one column as a gate judged it. Its
// change and confidence interval are Interval's, the one shape of a
// change with its interval (compare.Interval), at the gate's level.
type Metric struct {
	Name           string  `json:"name"`
	Unit           string  `json:"unit"`
	HigherIsBetter bool    `json:"higher_is_better,omitempty"`
	Column         string  `json:"column"`
	Baseline       string  `json:"baseline"`
	Value          float64 `json:"value"`
	BaselineValue  float64 `json:"baseline_value"`
	// Verdict is the three-way verdict at the gate's level: slower, not
	// slower, same or undecided (stats.Decide; compare.Verdict*), against
	// ThresholdPct.
	Verdict string `json:"verdict"`
	// Judged is the gate's word: JudgedSlower, JudgedNotSlower, or
	// JudgedUndecided and why ("undecided: <method note>"); for a spike
	// rate (Tail) also JudgedTailClear.
	Judged string `json:"judged"`
	// ThresholdPct is the change this metric was read against: the gate's
	// threshold, or for a spike rate the tail guard's (Tail).
	ThresholdPct float64 `json:"threshold_pct"`
	// Tail marks a metric the tail guard judged (judge.go): a spike rate,
	// or a wakeup latency p99 that is not its column's primary metric.
	Tail bool `json:"tail,omitempty"`
	// Interval, Variance, MinDetectablePct and MoreUnits as
	// compare.Metric has them, at the gate's level.
	Interval         *compare.Interval `json:"interval,omitempty"`
	Variance         *compare.Variance `json:"variance,omitempty"`
	MinDetectablePct *float64          `json:"min_detectable_pct,omitempty"`
	MoreUnits        *int              `json:"more_units,omitempty"`
	MethodNote       string            `json:"method_note"`
	// Adjustment is how the metric was read against its drift controls
	// (the raw change beside the adjusted one, θ, r, the entry-change
	// rule); nil for a metric without controls or under ControlNone.
	Adjustment *Adjustment `json:"adjustment,omitempty"`
}

// Judgements of a Metric.
const (
	JudgedSlower    = "slower beyond threshold"
	JudgedNotSlower = "not slower"
	JudgedUndecided = "undecided"
	// JudgedTailClear: a spike rate not shown higher than the baseline's
	// (its interval reaches no change, or neither side had a spike): the
	// tail guard does not hold the gate (judge.go).
	JudgedTailClear = "tail clear"
)
