package compare

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
)

// Gate verdicts: `rtload check` and `rtload compare --fail-on` exit 0, 1
// and 125 on them (cmd/rtload/exit.go).
const (
	GatePass        = "pass"         // no judged metric is slower beyond the threshold
	GateSlower      = "slower"       // one is: its whole CI lies beyond the threshold
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
	// (ns)"), case-insensitive; empty judges every one that has a CI.
	Metrics []string
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
	// CILowPct and CIHighPct the 95% CI of the difference in % of the
	// baseline value (nil without an interval or with a zero baseline).
	ChangePct *float64 `json:"change_pct,omitempty"`
	CILowPct  *float64 `json:"ci_low_pct,omitempty"`
	CIHighPct *float64 `json:"ci_high_pct,omitempty"`
	// Verdict is compare's (faster, slower, within noise, n/a).
	Verdict string `json:"verdict"`
	// Judged is the gate's word: "slower beyond threshold", "within
	// threshold" or "not judged: <why>".
	Judged string `json:"judged"`
}

// Judgements of a GateMetric.
const (
	JudgedSlower = "slower beyond threshold"
	JudgedWithin = "within threshold"
)

// Gate is the verdict of a gate over a Result.
type Gate struct {
	Verdict      string  `json:"verdict"`
	ThresholdPct float64 `json:"threshold_pct"`
	// Reasons say why the runs cannot be judged (Unjudgeable), when the
	// verdict is GateCannotJudge.
	Reasons []string `json:"reasons,omitempty"`
	// Slower names the metrics slower beyond the threshold ("mean per-call
	// cost (ns) recvfrom/new").
	Slower []string `json:"slower,omitempty"`
	// Metrics are every headline metric the gate looked at, baselines left
	// out.
	Metrics []GateMetric `json:"metrics"`
}

// Unjudgeable lists why the run s (labelled label) cannot serve a
// verdict: degraded (run without some privilege), stopped early,
// incomplete (a checkpoint of a run that never finished), no trials, and
// per trial an invalid one (the kernel changed what it measured:
// Trial.Invalid) and one whose traffic was not as specified
// (Trial.TrafficNotAsSpecified) or a starved reader (Reader.Starved), one
// reason per marked trial.
func Unjudgeable(label string, s *results.Summary) []string {
	var out []string
	if s.Degraded {
		why := "run without some privileges (--allow-degraded)"
		if len(s.DegradedReasons) > 0 {
			why = strings.Join(s.DegradedReasons, "; ")
		}
		out = append(out, fmt.Sprintf("%s: degraded: %s", label, why))
	}
	if s.Stopped {
		out = append(out, label+": stopped early (interrupted): trials are missing or partial")
	}
	if s.InProgress {
		out = append(out, label+": incomplete: summary.json is a checkpoint of a run that never finished")
	}
	if len(s.Trials) == 0 {
		out = append(out, label+": no trials")
	}
	for _, t := range s.Trials {
		for _, m := range []string{t.Invalid, t.TrafficNotAsSpecified, starvedMark(t)} {
			if m != "" {
				out = append(out, fmt.Sprintf("%s: %s: %s", label, trialName(t), m))
			}
		}
	}
	return out
}

// trialName names trial t for a reason or warning: "trial 3 (recvmsg,
// round 2)", counting from 1.
func trialName(t results.Trial) string {
	v := t.Variant
	if v == "" {
		v = "run"
	}
	return fmt.Sprintf("trial %d (%s, round %d)", t.Index+1, v, t.Round+1)
}

