package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rtload/rtload/stats"
)

// Level is the confidence level of every interval benchrun prints.
const Level = 0.95

// measurement is what one run of one side yields: values by stat key (in
// the stat's display unit) and, for wakeup comparisons, the latencies
// themselves (ns) so that percentiles can also be taken over every pair.
type measurement struct {
	vals map[string]float64
	hist *hdrhistogram.Histogram
	argv []string // the command run, when the side's argv is only known then
}

// side is one program of a comparison. run performs its run number i (one
// per pair); argv is its command for the document (taken from the
// measurement when the side sets it there).
type side struct {
	name string
	argv []string
	run  func(i int) (measurement, error)
}

// stat is one row of a comparison: a value both sides report per run.
type stat struct {
	key, label string
	prec       int     // decimals printed
	ratioMax   float64 // target B/A ≤ ratioMax; 0 = no ratio target
	ratioMin   float64 // with ratioMax: target ratioMin ≤ B/A ≤ ratioMax; 0 = one-sided
	diffMax    float64 // alternative target B − A ≤ diffMax (display unit); 0 = none
	diffUnit   string
}

func (s stat) targeted() bool { return s.ratioMax > 0 || s.diffMax > 0 }

func (s stat) target() string {
	switch {
	case s.ratioMin > 0 && s.ratioMax > 0:
		return fmt.Sprintf("%.2f ≤ B/A ≤ %.2f", s.ratioMin, s.ratioMax)
	case s.ratioMax > 0 && s.diffMax > 0:
		return fmt.Sprintf("B/A ≤ %.2f or B − A ≤ %g %s", s.ratioMax, s.diffMax, s.diffUnit)
	case s.ratioMax > 0:
		return fmt.Sprintf("B/A ≤ %.2f", s.ratioMax)
	case s.diffMax > 0:
		return fmt.Sprintf("B − A ≤ %g %s", s.diffMax, s.diffUnit)
	}
	return ""
}

// comparison runs A/B pairs of two sides under a stopping rule. Pairs
// alternate their order (A B, B A, A B, …) so that a slow drift of the
// machine weighs on both sides alike.
type comparison struct {
	title      string // row label prefix, e.g. "quiet"
	a, b       side
	noise      *noise // started around each run of either side; nil = none
	stats      []stat
	rule       rule
	minWakeups int // per side over all pairs; 0 = none
	// warmup pairs run first (A then B) and are reported but not counted,
	// as hyperfine's --warmup: in the make bench of 2026-12-01 11:35 the
	// first pair was the outlier of every per-call row (B/A 1.326, 1.245,
	// 0.891, 0.868, 0.804, 0.726, 0.892, 0.812 against 0.91–1.20 after it);
	// in the next run (11:47) it was not (1.075, 1.028, 1.036, 1.116), so
	// this guards against a cold first run and does not by itself narrow
	// the CIs.
	warmup int
}

// outcome is a finished comparison.
type outcome struct {
	cmp          *comparison
	pairs        int
	reason       string
	elapsed      time.Duration
	a, b         map[string][]float64 // per pair, in run order
	histA, histB *hdrhistogram.Histogram
	warmup       map[string][]float64 // B/A of each warm-up pair, not counted
}

func newWakeupHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 60e9, 3) }

// runSide runs one side with the comparison's noise around it.
func (c *comparison) runSide(s side, i int) (measurement, error) {
	if err := c.noise.start(); err != nil {
		return measurement{}, err
	}
	defer c.noise.stop()
	m, err := s.run(i)
	if err != nil {
		return m, fmt.Errorf("%s: %w", s.name, err)
	}
	for _, st := range c.stats {
		if v, ok := m.vals[st.key]; !ok || !(v > 0) {
			return m, fmt.Errorf("%s: %s missing or not > 0 (%v)", s.name, st.key, v)
		}
	}
	return m, nil
}

// warmupIndex numbers the warm-up runs (their raw results directories),
// apart from the counted pairs 0, 1, ….
const warmupIndex = 1000

// run adds pairs until the rule says stop.
func (c *comparison) run() (*outcome, error) {
	o := &outcome{cmp: c, a: map[string][]float64{}, b: map[string][]float64{}, histA: newWakeupHist(), histB: newWakeupHist()}
	o.warmup = map[string][]float64{}
	for i := 0; i < c.warmup; i++ {
		ma, err := c.runSide(c.a, warmupIndex+i)
		if err != nil {
			return o, err
		}
		mb, err := c.runSide(c.b, warmupIndex+i)
		if err != nil {
			return o, err
		}
		for _, st := range c.stats {
			o.warmup[st.key] = append(o.warmup[st.key], mb.vals[st.key]/ma.vals[st.key])
		}
		fmt.Fprintf(os.Stderr, "benchrun:   %s warm-up pair %d (not counted)\n", c.title, i+1)
	}
	start := time.Now()
	var slowest time.Duration
	for {
		t0 := time.Now()
		order := []bool{false, true} // false = A
		if o.pairs%2 == 1 {
			order = []bool{true, false}
		}
		for _, isB := range order {
			s, vals, h := &c.a, o.a, o.histA
			if isB {
				s, vals, h = &c.b, o.b, o.histB
			}
			m, err := c.runSide(*s, o.pairs)
			if err != nil {
				return o, err
			}
			if m.argv != nil {
				s.argv = m.argv
			}
			for _, st := range c.stats {
				vals[st.key] = append(vals[st.key], m.vals[st.key])
			}
			if m.hist != nil {
				h.Merge(m.hist)
			}
		}
		o.pairs++
		slowest = max(slowest, time.Since(t0))
		o.elapsed = time.Since(start)
		more, reason := c.rule.Next(o.pairs, o.changes(), o.elapsed, slowest)
		fmt.Fprintf(os.Stderr, "benchrun:   %s pair %d (%s) %s\n", c.title, o.pairs, o.elapsed.Round(time.Second), o.progress())
		if !more {
			o.reason = reason
			return o, nil
		}
	}
}

