package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MaxBatches and MinBatches bound the batches Paired takes its interval
// over: pairs are grouped into at most MaxBatches batch means (Schmeiser's
// 10–30, "Batch size effects in the analysis of simulation output", Oper.
// Res. 1982), never fewer than MinBatches, below which the t interval's
// degrees of freedom rather than the noise would set its width.
const (
	MaxBatches = 30
	MinBatches = 10
)

// Paired is the Change of B against A from the ABBA block pairs of one
// interleaved trial (or several, in time order): a[i] and b[i] are pair
// i's values (> 0: each block's mean per-call cost), A's and B's blocks
// adjacent, run by the same thread on the same sockets. Each pair gives
// one log ratio, log b[i] − log a[i]; the machine's noise common to the
// two blocks of a pair cancels in it.
//
// Pairs a few hundred milliseconds apart are not independent, though: the
// ratio itself drifts with the machine's state, on a scale of seconds. On
// rtload's 2-CPU development VM under load that showed as small positive
// autocorrelations at every lag (0.04 at lags 1, 2 and 5 with 20 ms
// blocks), which no lag-1 test detects at n = 1500 but which made the
// standard error of the mean 1.7 times the naive one (batches of 100
// pairs). So the interval is Student's t over batch means: consecutive
// pairs averaged in at most MaxBatches batches (n ≤ MaxBatches: one pair
// each), df = batches − 1, which costs about 4% of width when the pairs are
// independent. Then, while the batch means' lag-1 autocorrelation lies
// above the 95% bound of white noise (2/√batches), batches are merged in
// twos, down to MinBatches; Notes say so, with the lag-1 before and after,
// and when it is still high at the end. A different number of values,
// fewer than 2 pairs or a value ≤ 0 gives an Undefined change. Batch means
// are the standard remedy for serially correlated output (Law & Kelton,
// "Simulation Modeling and Analysis", ch. 9); no library we use has them,
// hence this file.
func Paired(a, b []float64) Change { return PairedAt(a, b, Level) }

// PairedAt is Paired at confidence level.
func PairedAt(a, b []float64, level float64) Change {
	if len(a) != len(b) {
		return Undefined(fmt.Sprintf("%d A blocks and %d B blocks: not pairs", len(a), len(b)))
	}
	n := len(a)
	if n < 2 {
		return Undefined(fmt.Sprintf("%s: a t interval needs 2", plural(n, "block pair", "block pairs")))
	}
	d := make([]float64, n)
	for i := range a {
		if !(a[i] > 0) || !(b[i] > 0) || math.IsInf(a[i], 0) || math.IsInf(b[i], 0) {
			return Undefined(fmt.Sprintf("pair %d: values %v and %v must be finite and > 0", i, a[i], b[i]))
		}
		d[i] = math.Log(b[i]) - math.Log(a[i])
	}
	c := Change{Level: level, Unit: "block pair", Paired: true, N: plural(n, "ABBA block pair", "ABBA block pairs")}
	k := (n + MaxBatches - 1) / MaxBatches
	units := batchMeans(d, k)
	r0 := Lag1(units)
	r, k0 := r0, k
	for lag1High(r, len(units)) && len(units)/2 >= MinBatches {
		k *= 2
		units = batchMeans(d, k)
		r = Lag1(units)
	}
	switch {
	case k == 1:
		c.Method = "paired t on per-pair log ratios"
	default:
		c.N = fmt.Sprintf("%s in %d batches of %d", c.N, len(units), k)
		c.Method = fmt.Sprintf("paired t on %d batch means of %d pairs' log ratios", len(units), k)
	}
	if k > k0 {
		c.Notes = append(c.Notes, fmt.Sprintf("consecutive batches correlated (lag-1 %.2f > 2/√%d = %.2f): batches of %d pairs, lag-1 now %.2f",
			r0, len(batchMeans(d, k0)), 2/math.Sqrt(float64(len(batchMeans(d, k0)))), k, r))
	}
	if lag1High(r, len(units)) {
		c.Notes = append(c.Notes, fmt.Sprintf("lag-1 autocorrelation still %.2f at %d batches: the interval may be too narrow (more blocks, or a quieter machine)", r, len(units)))
	}
	m, v := meanVar(units)
	nu := len(units)
	c.UnitVar, c.Units = [2]float64{v, 0}, [2]int{nu, nu}
	c.SELog, c.DF = math.Sqrt(v/float64(nu)), float64(nu-1)
	setInterval(&c, m)
	return c
}

// lag1High reports whether lag-1 autocorrelation r of n consecutive
// values lies above the approximate 95% bound of white noise, 2/√n.
func lag1High(r float64, n int) bool {
	return !math.IsNaN(r) && n >= 3 && r > 2/math.Sqrt(float64(n))
}

// batchMeans is the means of d's consecutive batches of k values, the last
// batch taking what is left over (k to 2k−1 values).
func batchMeans(d []float64, k int) []float64 {
	nb := len(d) / k
	out := make([]float64, nb)
	for j := range nb {
		lo, hi := j*k, (j+1)*k
		if j == nb-1 {
			hi = len(d)
		}
		var s float64
		for _, x := range d[lo:hi] {
			s += x
		}
		out[j] = s / float64(hi-lo)
	}
	return out
}

// Heterogeneity tests whether the changes cs (each a Paired change of one
// trial: the same two variants in another round, on other sockets) differ
// by more than their own intervals allow: Cochran's Q = Σ wᵢ (dᵢ − d̄)² on
// the log scale, wᵢ = 1/SELogᵢ², d̄ their weighted mean, against χ² with
// k − 1 degrees of freedom. p is the probability of a Q at least as large
// were they all one ratio; a small p (< 0.05) says that something a trial
// adds to one variant (its sockets, the machine's state over minutes) is
// larger than the blocks within it show. Changes without an interval are
// left out; fewer than 2 give p = NaN.
func Heterogeneity(cs []Change) (q float64, df int, p float64) {
	var ds, ws []float64
	for _, c := range cs {
		if c.Defined() && c.SELog > 0 && !math.IsNaN(c.Point) {
			ds, ws = append(ds, math.Log1p(c.Point)), append(ws, 1/(c.SELog*c.SELog))
		}
	}
	if len(ds) < 2 {
		return math.NaN(), 0, math.NaN()
	}
	var sw, swd float64
	for i := range ds {
		sw, swd = sw+ws[i], swd+ws[i]*ds[i]
	}
	mean := swd / sw
	for i := range ds {
		q += ws[i] * (ds[i] - mean) * (ds[i] - mean)
	}
	df = len(ds) - 1
	return q, df, 1 - distuv.ChiSquared{K: float64(df)}.CDF(q)
}
