package auto

import (
	"fmt"
	"math"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/stats"
)

// Reasons a rounds: auto run stops (Decision.Reason).
const (
	StopPrecision = "precision reached" // the CI is as narrow as asked
	StopMaxRounds = "max rounds reached"
	StopMaxTime   = "max time reached" // another round would pass it
)

// Defaults of rounds: auto (--precision, --max-rounds, --max-time 0 = none).
const (
	DefaultPrecision = 0.02
	DefaultMaxRounds = 30
)

// Rule is when a rounds: auto run stops: once the 95% CI of the
// headline difference (every variant against the first) is no wider than
// ±Precision of the first variant's mean, or after MaxRounds rounds, or
// before a round that would end past MaxTime (0: no limit). With one
// variant the interval is that of its mean.
type Rule struct {
	Precision float64       // fraction of the baseline: 0.02 = ±2%
	MaxRounds int           // ≥ 2
	MaxTime   time.Duration // 0 = none
}

// Decision is the rule's answer after a round.
type Decision struct {
	Stop bool `json:"stop"`
	// Reason is StopPrecision, StopMaxRounds or StopMaxTime when Stop.
	Reason string `json:"reason,omitempty"`
	// Rounds is the rounds every variant has completed.
	Rounds int `json:"rounds"`
	// HalfWidthPct is the widest half-width, over the variants compared, of
	// the 95% CI of the difference (of the mean, with one variant) in % of
	// the baseline's mean; Worst the variant it belongs to (its index).
	// NaN until two rounds are done, +Inf with a zero baseline.
	HalfWidthPct float64 `json:"-"`
	Worst        int     `json:"worst_variant"`
}

// Stop applies rule to the per-round headline values of each variant
// (values[0] the baseline, in round order, all in one process) after
// elapsed time running: elapsed/rounds predicts the next round's
// duration. A variant with fewer rounds bounds Rounds. The rule is
// stats.Stop on precision alone (which needs no sequential correction):
// it never stops on precision before two rounds.
func Stop(values [][]float64, elapsed time.Duration, rule Rule) Decision {
	d := Decision{HalfWidthPct: math.NaN()}
	if len(values) == 0 {
		return d
	}
	d.Rounds = len(values[0])
	for _, v := range values[1:] {
		d.Rounds = min(d.Rounds, len(v))
	}
	stop := stats.Stop{MinLooks: 2, MaxLooks: rule.MaxRounds, Precision: math.Max(rule.Precision, 1e-12)}
	var changes []stats.Change
	if d.Rounds >= 2 {
		d.HalfWidthPct, d.Worst, changes = halfWidthPct(values)
	}
	if rule.Precision < 0 {
		changes = nil // no metric: only the limits stop it
	}
	if s, reason := stop.Next(d.Rounds, changes, nil); s {
		d.Stop, d.Reason = true, StopMaxRounds
		if reason == stats.StopPrecise {
			d.Reason = StopPrecision
		}
		return d
	}
	if rule.MaxTime > 0 && d.Rounds > 0 && elapsed+elapsed/time.Duration(d.Rounds) > rule.MaxTime {
		d.Stop, d.Reason = true, StopMaxTime
	}
	return d
}

// halfWidthPct is the widest CI half-width in % (stats.Change.HalfWidth:
// each variant against values[0], t on per-round logs; the interval of
// the geometric mean with one variant), the variant it belongs to, and
// the changes.
func halfWidthPct(values [][]float64) (float64, int, []stats.Change) {
	if len(values) == 1 {
		c, err := stats.RatioCI(values[0], stats.Level)
		if err != nil || len(values[0]) < 2 {
			return math.Inf(1), 0, []stats.Change{stats.Undefined("no interval")}
		}
		// The geometric mean's interval as a change of it from itself.
		ch := stats.CI{N: c.N, Level: c.Level, Center: 1, Lo: c.Lo / c.Center, Hi: c.Hi / c.Center}.Change()
		return ch.HalfWidth() * 100, 0, []stats.Change{ch}
	}
	worst, at := -1.0, 1
	var cs []stats.Change
	for i, v := range values[1:] {
		c := stats.Nested([][]float64{values[0]}, [][]float64{v})
		cs = append(cs, c)
		if hw := c.HalfWidth() * 100; hw > worst {
			worst, at = hw, i+1
		}
	}
	return worst, at, cs
}

// Headline is the metric a rounds: auto run stops on, and its per-round
// values per column (the first the baseline), from s as it stands: the
// first headline metric compare finds (mean per-call cost for readers
// that drain sockets, wakeup latency p99 for timer-only readers, the
// first probe's metric for probe-only runs) over every column holding it.
func Headline(s *results.Summary) (name, unit string, columns []string, values [][]float64, err error) {
	res, err := compare.Headlines([]compare.Run{{Label: "run", Summary: s}}, compare.Options{})
	if err != nil {
		return "", "", nil, nil, err
	}
	if len(res.Metrics) == 0 {
		return "", "", nil, nil, fmt.Errorf("no headline metric in %d trials", len(s.Trials))
	}
	first := res.Metrics[0]
	for _, m := range res.Metrics {
		if m.Name == first.Name && m.Unit == first.Unit {
			columns = append(columns, m.Column)
			values = append(values, m.Rounds)
		}
	}
	return first.Name, first.Unit, columns, values, nil
}

// Round applies rule to s after a complete round of a rounds: auto
// run, elapsed into it: it records the decision in s.Auto and reports
// whether to stop. With no headline metric yet it runs on to MaxRounds
// (or MaxTime) and says why in s.Auto.Reason once it stops.
func Round(s *results.Summary, rule Rule, elapsed time.Duration) (stop bool) {
	a := &results.AutoRounds{PrecisionPct: rule.Precision * 100, MaxRounds: rule.MaxRounds, MaxTimeNs: int64(rule.MaxTime)}
	s.Auto = a
	name, unit, cols, vals, err := Headline(s)
	if err != nil {
		for _, t := range s.Trials {
			a.Rounds = max(a.Rounds, t.Round+1)
		}
		// No metric: only the limits can stop it.
		d := Stop([][]float64{make([]float64, a.Rounds)}, elapsed, Rule{Precision: -1, MaxRounds: rule.MaxRounds, MaxTime: rule.MaxTime})
		if d.Stop {
			a.Reason = d.Reason + " (" + err.Error() + ")"
		}
		return d.Stop
	}
	d := Stop(vals, elapsed, rule)
	a.Metric, a.Unit, a.Columns, a.Rounds = name, unit, cols, d.Rounds
	if !math.IsNaN(d.HalfWidthPct) && !math.IsInf(d.HalfWidthPct, 0) {
		hw := d.HalfWidthPct
		a.HalfWidthPct = &hw
		a.Within = hw <= a.PrecisionPct
	}
	a.Reason = d.Reason
	return d.Stop
}
