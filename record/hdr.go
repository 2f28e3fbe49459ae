package record

import (
	"math/bits"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HDR is a log-linear histogram with HdrHistogram's layout at 3
// significant digits (2048 sub-buckets per power of two): values below
// 2048 are exact, larger ones fall in buckets 1/1024 of their magnitude
// wide. Record is written by hand for the measured path — //go:nosplit, no
// allocation, no preemption point, so the Go runtime can never deschedule a
// real-time thread inside it — and Histogram converts to a
// github.com/HdrHistogram/hdrhistogram-go Histogram (bucket midpoints) for
// percentiles, encoding and logs, off the real-time thread. Values above
// max are recorded as max and counted in Clamped. Single writer.
type HDR struct {
	counts  []uint64
	max     uint64
	total   uint64
	sum     uint64
	min     uint64
	vmax    uint64
	clamped uint64
}

var _ Recorder = (*HDR)(nil)

const (
	hdrSubBits = 11 // 2048 sub-buckets: 3 significant digits
	hdrSub     = 1 << hdrSubBits
	hdrHalf    = hdrSub / 2
)

// hdrIndex maps v to its bucket index.
//
//go:nosplit
func hdrIndex(v uint64) int {
	if v < hdrSub {
		return int(v)
	}
	shift := bits.Len64(v) - hdrSubBits // ≥ 1
	top := v >> uint(shift)             // in [1024, 2048)
	return hdrSub + (shift-1)*hdrHalf + int(top-hdrHalf)
}

// hdrBounds returns the lowest value of bucket i and its width.
func hdrBounds(i int) (lo, width uint64) {
	if i < hdrSub {
		return uint64(i), 1
	}
	j := i - hdrSub
	shift := uint(j/hdrHalf + 1)
	top := uint64(j%hdrHalf + hdrHalf)
	return top << shift, 1 << shift
}

// NewHDR returns a histogram for values in [0, max] (max ≥ 1). Every page
// of its counts is written once here (see prefault), so recording never
// takes a page fault.
func NewHDR(max int64) *HDR {
	if max < 1 {
		max = 1
	}
	h := &HDR{counts: make([]uint64, hdrIndex(uint64(max))+1), max: uint64(max), min: ^uint64(0)}
	prefault(h.counts)
	return h
}

// Record adds one sample. No allocation, no lock, no preemption point.
//
//go:nosplit
func (h *HDR) Record(v uint64) {
	if v > h.max {
		v = h.max
		h.clamped++
	}
	h.counts[hdrIndex(v)]++
	h.total++
	h.sum += v
	if v < h.min {
		h.min = v
	}
	if v > h.vmax {
		h.vmax = v
	}
}

// RecordSigned adds a signed sample, clamping negatives to 0.
//
//go:nosplit
func (h *HDR) RecordSigned(v int64) {
	if v < 0 {
		v = 0
	}
	h.Record(uint64(v))
}

// Clamped counts samples above max recorded as max.
func (h *HDR) Clamped() uint64 { return h.clamped }

// Count is the number of samples recorded.
func (h *HDR) Count() int64 { return int64(h.total) }

// Max is the largest sample recorded (exact), 0 when empty.
func (h *HDR) Max() uint64 { return h.vmax }

// Histogram returns an hdrhistogram-go Histogram holding the same samples
// (each bucket's count at its midpoint; the exact min and max are kept as
// samples of their own). It allocates: call it off the real-time thread.
func (h *HDR) Histogram() *hdrhistogram.Histogram {
	out := hdrhistogram.New(0, int64(max(h.max, 1)), 3)
	if h.total == 0 {
		return out
	}
	minI, maxI := hdrIndex(h.min), hdrIndex(h.vmax)
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		lo, w := hdrBounds(i)
		v := lo + w/2
		switch {
		case i == minI && i == maxI:
			// One bucket: keep min and max exact, the rest at the midpoint.
			if c == 1 {
				out.RecordValue(int64(h.min))
				continue
			}
			out.RecordValue(int64(h.min))
			out.RecordValue(int64(h.vmax))
			c -= 2
		case i == minI:
			out.RecordValue(int64(h.min))
			c--
		case i == maxI:
			out.RecordValue(int64(h.vmax))
			c--
		}
		if c > 0 {
			out.RecordValues(int64(min(v, h.max)), int64(c))
		}
	}
	return out
}

// Reset clears the histogram.
func (h *HDR) Reset() {
	clear(h.counts)
	h.total, h.sum, h.vmax, h.clamped = 0, 0, 0, 0
	h.min = ^uint64(0)
}

// Merge adds o's samples into h; it returns the number of o's samples that
// were above h's max (recorded as max).
func (h *HDR) Merge(o *HDR) int64 {
	var over int64
	for i, c := range o.counts {
		if c == 0 {
			continue
		}
		if i >= len(h.counts) {
			h.counts[len(h.counts)-1] += c
			over += int64(c)
			continue
		}
		h.counts[i] += c
	}
	h.total += o.total
	h.sum += o.sum
	h.clamped += o.clamped + uint64(over)
	if o.total > 0 {
		h.min = min(h.min, o.min)
		h.vmax = max(h.vmax, min(o.vmax, h.max))
	}
	return over
}

// Quantile returns the value at quantile q (0–1): the midpoint of the
// bucket holding it (exact below 2048), the exact max for q ≥ 1, 0 when
// empty. No allocation.
func (h *HDR) Quantile(q float64) uint64 {
	if h.total == 0 {
		return 0
	}
	if q >= 1 {
		return h.vmax
	}
	if q <= 0 {
		return h.min
	}
	rank := uint64(q*float64(h.total) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, w := hdrBounds(i)
			v := lo + w/2
			return min(max(v, h.min), h.vmax)
		}
	}
	return h.vmax
}

// Mean returns the exact mean of the samples, 0 when empty.
func (h *HDR) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.total)
}

// Min returns the smallest sample (exact), 0 when empty.
func (h *HDR) Min() uint64 {
	if h.total == 0 {
		return 0
	}
	return h.min
}

// Buckets calls f for every non-empty bucket in order with its lowest
// value, width and count. No allocation.
func (h *HDR) Buckets(f func(lo, width, count uint64)) {
	for i, c := range h.counts {
		if c > 0 {
			lo, w := hdrBounds(i)
			f(lo, w, c)
		}
	}
}
