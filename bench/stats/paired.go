package stats

import (
	"fmt"
	"math"
)

// This file is the paired-block interval of bench/cmd/fidelity's
// in-process comparison. It should move to the top-level stats package as
// stats.Paired (h/interleave's stats/paired.go, VERDICTS-DESIGN.md) once
// that lands: the same rule (t on the per-pair log ratios, lag-1 check,
// batch means), written here because neither branch had landed when the
// benchmark needed it.

// MinBatches is the fewest batch means Paired merges pairs down to: below
// it the t interval's few degrees of freedom would hide more than the
// autocorrelation it removes.
const MinBatches = 10

// PairedCI is the interval of the geometric mean of per-pair ratios
// b[i]/a[i] (pairs in time order, e.g. ABBA block pairs): CI.Center, Lo
// and Hi are ratios, CI.N the units the t interval's degrees of freedom
// come from (pairs, or batch means of Batch consecutive pairs).
type PairedCI struct {
	CI
	// Pairs is the number of pairs given; Used those the interval used
	// (batch means leave out the last Pairs mod Batch).
	Pairs, Used int
	// Batch is the pairs per batch mean, 1 when no batching was needed.
	Batch int
	// Lag1 is the lag-1 autocorrelation of the per-pair log ratios;
	// BatchLag1 that of the batch means the interval used (= Lag1 when
	// Batch is 1).
	Lag1, BatchLag1 float64
	// SDLog is the standard deviation of the per-pair log ratios (the
	// noise of one pair, before any averaging).
	SDLog float64
	// Notes say what a reader must know: batching and why, a lag-1 still
	// high at MinBatches.
	Notes []string
}

// Lag1 is the lag-1 autocorrelation of x: Σ(x[i]−m)(x[i+1]−m) / Σ(x[i]−m)²,
// m the mean. 0 for fewer than 3 values or when x is constant.
func Lag1(x []float64) float64 {
	if len(x) < 3 {
		return 0
	}
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var num, den float64
	for i, v := range x {
		den += (v - m) * (v - m)
		if i+1 < len(x) {
			num += (v - m) * (x[i+1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// lag1Limit is the largest lag-1 autocorrelation of n independent values
// that is not significant at 5% (one-sided upper, ≈ 1.645/√n; Box and
// Jenkins' large-sample SE 1/√n): above it the pairs are not independent
// and their naive t interval would be too narrow.
func lag1Limit(n int) float64 { return 1.645 / math.Sqrt(float64(n)) }

// batchMeans is the means of consecutive batches of size k of x (the last
// len(x) mod k values left out).
func batchMeans(x []float64, k int) []float64 {
	out := make([]float64, 0, len(x)/k)
	for i := 0; i+k <= len(x); i += k {
		var s float64
		for _, v := range x[i : i+k] {
			s += v
		}
		out = append(out, s/float64(k))
	}
	return out
}

// Paired is the level interval of the geometric mean of b[i]/a[i] over
// pairs in time order: Student's t on the per-pair log ratios with
// pairs − 1 degrees of freedom. Consecutive pairs of a noisy machine can
// share its state: when the lag-1 autocorrelation of the log ratios is
// positive beyond what independent pairs give (lag1Limit), consecutive
// pairs are merged into batch means of 2, 4, 8, … pairs until it is not,
// or until a further doubling would leave fewer than MinBatches batches,
// and t is taken
// on the batch means (batches − 1 degrees of freedom); Notes say so. A
// negative lag-1 (alternating position effects of an ABBA design) makes
// the plain interval conservative and is left as it is. a and b must have
// the same length, every value finite and > 0; fewer than 2 pairs is
// ErrTooFew.
func Paired(a, b []float64, level float64) (PairedCI, error) {
	p := PairedCI{Pairs: len(a), Batch: 1}
	p.CI = CI{N: len(a), Level: level}
	if len(a) != len(b) {
		return p, fmt.Errorf("paired: %d values of A, %d of B", len(a), len(b))
	}
	logs := make([]float64, len(a))
	for i := range a {
		if !(a[i] > 0) || !(b[i] > 0) || math.IsInf(a[i], 0) || math.IsInf(b[i], 0) {
			return p, fmt.Errorf("paired: pair %d (A %v, B %v): values must be finite and > 0", i, a[i], b[i])
		}
		logs[i] = math.Log(b[i] / a[i])
	}
	if len(logs) < 2 {
		return p, ErrTooFew
	}
	_, p.SDLog = meanSD(logs)
	p.Lag1 = Lag1(logs)
	x := logs
	p.BatchLag1 = p.Lag1
	if p.Lag1 > lag1Limit(len(logs)) {
		for len(logs)/(2*p.Batch) >= MinBatches && p.BatchLag1 > lag1Limit(len(x)) {
			p.Batch *= 2
			x = batchMeans(logs, p.Batch)
			p.BatchLag1 = Lag1(x)
		}
		note := fmt.Sprintf("lag-1 autocorrelation of the pair log ratios %.2f (> %.2f for independent pairs): batch means of %d consecutive pairs (%d batches), lag-1 %.2f",
			p.Lag1, lag1Limit(len(logs)), p.Batch, len(x), p.BatchLag1)
		if p.BatchLag1 > lag1Limit(len(x)) {
			note += fmt.Sprintf(", still above %.2f at the fewest batches allowed (%d): the interval may be too narrow", lag1Limit(len(x)), len(x))
		}
		p.Notes = append(p.Notes, note)
	}
	p.Used = len(x) * p.Batch
	c, err := MeanCI(x, level)
	if err != nil {
		return p, err
	}
	p.CI = CI{N: c.N, Level: level, Center: math.Exp(c.Center), Lo: math.Exp(c.Lo), Hi: math.Exp(c.Hi)}
	return p, nil
}

// GeoMean is the geometric mean of x (every value > 0), NaN for none or
// for a value ≤ 0.
func GeoMean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		if !(v > 0) {
			return math.NaN()
		}
		s += math.Log(v)
	}
	return math.Exp(s / float64(len(x)))
}
