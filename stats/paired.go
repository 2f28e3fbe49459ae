package stats

import (
	"fmt"
	"math"
)

// MinBatches is the fewest batches Paired merges block pairs into: below
// it the t interval's degrees of freedom, not the correlation, would set
// its width.
const MinBatches = 10

// Paired is the Change of B against A from the ABBA block pairs of one
// interleaved trial (or several, in time order): a[i] and b[i] are pair
// i's values (> 0: each block's mean per-call cost), A's and B's blocks
// adjacent, run by the same thread on the same sockets. Each pair gives
// one log ratio, log b[i] − log a[i]; the machine's slow noise (seconds),
// shared by the two blocks of a pair, cancels in it. The interval is
// Student's t on those log ratios, df = pairs − 1.
//
// Pairs a few hundred milliseconds apart still share some noise with
// their neighbours, and a positive lag-1 autocorrelation makes a t
// interval too narrow. So Paired checks the lag-1 autocorrelation of
// consecutive log ratios and, while it lies above the 95% bound of white
// noise (2/√n), merges adjacent pairs into batches of 2, 4, 8, … (batch
// means) and takes the interval over the batch means, down to MinBatches
// batches; Notes say so, with the lag-1 before and after. A different
// number of values, fewer than 2 pairs or a value ≤ 0 gives an Undefined
// change. Batch means are the standard remedy for serially correlated
// output (Law & Kelton, "Simulation Modeling and Analysis", ch. 9); no
// library we use has them, hence this file.
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
	c := Change{Level: level, Unit: "block pair", Paired: true, N: plural(n, "ABBA block pair", "ABBA block pairs"),
		Method: "paired t on per-pair log ratios"}
	units, k := d, 1
	r0 := Lag1(d)
	r := r0
	for lag1High(r, len(units)) && len(units)/2 >= MinBatches {
		k *= 2
		units = batchMeans(d, k)
		r = Lag1(units)
	}
	if k > 1 {
		c.N = fmt.Sprintf("%s in %d batches of %d", c.N, len(units), k)
		c.Method = fmt.Sprintf("paired t on batch means of %d pairs' log ratios", k)
		c.Notes = append(c.Notes, fmt.Sprintf("consecutive pairs correlated (lag-1 %.2f > 2/√%d = %.2f): batch means of %d pairs, lag-1 now %.2f", r0, n, 2/math.Sqrt(float64(n)), k, r))
	}
	if lag1High(r, len(units)) {
		c.Notes = append(c.Notes, fmt.Sprintf("lag-1 autocorrelation still %.2f at %d batches: the interval may be too narrow (longer blocks, or more of them)", r, len(units)))
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
