// Package stats holds the statistics `make bench` decides with: confidence
// intervals of per-pair ratios (Student's t on their logarithms) and of
// per-pair differences, the stopping rule that keeps adding A/B pairs until
// every interval is narrow enough or a time cap is reached, and the verdict
// of an interval against a target. Pure: no clock, no I/O.
package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// ErrTooFew is returned for fewer than two samples: a t interval needs one
// degree of freedom.
var ErrTooFew = errors.New("fewer than 2 samples")

// CI is a two-sided confidence interval around Center at Level (e.g.
// 0.95), from N samples. For a ratio CI, Center is the geometric mean of
// the ratios and Lo, Hi are ratios; for a difference CI they are in the
// samples' unit.
type CI struct {
	N              int
	Level          float64
	Center, Lo, Hi float64
}

// TQuantile is the p-quantile of Student's t with df degrees of freedom
// (gonum distuv.StudentsT). TQuantile(0.975, 2) = 4.302653.
func TQuantile(p float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(p)
}

// meanSD returns the mean and sample standard deviation (n−1) of x.
func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}

// MeanCI is the t interval of the mean of x at level: mean ± t·s/√n with
// n−1 degrees of freedom. Used for per-pair differences (B − A).
func MeanCI(x []float64, level float64) (CI, error) {
	if len(x) < 2 {
		return CI{N: len(x), Level: level}, ErrTooFew
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return CI{N: len(x), Level: level}, fmt.Errorf("sample %v not finite", v)
		}
	}
	m, sd := meanSD(x)
	hw := TQuantile(1-(1-level)/2, len(x)-1) * sd / math.Sqrt(float64(len(x)))
	return CI{N: len(x), Level: level, Center: m, Lo: m - hw, Hi: m + hw}, nil
}

// RatioCI is the interval of the geometric mean of per-pair ratios (each
// B/A, > 0): the t interval of their natural logarithms, exponentiated.
// Ratios ≤ 0 or not finite are an error.
func RatioCI(ratios []float64, level float64) (CI, error) {
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		if !(r > 0) || math.IsInf(r, 0) {
			return CI{N: len(ratios), Level: level}, fmt.Errorf("ratio %v: must be finite and > 0", r)
		}
		logs[i] = math.Log(r)
	}
	c, err := MeanCI(logs, level)
	if err != nil {
		return c, err
	}
	return CI{N: c.N, Level: level, Center: math.Exp(c.Center), Lo: math.Exp(c.Lo), Hi: math.Exp(c.Hi)}, nil
}

// RelHalfWidth is the larger side of a ratio CI relative to its center:
// max(Hi/Center − 1, 1 − Lo/Center). A CI "within ±3%" has RelHalfWidth ≤ 0.03.
func (c CI) RelHalfWidth() float64 {
	if !(c.Center > 0) {
		return math.Inf(1)
	}
	return math.Max(c.Hi/c.Center-1, 1-c.Lo/c.Center)
}

// Median of x (mean of the middle two for even n); NaN for none.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Verdict is the outcome of a CI against a target.
type Verdict string

// Verdicts. Undecided means the CI straddles the target: more pairs (or a
// quieter machine) could still go either way.
const (
	Met       Verdict = "met"
	NotMet    Verdict = "not met"
	Undecided Verdict = "undecided"
)

// AtMost judges "value ≤ limit" from c: Met when the whole CI is at or
// below limit (Hi ≤ limit), NotMet when all of it is above (Lo > limit),
// Undecided otherwise (including Lo == limit, where the value may still
// equal the limit).
func AtMost(c CI, limit float64) Verdict {
	switch {
	case c.Hi <= limit:
		return Met
	case c.Lo > limit:
		return NotMet
	}
	return Undecided
}

// Within judges "lo ≤ value ≤ hi" from c: Met when the whole CI lies in
// [lo, hi], NotMet when all of it lies outside on one side (Hi < lo or
// Lo > hi), Undecided otherwise.
func Within(c CI, lo, hi float64) Verdict {
	switch {
	case c.Lo >= lo && c.Hi <= hi:
		return Met
	case c.Hi < lo || c.Lo > hi:
		return NotMet
	}
	return Undecided
}

// Either combines the verdicts of alternative targets ("ratio ≤ 1.10 or
// difference ≤ 5 µs"): Met when any is met, NotMet when all are not met,
// Undecided otherwise. No verdicts is Undecided.
func Either(vs ...Verdict) Verdict {
	if len(vs) == 0 {
		return Undecided
	}
	all := true
	for _, v := range vs {
		if v == Met {
			return Met
		}
		all = all && v == NotMet
	}
	if all {
		return NotMet
	}
	return Undecided
}

// Rule is the stopping rule of a comparison: add A/B pairs until every
// targeted CI is within ±MaxRelHalfWidth (and at least MinPairs pairs were
// run), or until the next pair would pass Cap, or MaxPairs.
type Rule struct {
	MinPairs, MaxPairs int
	MaxRelHalfWidth    float64       // e.g. 0.03 for ±3%
	Cap                time.Duration // wall time for the whole comparison
}

// Stop reasons returned by Rule.Next.
const (
	ReasonPrecise  = "precise"   // every CI within ±MaxRelHalfWidth
	ReasonCap      = "time cap"  // the next pair would pass Cap
	ReasonMaxPairs = "max pairs" // MaxPairs reached
)

// Next decides whether to run another pair after n pairs that took
// elapsed in total; widths are the RelHalfWidth of every targeted CI so
// far (ignored below MinPairs). The next pair is assumed to take as long
// as the slowest so far (slowest). It returns more=false with a reason
// from the Reason constants, or more=true and "".
func (r Rule) Next(n int, widths []float64, elapsed, slowest time.Duration) (more bool, reason string) {
	if r.MaxPairs > 0 && n >= r.MaxPairs {
		return false, ReasonMaxPairs
	}
	if n >= r.MinPairs && n >= 2 {
		precise := true
		for _, w := range widths {
			precise = precise && w <= r.MaxRelHalfWidth
		}
		if precise {
			return false, ReasonPrecise
		}
	}
	if r.Cap > 0 && elapsed+slowest > r.Cap {
		return false, ReasonCap
	}
	return true, ""
}
