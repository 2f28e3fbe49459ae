package results

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rtload/rtload/record"
)

// LatencyFromHDR summarises h: count, min, mean, p50, p90, p99, p99.9 and
// max, in h's unit (nanoseconds by convention), and HDR, the histogram's
// V2 compressed base64 encoding so rounds can later be merged exactly
// (MergeLatency). Values are HdrHistogram's equivalent values (3
// significant digits for record.HDR). A nil or empty h gives the zero
// Latency.
func LatencyFromHDR(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	l := Latency{
		Count:  uint64(h.TotalCount()),
		MinNs:  h.Min(),
		MeanNs: h.Mean(),
		P50Ns:  h.ValueAtQuantile(50),
		P90Ns:  h.ValueAtQuantile(90),
		P99Ns:  h.ValueAtQuantile(99),
		P999Ns: h.ValueAtQuantile(99.9),
		MaxNs:  h.Max(),
	}
	// Encoding into memory fails only on a corrupt histogram; HDR then
	// stays empty and MergeLatency falls back to worst-round percentiles.
	if b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		l.HDR = string(b)
	}
	return l
}

// MergeLatency combines the Latency of several rounds. When every
// non-empty input carries its HDR encoding, the histograms are merged and
// the result is exact (exact true). Otherwise count, min, mean and max are
// still exact, but each percentile is the worst (largest) of the rounds and
// exact is false. Empty inputs are skipped; no input gives the zero Latency
// and exact true.
func MergeLatency(ls ...Latency) (l Latency, exact bool) {
	var nonEmpty []Latency
	for _, x := range ls {
		if x.Count > 0 {
			nonEmpty = append(nonEmpty, x)
		}
	}
	switch len(nonEmpty) {
	case 0:
		return Latency{}, true
	case 1:
		return nonEmpty[0], true
	}
	if h := mergeHDR(nonEmpty); h != nil {
		return LatencyFromHDR(h), true
	}
	l = Latency{MinNs: math.MaxInt64}
	var sum float64
	for _, x := range nonEmpty {
		l.Count += x.Count
		sum += x.MeanNs * float64(x.Count)
		l.MinNs = min(l.MinNs, x.MinNs)
		l.MaxNs = max(l.MaxNs, x.MaxNs)
		l.P50Ns = max(l.P50Ns, x.P50Ns)
		l.P90Ns = max(l.P90Ns, x.P90Ns)
		l.P99Ns = max(l.P99Ns, x.P99Ns)
		l.P999Ns = max(l.P999Ns, x.P999Ns)
	}
	l.MeanNs = sum / float64(l.Count)
	return l, false
}

// mergeHDR decodes and merges every HDR encoding, or returns nil if any is
// missing, undecodable or does not merge without drops.
func mergeHDR(ls []Latency) *hdrhistogram.Histogram {
	var acc *hdrhistogram.Histogram
	for _, x := range ls {
		if x.HDR == "" {
			return nil
		}
		h, err := hdrhistogram.Decode([]byte(x.HDR))
		if err != nil {
			return nil
		}
		if acc == nil {
			acc = h
			continue
		}
		if acc.Merge(h) != 0 {
			return nil
		}
	}
	return acc
}

// Percentile returns the lower edge of the bucket of s holding quantile q
// (0 ≤ q ≤ 1, clamped; NaN counts as 0): the smallest bucket whose
// cumulative count reaches ceil(q·n), at least 1, where n is the number of
// samples in the buckets. A quantile falling in the overflow bucket returns
// s.Overflow (printed "8256+"). An empty s returns 0. The answer is only as
// fine as the bucket width: the true value lies in [edge, edge+Width).
func Percentile(s record.Snapshot, q float64) uint64 {
	n := s.OverflowCount
	for _, c := range s.Counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	if !(q > 0) {
		q = 0
	}
	q = min(q, 1)
	rank := uint64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var cum uint64
	for i, c := range s.Counts {
		cum += c
		if cum >= rank {
			return s.Lower(i)
		}
	}
	return s.Overflow
}

// LatencyOf summarises h like LatencyFromHDR but straight from rtload's own
// histogram, without converting or encoding it (no HDR field): cheap
// enough for every interval of a soak run.
func LatencyOf(h *record.HDR) Latency {
	if h == nil || h.Count() == 0 {
		return Latency{}
	}
	return Latency{Count: uint64(h.Count()), MinNs: int64(h.Min()), MeanNs: h.Mean(),
		P50Ns: int64(h.Quantile(0.50)), P90Ns: int64(h.Quantile(0.90)), P99Ns: int64(h.Quantile(0.99)),
		P999Ns: int64(h.Quantile(0.999)), MaxNs: int64(h.Max())}
}
