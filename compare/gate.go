package compare

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/stats"
)

// Gate verdicts: `rtload check` and `rtload compare --fail-on` exit 0, 1
// and 125 on them (cmd/rtload/exit.go). Only a proven "not slower" passes;
// "not shown to be slower" is undecided.
const (
	GateNotSlower   = "not slower"   // every judged metric's whole CI lies on the better side of +threshold
	GateSlower      = "slower"       // a judged metric's whole CI lies beyond +threshold, in the worse direction
	GateUndecided   = "undecided"    // neither: more samples (or a larger threshold) could still go either way
	GateCannotJudge = "cannot judge" // a run cannot be judged (Gate.Reasons)
)

// DefaultThreshold is the change a gate tolerates: 3% of the baseline.
const DefaultThreshold = 0.03

// GateOptions choose what a gate judges.
type GateOptions struct {
	// Threshold is the tolerated change as a fraction of the baseline
	// value (0.03 = 3%); 0 means DefaultThreshold.
	Threshold float64
	// Metrics names the headline metrics to judge, by Metric.Name ("mean
	// per-call cost", every unit) or "name (unit)" ("mean per-call cost
	// (ns)"), case-insensitive; empty judges the primary metric of every
	// column (Result.Primary: mean per-call cost in ns, a timer-only
	// reader's wakeup latency p99, a probe's first metric).
	Metrics []string
	// Level is the per-metric confidence level of the intervals judged; 0
	// means stats.FamilyLevel(m) for m judged metrics (Bonferroni: the
	// family-wise false-alarm rate stays at 5%). A sequential check passes
	// its look's level (stats.Stop.Level).
	Level float64
	// GrowBaseline says the baseline side can still take more units (a
	// compare); a check's cannot, so MoreUnits counts only new processes.
	GrowBaseline bool
}

// GateMetric is one headline metric of one column as a gate saw it.
type GateMetric struct {
	Name          string  `json:"name"`
	Unit          string  `json:"unit"`
	Column        string  `json:"column"`
	Baseline      string  `json:"baseline"`
	Value         float64 `json:"value"`
	BaselineValue float64 `json:"baseline_value"`
	// ChangePct is the change of the value against the baseline in %;
	// CILowPct and CIHighPct the CI of the change in % at the gate's
	// level (Interval.Level), nil without an interval.
	ChangePct *float64 `json:"change_pct,omitempty"`
	CILowPct  *float64 `json:"ci_low_pct,omitempty"`
	CIHighPct *float64 `json:"ci_high_pct,omitempty"`
	// Verdict is the three-way verdict at the gate's level: slower, not
	// slower, same or undecided (stats.Decide).
	Verdict string `json:"verdict"`
	// Judged is the gate's word: "slower beyond threshold", "not slower",
	// "undecided: <why>".
	Judged string `json:"judged"`
	// Interval, Variance, MinDetectablePct and MoreUnits as Metric has
	// them, at the gate's level.
	Interval         *Interval `json:"interval,omitempty"`
	Variance         *Variance `json:"variance,omitempty"`
	MinDetectablePct *float64  `json:"min_detectable_pct,omitempty"`
	MoreUnits        *int      `json:"more_units,omitempty"`
	MethodNote       string    `json:"method_note"`
}

// Judgements of a GateMetric.
const (
	JudgedSlower    = "slower beyond threshold"
	JudgedNotSlower = "not slower"
	JudgedUndecided = "undecided"
)

// Gate is the verdict of a gate over a Result.
type Gate struct {
	Verdict      string  `json:"verdict"`
	ThresholdPct float64 `json:"threshold_pct"`
	// Level is the per-metric confidence level the metrics were judged at
	// (FamilyLevel over the judged metrics, or a sequential look's).
	Level float64 `json:"level"`
	// Reasons say why the runs cannot be judged (Unjudgeable), when the
	// verdict is GateCannotJudge.
	Reasons []string `json:"reasons,omitempty"`
	// Slower names the metrics slower beyond the threshold ("mean per-call
	// cost (ns) recvfrom/new").
	Slower []string `json:"slower,omitempty"`
	// Metrics are every headline metric the gate judged, baselines left
	// out.
	Metrics []GateMetric `json:"metrics"`
}

