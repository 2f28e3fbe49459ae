package record

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HDR wraps an HdrHistogram for percentiles of a latency in one unit
// (nanoseconds or clock ticks) between 1 and max, at 3 significant digits.
// Values above max are clamped to max and counted in Clamped.
type HDR struct {
	h       *hdrhistogram.Histogram
	max     int64
	clamped uint64
}

var _ Recorder = (*HDR)(nil)

// NewHDR returns an HDR histogram for values in [0, max].
func NewHDR(max int64) *HDR {
	return &HDR{h: hdrhistogram.New(0, max, 3), max: max}
}

// Record adds one sample; it does not allocate.
func (h *HDR) Record(v uint64) {
	x := int64(v)
	if v > uint64(h.max) {
		x = h.max
		h.clamped++
	}
	_ = h.h.RecordValue(x)
}

// RecordSigned adds a signed sample, clamping negatives to 0.
func (h *HDR) RecordSigned(v int64) {
	if v < 0 {
		v = 0
	}
	h.Record(uint64(v))
}

// Clamped counts samples above max recorded as max.
func (h *HDR) Clamped() uint64 { return h.clamped }

// Histogram exposes the underlying HdrHistogram (for percentiles and logs).
func (h *HDR) Histogram() *hdrhistogram.Histogram { return h.h }

// Reset clears the histogram.
func (h *HDR) Reset() { h.h.Reset(); h.clamped = 0 }

// Pair records into two recorders (e.g. Linear for the table and HDR for percentiles).
type Pair struct{ A, B Recorder }

// Record adds v to both.
func (p Pair) Record(v uint64) { p.A.Record(v); p.B.Record(v) }

// Merge adds o's samples into h (HdrHistogram Merge); it returns the number
// of samples that fell outside h's range (none when both share a range).
func (h *HDR) Merge(o *HDR) int64 {
	h.clamped += o.clamped
	return h.h.Merge(o.h)
}

// Count is the number of samples recorded.
func (h *HDR) Count() int64 { return h.h.TotalCount() }