// Judge gates res: GateCannotJudge when reasons is not empty (each says
// why a run cannot be judged, see Unjudgeable) or when no selected metric
// has a confidence interval; GateSlower when a selected metric is worse
// than its baseline by more than the threshold with its whole 95% CI
// beyond it (lower-is-better: CI low > threshold × baseline; higher-is-
// better: CI high < −threshold × baseline), not only its mean; else
// GatePass. A metric without an interval is listed as not judged. It
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
	judged := 0
	for _, m := range res.Metrics {
		if m.Verdict == VerdictBaseline || (len(opt.Metrics) > 0 && !selected(m, opt.Metrics)) {
			continue
		}
		gm := GateMetric{Name: m.Name, Unit: m.Unit, Column: m.Column, Baseline: m.Baseline, Value: m.Value,
			BaselineValue: m.BaselineValue, ChangePct: m.ChangePct, Verdict: m.Verdict}
		switch {
		case m.Verdict == VerdictUndecided:
			gm.Judged = "not judged: undecided (" + m.MethodNote + ")"
			if len(opt.Metrics) > 0 {
				g.Reasons = append(g.Reasons, fmt.Sprintf("%s %s: undecided (%s)", metricKey(m), m.Column, m.MethodNote))
			}
		case m.CILow == nil || m.CIHigh == nil:
			gm.Judged = "not judged: no confidence interval (" + m.MethodNote + ")"
			if len(opt.Metrics) > 0 {
				g.Reasons = append(g.Reasons, fmt.Sprintf("%s %s: no confidence interval (%s)", metricKey(m), m.Column, m.MethodNote))
			}
		default:
			judged++
			lim := thr * math.Abs(m.BaselineValue)
			if m.BaselineValue != 0 {
				gm.CILowPct = ptr(*m.CILow / math.Abs(m.BaselineValue) * 100)
				gm.CIHighPct = ptr(*m.CIHigh / math.Abs(m.BaselineValue) * 100)
			}
			worse := (!m.HigherIsBetter && *m.CILow > lim) || (m.HigherIsBetter && *m.CIHigh < -lim)
			if worse {
				gm.Judged = JudgedSlower
				g.Slower = append(g.Slower, metricKey(m)+" "+m.Column)
			} else {
				gm.Judged = JudgedWithin
			}
		}
		g.Metrics = append(g.Metrics, gm)
	}
	switch {
	case len(g.Reasons) > 0:
		g.Verdict = GateCannotJudge
	case judged == 0:
		g.Verdict = GateCannotJudge
		g.Reasons = append(g.Reasons, "no headline metric has a confidence interval to judge (run rounds ≥ 2, or keep the per-wakeup logs)")
	case len(g.Slower) > 0:
		g.Verdict = GateSlower
	default:
		g.Verdict = GatePass
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

// Text writes the gate's verdict: one line, then one line per metric
// slower beyond the threshold, per reason it cannot judge, and a count of
// the metrics judged within the threshold and not judged.
func (g Gate) Text(w io.Writer) error {
	g = termsafe.Copy(g) // strings from results, escaped for the terminal
	var b strings.Builder
	within, notJudged := 0, 0
	for _, m := range g.Metrics {
		switch m.Judged {
		case JudgedWithin:
			within++
		case JudgedSlower:
		default:
			notJudged++
		}
	}
	counts := fmt.Sprintf("%d within it", within)
	if notJudged > 0 {
		counts += fmt.Sprintf(", %d without a CI not judged", notJudged)
	}
	switch g.Verdict {
	case GatePass:
		fmt.Fprintf(&b, "gate: PASS: no headline metric slower beyond %s%% (%s)\n", fmtPct(g.ThresholdPct), counts)
	case GateSlower:
		fmt.Fprintf(&b, "gate: SLOWER: %d headline metric(s) slower beyond %s%%, the whole 95%% CI beyond it (%s)\n", len(g.Slower), fmtPct(g.ThresholdPct), counts)
	default:
		b.WriteString("gate: CANNOT JUDGE")
		if len(g.Metrics) > 0 {
			fmt.Fprintf(&b, " (threshold %s%%: %s, %d slower)", fmtPct(g.ThresholdPct), counts, len(g.Slower))
		}
		b.WriteByte('\n')
	}
	for _, m := range g.Metrics {
		if m.Judged == JudgedSlower {
			fmt.Fprintf(&b, "  slower: %s (%s) %s: %s against %s, CI of the change [%s, %s]\n", m.Name, m.Unit, m.Column,
				pctOr(m.ChangePct), m.Baseline, pctOr(m.CILowPct), pctOr(m.CIHighPct))
		}
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