// Unjudgeable lists why the run s (labelled label) cannot serve a
// verdict, from its marks (results.Summary.Marks, the one list): the
// run's own (degraded, its reasons "; "-joined; stopped early;
// incomplete), no trials, then per trial each of TrialMarkKinds it
// holds, quoted by MarkText ("new: trial 2 (recvmsg, round 1): invalid:
// …").
func Unjudgeable(label string, s *results.Summary) []string {
	var out, degraded []string
	for _, m := range s.Marks() {
		switch {
		case m.Trial != nil:
		case m.Kind == results.MarkDegraded:
			degraded = append(degraded, m.Text)
		default:
			out = append(out, label+": "+m.Kind.Phrase()+": "+m.Text)
		}
	}
	if len(degraded) > 0 {
		out = append([]string{label + ": " + results.MarkDegraded.Phrase() + ": " + strings.Join(degraded, "; ")}, out...)
	}
	if len(s.Trials) == 0 {
		out = append(out, label+": no trials")
	}
	for i := range s.Trials {
		t := &s.Trials[i]
		for _, k := range TrialMarkKinds {
			if m := MarkText(k, t); m != "" {
				out = append(out, fmt.Sprintf("%s: %s: %s", label, t.Name(), m))
			}
		}
	}
	return out
}

// Judge gates res: GateCannotJudge when reasons is not empty (each says
// why a run cannot be judged, see Unjudgeable); else each judged metric
// (opt.Metrics, or every column's primary metric) gets stats.Decide's
// verdict on its change recomputed at the gate's level (opt.Level, or the
// Bonferroni FamilyLevel over the judged metrics): GateSlower when one is
// proven slower beyond the threshold, GateNotSlower when every one is
// proven not slower, GateUndecided otherwise (an interval that straddles
// the threshold, a metric without an interval, an invalid trial). It
// fails when opt names a metric res does not have.
func Judge(res *Result, reasons []string, opt GateOptions) (Gate, error) {
	thr := opt.Threshold
	if thr == 0 {
		thr = DefaultThreshold
	}
	g := Gate{ThresholdPct: thr * 100, Reasons: reasons, Metrics: []GateMetric{}}
	for _, name := range opt.Metrics {
		if !slices.ContainsFunc(res.Metrics, func(m Metric) bool { return selected(m, []string{name}) }) {
			return g, fmt.Errorf("gate: no headline metric %q (have: %s)", name, strings.Join(res.metricNames(), ", "))
		}
	}
	prim := res.Primary()
	var judged []int
	for i, m := range res.Metrics {
		if m.Verdict == VerdictBaseline {
			continue
		}
		if (len(opt.Metrics) > 0 && selected(m, opt.Metrics)) || (len(opt.Metrics) == 0 && prim[i]) {
			judged = append(judged, i)
		}
	}
	g.Level = opt.Level
	if g.Level == 0 {
		g.Level = stats.FamilyLevel(len(judged))
	}
	grow := stats.GrowB
	if opt.GrowBaseline {
		grow = stats.GrowBoth
	}
	slower, notSlower := 0, 0
	for _, i := range judged {
		m := res.Metrics[i]
		gm := GateMetric{Name: m.Name, Unit: m.Unit, Column: m.Column, Baseline: m.Baseline, Value: m.Value,
			BaselineValue: m.BaselineValue, ChangePct: m.ChangePct, Variance: m.Variance}
		at := m
		if at.a != nil || at.ra != nil {
			setChange(&at, at.changeOf(g.Level), thr)
			at.lagNote()
			if at.MoreUnits != nil || at.Verdict == VerdictUndecided {
				at.MoreUnits = nil
				if c := at.changeOf(g.Level); c.Defined() && c.Unit != "event" {
					if k, ok := stats.MoreSamplesNeeded(c, thr, m.HigherIsBetter, stats.DefaultPower, grow); ok && k > 0 {
						at.MoreUnits = &k
					}
				}
			}
		}
		if m.invalid {
			at.Verdict = VerdictUndecided
			at.MethodNote = m.MethodNote
		}
		gm.Interval, gm.MinDetectablePct, gm.MoreUnits, gm.MethodNote = at.Interval, at.MinDetectablePct, at.MoreUnits, at.MethodNote
		if at.Interval != nil {
			gm.CILowPct, gm.CIHighPct = at.Interval.LowPct, at.Interval.HighPct
		}
		gm.Verdict = at.Verdict
		switch at.Verdict {
		case VerdictSlower:
			slower++
			gm.Judged = JudgedSlower
			g.Slower = append(g.Slower, metricKey(m)+" "+m.Column)
		case VerdictNotSlower, VerdictSame:
			notSlower++
			gm.Judged = JudgedNotSlower
		default:
			gm.Judged = JudgedUndecided + ": " + at.MethodNote
		}
		g.Metrics = append(g.Metrics, gm)
	}
	switch {
	case len(g.Reasons) > 0:
		g.Verdict = GateCannotJudge
	case len(judged) == 0:
		g.Verdict = GateUndecided
		g.Reasons = append(g.Reasons, "no headline metric to judge")
	case slower > 0:
		g.Verdict = GateSlower
	case notSlower == len(judged):
		g.Verdict = GateNotSlower
	default:
		g.Verdict = GateUndecided
	}
	return g, nil
}

