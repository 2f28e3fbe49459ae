package report

import (
	"fmt"
	"math"
)

// Sample summarises repeated measurements the way seed 001 reports them:
// "Min: 286.95 Max: 289.72 Mean: 287.85 Std Dev: 0.98".
type Sample struct {
	N                   int
	Min, Max, Mean, Std float64 // Std divides by n, as seed 001's numbers do
	// StdSample is the sample standard deviation (divides by n−1).
	StdSample float64
}

// Summarize computes Min, Max, Mean and the standard deviation of xs: Std
// over n (the population formula, which reproduces seed 001's "Std Dev"),
// StdSample over n−1.
func Summarize(xs []float64) Sample {
	s := Sample{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	s.Min, s.Max = math.Inf(1), math.Inf(-1)
	var sum float64
	for _, x := range xs {
		sum += x
		s.Min = math.Min(s.Min, x)
		s.Max = math.Max(s.Max, x)
	}
	s.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Std = math.Sqrt(ss / float64(len(xs)))
		s.StdSample = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}

// Change describes b against a in the seed's words: "4.57% slower" or
// "0.25% faster (within the std dev noise)". higherIsBetter says which
// direction is faster (KB/s: true; seconds: false). The difference is
// within the noise when |mean(b) − mean(a)| ≤ the larger std dev.
func Change(a, b Sample, higherIsBetter bool) string {
	if a.N == 0 || b.N == 0 || a.Mean == 0 {
		return "-"
	}
	pct := (b.Mean - a.Mean) / a.Mean * 100
	word := "slower"
	switch {
	case pct == 0:
		word = "change"
	case (pct > 0) == higherIsBetter:
		word = "faster"
	}
	s := fmt.Sprintf("%.2f%% %s", math.Abs(pct), word)
	if math.Abs(b.Mean-a.Mean) <= math.Max(a.Std, b.Std) {
		s += " (within the std dev noise)"
	}
	return s
}