// changes are the ratio CIs of every targeted stat as stats.Change (no
// interval while a side has fewer wakeups than minWakeups).
func (o *outcome) changes() []stats.Change {
	var cs []stats.Change
	few := o.cmp.minWakeups > 0 && (o.histA.TotalCount() < int64(o.cmp.minWakeups) || o.histB.TotalCount() < int64(o.cmp.minWakeups))
	for _, st := range o.cmp.stats {
		if !st.targeted() {
			continue
		}
		ci, err := stats.RatioCI(o.ratios(st.key), Level)
		if err != nil || few {
			cs = append(cs, stats.Undefined("no interval yet"))
			continue
		}
		cs = append(cs, ci.Change())
	}
	if few && len(cs) == 0 {
		cs = append(cs, stats.Undefined("too few wakeups"))
	}
	return cs
}

func (o *outcome) ratios(key string) []float64 {
	a, b := o.a[key], o.b[key]
	r := make([]float64, len(a))
	for i := range a {
		r[i] = b[i] / a[i]
	}
	return r
}

func (o *outcome) diffs(key string) []float64 {
	a, b := o.a[key], o.b[key]
	d := make([]float64, len(a))
	for i := range a {
		d[i] = b[i] - a[i]
	}
	return d
}

// progress is a one-line state for stderr: each targeted ratio so far.
func (o *outcome) progress() string {
	var s []string
	for _, st := range o.cmp.stats {
		if st.targeted() {
			s = append(s, fmt.Sprintf("%s %.3f", st.key, stats.Median(o.ratios(st.key))))
		}
	}
	return strings.Join(s, ", ")
}

// verdict judges stat st: the ratio CI against ratioMax, or the difference
// CI against diffMax, whichever is met (stats.Either). Rows without a
// target get "–".
func (o *outcome) verdict(st stat) (v stats.Target, ratio, diff stats.CI, err error) {
	v = stats.Unknown
	if !st.targeted() {
		v = "–"
	}
	ratio, err = stats.RatioCI(o.ratios(st.key), Level)
	if err != nil {
		return v, ratio, diff, err
	}
	diff, err = stats.MeanCI(o.diffs(st.key), Level)
	if err != nil || !st.targeted() {
		return v, ratio, diff, err
	}
	var vs []stats.Target
	switch {
	case st.ratioMin > 0 && st.ratioMax > 0:
		vs = append(vs, stats.Within(ratio, st.ratioMin, st.ratioMax))
	case st.ratioMax > 0:
		vs = append(vs, stats.AtMost(ratio, st.ratioMax))
	}
	if st.diffMax > 0 {
		vs = append(vs, stats.AtMost(diff, st.diffMax))
	}
	return stats.Either(vs...), ratio, diff, nil
}

// rule is the benchmark's stop rule: the one stop rule of every verdict
// (stats.Stop) on precision, over at most MaxPairs pairs, with a time
// cap: add A/B pairs until every targeted CI is within ±MaxRelHalfWidth
// (and at least MinPairs pairs ran), or the next pair would pass Cap, or
// MaxPairs. Stopping on precision alone needs no sequential correction
// (stats.Stop).
type rule struct {
	MinPairs, MaxPairs int
	MaxRelHalfWidth    float64       // e.g. 0.03 for ±3%
	Cap                time.Duration // wall time for the whole comparison
}

// Stop reasons returned by rule.Next.
const (
	ReasonPrecise  = stats.StopPrecise  // every CI within ±MaxRelHalfWidth
	ReasonCap      = stats.StopBudget   // the next pair would pass Cap
	ReasonMaxPairs = stats.StopLastLook // MaxPairs reached
)

// Next decides whether to run another pair after n pairs that took
// elapsed in total; changes are every targeted CI so far (none: precise
// at MinPairs). The next pair is assumed to take as long as the slowest
// so far (slowest).
func (r rule) Next(n int, changes []stats.Change, elapsed, slowest time.Duration) (more bool, reason string) {
	if len(changes) == 0 && n >= max(r.MinPairs, 2) {
		return false, ReasonPrecise
	}
	s := stats.Stop{MinLooks: max(r.MinPairs, 2), MaxLooks: r.MaxPairs, Precision: r.MaxRelHalfWidth}
	if stop, why := s.Next(n, changes, nil); stop {
		return false, why
	}
	if r.Cap > 0 && elapsed+slowest > r.Cap {
		return false, ReasonCap
	}
	return true, ""
}