// selected reports whether m is one of names (Metric.Name or "name
// (unit)", case-insensitive).
func selected(m Metric, names []string) bool {
	for _, n := range names {
		n = strings.TrimSpace(n)
		if strings.EqualFold(n, m.Name) || strings.EqualFold(n, metricKey(m)) {
			return true
		}
	}
	return false
}

// Text writes the gate's verdict: one line, then one line per judged
// metric (its three-way verdict, CI, n, smallest detectable change and
// the samples that would decide it) and per reason it cannot judge.
func (g Gate) Text(w io.Writer) error {
	g = termsafe.Copy(g) // strings from results, escaped for the terminal
	var b strings.Builder
	slower, notSlower, n := g.judgedCounts()
	undecided := n - slower - notSlower
	level := levelPct(g.Level)
	if n > 1 {
		level += " each, 95% family-wise"
	}
	counts := fmt.Sprintf("%d slower, %d not slower, %d undecided at +%s%% (CI %s)", slower, notSlower, undecided, fmtPct(g.ThresholdPct), level)
	switch g.Verdict {
	case GateNotSlower:
		fmt.Fprintf(&b, "gate: NOT SLOWER: every judged metric is proven not slower beyond +%s%% (%s)\n", fmtPct(g.ThresholdPct), counts)
	case GateSlower:
		fmt.Fprintf(&b, "gate: SLOWER: %d judged metric(s) proven slower beyond +%s%%, the whole CI beyond it (%s)\n", slower, fmtPct(g.ThresholdPct), counts)
	case GateUndecided:
		fmt.Fprintf(&b, "gate: UNDECIDED: not proven slower, not proven not slower (%s): more samples or a larger --threshold\n", counts)
	default:
		b.WriteString("gate: CANNOT JUDGE")
		if n > 0 {
			fmt.Fprintf(&b, " (%s)", counts)
		}
		b.WriteByte('\n')
	}
	for _, m := range g.Metrics {
		fmt.Fprintf(&b, "  %s\n", VerdictLine(Metric{Name: m.Name, Unit: m.Unit, Column: m.Column, Verdict: m.Verdict, Interval: m.Interval,
			MinDetectablePct: m.MinDetectablePct, MoreUnits: m.MoreUnits, MethodNote: m.MethodNote}, g.ThresholdPct))
	}
	for _, r := range g.Reasons {
		fmt.Fprintf(&b, "  cannot judge: %s\n", r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtPct(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

func pctOr(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", *p)
}

// judgedCounts is how many of g's judged metrics are proven slower and
// proven not slower, of n judged; the rest are undecided.
func (g Gate) judgedCounts() (slower, notSlower, n int) {
	for _, m := range g.Metrics {
		switch m.Judged {
		case JudgedSlower:
			slower++
		case JudgedNotSlower:
			notSlower++
		}
	}
	return slower, notSlower, len(g.Metrics)
}
