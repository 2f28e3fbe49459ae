package stats

import "math"

// DefaultPower is the chance with which MinDetectable and
// MoreSamplesNeeded ask a change to be found: 80%, the usual choice.
const DefaultPower = 0.80

// MinDetectable is the smallest worsening (B/A − 1, in the worse
// direction) that the noise measured in c would find Slower against
// threshold with probability power, if it were the true change: on the
// log scale log(1+threshold) + (t_(1+Level)/2 + t_power)·SELog, with c's
// degrees of freedom. +Inf without an interval.
func MinDetectable(c Change, threshold, power float64) float64 {
	if math.IsNaN(c.SELog) || math.IsInf(c.SELog, 0) || !(c.DF > 0) {
		return math.Inf(1)
	}
	lvl := c.Level
	if lvl == 0 {
		lvl = Level
	}
	k := TQuantile((1+lvl)/2, c.DF) + TQuantile(power, c.DF)
	return math.Expm1(math.Log1p(threshold) + k*c.SELog)
}

// Grow says which sides of a comparison can take more units: both (a
// compare, a rounds: auto run), or only B (a check: the baseline is
// fixed once run).
type Grow int

// Sides that grow.
const (
	GrowBoth Grow = iota
	GrowB
)

// MaxMore bounds MoreSamplesNeeded's search.
const MaxMore = 10000

// MoreSamplesNeeded is how many more units (per growing side) would
// decide c against threshold, if the change were what c measured: the
// fewest k such that (t + t_power)·SE(k) is within the distance of the
// point estimate from the nearest decision boundary (+threshold in the
// worse direction) on the log scale, the per-unit variances as measured
// (Change.UnitVar). 0 when c is decided already at that power; ok is
// false when no number up to MaxMore would (the point sits on the
// boundary, or the side that cannot grow is too noisy on its own).
func MoreSamplesNeeded(c Change, threshold float64, higherIsBetter bool, power float64, grow Grow) (more int, ok bool) {
	if math.IsNaN(c.Point) || math.IsNaN(c.SELog) || c.Units[0] < 1 || c.Units[1] < 1 {
		return 0, false
	}
	d := math.Log1p(c.Point)
	bound := math.Log1p(threshold)
	if higherIsBetter {
		bound = -bound
	}
	margin := math.Abs(d - bound)
	lvl := c.Level
	if lvl == 0 {
		lvl = Level
	}
	need := func(k int) bool {
		se, df := c.projected(k, grow)
		if math.IsNaN(se) {
			return false
		}
		return (TQuantile((1+lvl)/2, df)+TQuantile(power, df))*se <= margin
	}
	if need(0) {
		return 0, true
	}
	if !need(MaxMore) {
		return 0, false
	}
	lo, hi := 0, MaxMore
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if need(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// projected is the standard error and degrees of freedom c would have
// with k more units on each growing side, the per-unit variances
// unchanged.
func (c Change) projected(k int, grow Grow) (se, df float64) {
	na, nb := float64(c.Units[0]), float64(c.Units[1])
	if c.Paired {
		n := na + float64(k)
		return math.Sqrt(c.UnitVar[0] / n), n - 1
	}
	if grow == GrowBoth {
		na += float64(k)
	}
	nb += float64(k)
	sa, sb := c.UnitVar[0]/na, c.UnitVar[1]/nb
	se2 := sa + sb
	if se2 == 0 {
		return 0, na + nb - 2
	}
	dfa, dfb := math.Max(na-1, 1), math.Max(nb-1, 1)
	return math.Sqrt(se2), se2 * se2 / (sa*sa/dfa + sb*sb/dfb)
}

// UnitsToDetect is how many units per side (both sides alike, each unit's
// log value of variance unitVar) a comparison needs to find a true
// worsening change Slower against threshold with probability power at
// confidence level: the fewest n with (t_(1+level)/2 + t_power)·√(2·
// unitVar/n) ≤ log(1+change) − log(1+threshold), df = 2n − 2. ok is false
// when change ≤ threshold or more than MaxMore would be needed.
func UnitsToDetect(unitVar, change, threshold, level, power float64) (n int, ok bool) {
	margin := math.Log1p(change) - math.Log1p(threshold)
	if !(margin > 0) || math.IsNaN(unitVar) {
		return 0, false
	}
	fits := func(n int) bool {
		df := float64(2*n - 2)
		return (TQuantile((1+level)/2, df)+TQuantile(power, df))*math.Sqrt(2*unitVar/float64(n)) <= margin
	}
	if fits(2) {
		return 2, true
	}
	if !fits(MaxMore) {
		return 0, false
	}
	lo, hi := 2, MaxMore
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}
