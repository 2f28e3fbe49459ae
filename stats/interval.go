package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrTooFew is returned for fewer than two samples: a t interval needs one
// degree of freedom.
var ErrTooFew = errors.New("fewer than 2 samples")

// CI is a two-sided confidence interval around Center at Level (e.g.
// 0.95), from N samples. For a ratio CI, Center is the geometric mean of
// the ratios and Lo, Hi are ratios; for a difference CI they are in the
// samples' unit. make bench's rows use it (per-pair ratios and
// differences).
type CI struct {
	N              int
	Level          float64
	Center, Lo, Hi float64
}

// MeanCI is the t interval of the mean of x at level: mean ± t·s/√n with
// n−1 degrees of freedom. Values not finite are an error.
func MeanCI(x []float64, level float64) (CI, error) {
	if len(x) < 2 {
		return CI{N: len(x), Level: level}, ErrTooFew
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return CI{N: len(x), Level: level}, fmt.Errorf("sample %v not finite", v)
		}
	}
	m, v := meanVar(x)
	hw := TQuantile(1-(1-level)/2, float64(len(x)-1)) * math.Sqrt(v/float64(len(x)))
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

// Change is a ratio CI as a Change (Center − 1, Lo − 1, Hi − 1), unit
// "pair", so that Decide judges it.
func (c CI) Change() Change {
	return Change{Point: c.Center - 1, Lo: c.Lo - 1, Hi: c.Hi - 1, Level: c.Level, Units: [2]int{c.N, c.N}, Paired: true,
		Unit: "pair", N: fmt.Sprintf("%d pairs", c.N), Method: "t on per-pair log ratios", SELog: math.NaN(), DF: float64(c.N - 1)}
}

// RelHalfWidth is the larger side of a ratio CI relative to its center:
// max(Hi/Center − 1, 1 − Lo/Center). A CI "within ±3%" has RelHalfWidth ≤
// 0.03.
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

// Target is the outcome of a CI against a target (make bench's fidelity
// rows: "ratio ≤ 1.10", "0.97 ≤ ratio ≤ 1.03").
type Target string

// Targets. Unknown means the CI straddles the target.
const (
	Met     Target = "met"
	NotMet  Target = "not met"
	Unknown Target = "undecided"
)

// AtMost judges "value ≤ limit" from c: Met when the whole CI is at or
// below limit (Hi ≤ limit), NotMet when all of it is above (Lo > limit),
// Unknown otherwise. On a ratio CI against 1+threshold it is Decide's
// rule: Met is NotSlower or Same, NotMet is Slower.
func AtMost(c CI, limit float64) Target {
	switch {
	case c.Hi <= limit:
		return Met
	case c.Lo > limit:
		return NotMet
	}
	return Unknown
}

// Within judges "lo ≤ value ≤ hi" from c: Met when the whole CI lies in
// [lo, hi], NotMet when all of it lies outside on one side, Unknown
// otherwise.
func Within(c CI, lo, hi float64) Target {
	switch {
	case c.Lo >= lo && c.Hi <= hi:
		return Met
	case c.Hi < lo || c.Lo > hi:
		return NotMet
	}
	return Unknown
}

// Either combines alternative targets ("ratio ≤ 1.10 or difference ≤ 5
// µs"): Met when any is met, NotMet when all are not met, Unknown
// otherwise (and for none).
func Either(ts ...Target) Target {
	if len(ts) == 0 {
		return Unknown
	}
	all := true
	for _, t := range ts {
		if t == Met {
			return Met
		}
		all = all && t == NotMet
	}
	if all {
		return NotMet
	}
	return Unknown
}
