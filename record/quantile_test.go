package record

import (
	"math"
	"testing"
)

// TestLinearQuantile: samples spread evenly over buckets give back their
// quantiles to within the interpolation's exactness (uniform within a
// bucket: exact), the lowest bucket and the overflow as documented, and
// nothing is allocated.
func TestLinearQuantile(t *testing.T) {
	h := NewLinear(10, 100, 200) // buckets [0,100), [100,110), ..., [190,200), 200+
	if got := h.Quantile(0.5); got != 0 {
		t.Errorf("empty: %v, want 0", got)
	}
	for v := uint64(100); v < 200; v++ { // 100 samples, one per tick: uniform
		h.Record(v)
	}
	for _, tc := range []struct{ q, want float64 }{{0, 100}, {0.25, 125}, {0.5, 150}, {0.9, 190}, {1, 200}} {
		if got := h.Quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	// The interquartile mean of a uniform [100, 200) is 150; trim 0 is the
	// exact mean (149.5: the integers 100..199).
	if got := h.TrimmedMean(0.25); math.Abs(got-150) > 1e-9 {
		t.Errorf("TrimmedMean(0.25) = %v, want 150", got)
	}
	if got := h.TrimmedMean(0); got != 149.5 {
		t.Errorf("TrimmedMean(0) = %v, want the exact mean 149.5", got)
	}
	// A tail far out moves the mean and barely the median or the IQM.
	for range 10 {
		h.Record(5000)
	}
	if got := h.Quantile(0.5); got < 150 || got > 156 {
		t.Errorf("median with 10 overflows: %v, want 150-156", got)
	}
	if got := h.TrimmedMean(0.25); got < 150 || got > 156 {
		t.Errorf("IQM with 10 overflows: %v, want 150-156", got)
	}
	if got := h.Quantile(0.99); got != 200 {
		t.Errorf("Quantile(0.99) in the overflow bucket: %v, want the overflow edge 200", got)
	}
	if a := testing.AllocsPerRun(100, func() { h.Quantile(0.5); h.TrimmedMean(0.25) }); a != 0 {
		t.Errorf("%v allocations, want 0", a)
	}
}

// TestLinearQuantileShift: the interpolated median follows a shift of
// the samples smaller than a bucket (what a drift statistic needs of a
// 128-tick bucket): a 1% shift of a spread distribution moves it by about 1%.
func TestLinearQuantileShift(t *testing.T) {
	med := func(scale float64) float64 {
		h := NewLinear(128, 64, 8256)
		for i := range 20000 { // a triangular spread around 3000 ticks
			u := float64(i%200)/200 + float64(i/200%100)/100
			h.Record(uint64(scale * (2000 + 1000*u)))
		}
		return h.Quantile(0.5)
	}
	a, b := med(1), med(1.01)
	if r := b/a - 1; r < 0.008 || r > 0.012 {
		t.Errorf("median %v → %v: %+.2f%%, want about +1%%", a, b, 100*r)
	}
}
