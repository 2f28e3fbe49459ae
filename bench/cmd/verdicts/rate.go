package main

import (
	"fmt"
	"math"

	"github.com/rtload/rtload/stats"
)

// proportion is K events in N trials (false alarms among A/A checks,
// detections among power checks) with its exact Clopper–Pearson interval
// [Lo, Hi] of the rate at Level. NaN without a trial.
type proportion struct {
	K, N      int
	P, Lo, Hi float64
	Level     float64
}

// binomial is k of n with its Clopper–Pearson interval at level, from
// stats.RateRatio rather than new statistics code: RateRatio's interval is
// the exact conditional binomial one (gonum's beta quantiles) of p = kb /
// (ka + kb); with ka = n − k "misses" against kb = k "hits" in equal
// exposure its ratio r = p / (1 − p), so p = r / (1 + r). k = 0 gives
// Lo = 0 and k = n gives Hi = 1, as Clopper–Pearson has them.
func binomial(k, n int, level float64) proportion {
	pr := proportion{K: k, N: n, Level: level, P: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if n <= 0 || k < 0 || k > n {
		return pr
	}
	c := stats.RateRatio(uint64(n-k), 1, uint64(k), 1, level)
	if !c.Defined() {
		return pr
	}
	toP := func(change float64) float64 {
		r := 1 + change
		if math.IsInf(r, 1) {
			return 1
		}
		return r / (1 + r)
	}
	pr.P = float64(k) / float64(n)
	pr.Lo, pr.Hi = toP(c.Lo), toP(c.Hi)
	return pr
}

// String is "1 of 20 = 5% [0.1%, 24.9%]" (the interval's level said by
// the caller); "none of 0 checks" without a trial.
func (p proportion) String() string {
	if p.N <= 0 || math.IsNaN(p.P) {
		return fmt.Sprintf("%d of %d checks", p.K, p.N)
	}
	return fmt.Sprintf("%d of %d = %.0f%% [%.1f%%, %.1f%%]", p.K, p.N, 100*p.P, 100*p.Lo, 100*p.Hi)
}
