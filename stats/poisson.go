package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Rate is a count of events over an exposure with its exact (Garwood)
// Poisson confidence interval: a spike rate per hour.
type Rate struct {
	Count    uint64
	Exposure float64 // in the rate's time unit (hours)
	// Rate = Count/Exposure; [Lo, Hi] its interval at Level (Lo = 0 for no
	// event).
	Rate, Lo, Hi float64
	Level        float64
}

// MTBF is the mean time between events, 1/Rate, with its interval [1/Hi,
// 1/Lo] (+Inf for no event).
func (r Rate) MTBF() (point, lo, hi float64) {
	return 1 / r.Rate, 1 / r.Hi, 1 / r.Lo
}

// PoissonRate is the exact interval of the rate of count events in
// exposure (> 0) at level: the chi-square (gamma) quantiles of Garwood
// (1936), lo = Γ⁻¹(α/2; k)/T, hi = Γ⁻¹(1−α/2; k+1)/T, from gonum's
// distuv.Gamma.
func PoissonRate(count uint64, exposure, level float64) Rate {
	r := Rate{Count: count, Exposure: exposure, Level: level}
	if !(exposure > 0) {
		r.Rate, r.Lo, r.Hi = math.NaN(), math.NaN(), math.NaN()
		return r
	}
	a := 1 - level
	k := float64(count)
	r.Rate = k / exposure
	if count > 0 {
		r.Lo = distuv.Gamma{Alpha: k, Beta: 1}.Quantile(a/2) / exposure
	}
	r.Hi = distuv.Gamma{Alpha: k + 1, Beta: 1}.Quantile(1-a/2) / exposure
	return r
}

// RateRatio is the Change of B's event rate against A's (rate B / rate A
// − 1): kb events in exposure tb against ka in ta. Its interval is the
// exact conditional one: given n = ka + kb events, kb is binomial with p
// = λb·tb / (λa·ta + λb·tb), and the Clopper–Pearson interval of p (beta
// quantiles, gonum's distuv.Beta) maps to the ratio by p/(1−p) · ta/tb.
// No event on either side is Undefined; none in A gives Hi = +Inf, none in
// B gives Lo = −1 (a ratio of 0). Spikes cluster (one host hiccup makes
// several), so the Poisson model understates the spread when they do: a
// Note says so.
func RateRatio(ka uint64, ta float64, kb uint64, tb float64, level float64) Change {
	n := ka + kb
	if n == 0 || !(ta > 0) || !(tb > 0) {
		return Undefined("no event on either side: no rate ratio")
	}
	a := 1 - level
	fa, fb := float64(ka), float64(kb)
	toRatio := func(p float64) float64 {
		if p >= 1 {
			return math.Inf(1)
		}
		return p / (1 - p) * ta / tb
	}
	plo, phi := 0.0, 1.0
	if kb > 0 {
		plo = distuv.Beta{Alpha: fb, Beta: fa + 1}.Quantile(a / 2)
	}
	if ka > 0 {
		phi = distuv.Beta{Alpha: fb + 1, Beta: fa}.Quantile(1 - a/2)
	}
	c := Change{Level: level, Unit: "event", Method: "exact conditional binomial (Poisson rate ratio)",
		SELog: math.NaN(), DF: math.Inf(1)}
	c.Point = toRatio(fb/float64(n)) - 1
	c.Lo, c.Hi = toRatio(plo)-1, toRatio(phi)-1
	c.Notes = []string{"events that cluster (one hiccup, several spikes) make the Poisson interval too narrow"}
	return c
}
