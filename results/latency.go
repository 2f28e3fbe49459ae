package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rtload/rtload/results/safeio"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rtload/rtload/record"
)

// The one percentile definition of rtload (README "Results format"):
//
// For n samples and 0 < q < 1 the percentile p(q) is the sample of rank
// r = ⌊q·n + 0.5⌋, at least 1 and at most n, in ascending order
// (HdrHistogram's ValueAtPercentile rank). From an HdrHistogram (3
// significant digits: exact below 2048, else a bucket 1/1024 of the value
// wide) it is the highest value of the bucket holding that sample, but
// never more than the exact maximum nor less than the exact minimum. Min,
// max and mean are exact (the recorders keep them beside the buckets).
// From a linear histogram only the bucket is known: BucketPercentile gives
// the lower edge of the bucket holding the same sample, and tables that
// print it say so.
//
// Every output (the terminal report, summary.json, intervals.jsonl, the
// live line, compare, explain, plot) takes its numbers from the functions
// here, so one quantity has one number everywhere.

// Quantiles are the quantiles every summary carries (p50, p90, p99,
// p99.9), in print order.
var Quantiles = [4]float64{0.50, 0.90, 0.99, 0.999}

// Quantity names one number of a Latency or TickStats.
type Quantity int

// Quantities of a summary, in print order.
const (
	Min Quantity = iota
	Mean
	P50
	P90
	P99
	P999
	Max
)

// AllQuantities lists every Quantity in print order.
var AllQuantities = []Quantity{Min, Mean, P50, P90, P99, P999, Max}

// String names q as the report prints it: "min", "mean", "p50", "p90",
// "p99", "p99.9", "max".
func (q Quantity) String() string {
	switch q {
	case Min:
		return "min"
	case Mean:
		return "mean"
	case P50:
		return "p50"
	case P90:
		return "p90"
	case P99:
		return "p99"
	case P999:
		return "p99.9"
	case Max:
		return "max"
	}
	return fmt.Sprintf("Quantity(%d)", int(q))
}

// rank is the 1-based rank of the sample at quantile q of n samples (the
// definition above); q is clamped to [0, 1] and NaN counts as 0.
func rank(q float64, n uint64) uint64 {
	if !(q > 0) {
		q = 0
	}
	r := q*float64(n) + 0.5
	if r >= float64(n) {
		return n
	}
	return max(uint64(r), 1)
}

// dist is a distribution's numbers in its own unit, before they are put
// in a Latency (ns) or a TickStats (clock ticks).
type dist struct {
	count    uint64
	min, max uint64
	mean     float64
	q        [len(Quantiles)]uint64
	hdr      string
}

// quantileWalk fills a dist's quantiles from its buckets in ascending
// order (add, once per bucket, until it returns false; then done). It is
// a value the bucket loops call directly rather than a callback handed to
// them, so that summarising a histogram allocates nothing: a soak's
// writer does it for every interval (issue 12).
type quantileWalk struct {
	d     *dist
	ranks [len(Quantiles)]uint64
	next  int
	cum   uint64
}

// walkQuantiles starts filling d.q from d.count, d.min and d.max.
func walkQuantiles(d *dist) quantileWalk {
	w := quantileWalk{d: d}
	for i, q := range Quantiles {
		w.ranks[i] = rank(q, d.count)
	}
	if d.count == 0 {
		w.next = len(w.ranks) // nothing to fill
	}
	return w
}

// add counts the next bucket (highest value hi, count samples) and
// reports whether a quantile is still unfilled.
func (w *quantileWalk) add(hi, count uint64) bool {
	w.cum += count
	for w.next < len(w.ranks) && w.cum >= w.ranks[w.next] {
		w.d.q[w.next] = min(max(hi, w.d.min), w.d.max)
		w.next++
	}
	return w.next < len(w.ranks)
}

// done gives the quantiles the buckets did not reach the max (counts short
// of count: a corrupt input).
func (w *quantileWalk) done() {
	if w.d.count == 0 {
		return
	}
	for ; w.next < len(w.ranks); w.next++ {
		w.d.q[w.next] = w.d.max
	}
}

// distOf summarises h; with encode it also carries the HdrHistogram
// encoding (allocates; off the real-time thread). Without, it allocates
// nothing.
func distOf(h *record.HDR, encode bool) dist {
	if h == nil || h.Count() == 0 {
		return dist{}
	}
	d := dist{count: uint64(h.Count()), min: h.Min(), max: h.Max(), mean: h.Mean()}
	w := walkQuantiles(&d)
	more := true
	h.Buckets(func(lo, width, count uint64) {
		if more {
			more = w.add(lo+width-1, count)
		}
	})
	w.done()
	if encode {
		d.hdr = encodeHistogram(h.Histogram())
	}
	return d
}

// distOfHistogram summarises an hdrhistogram-go histogram whose exact
// min and max are known (exact) or not (then its bucket edges are used).
func distOfHistogram(h *hdrhistogram.Histogram, minV, maxV uint64, exact bool) dist {
	if h == nil || h.TotalCount() <= 0 {
		return dist{}
	}
	d := dist{count: uint64(h.TotalCount()), mean: h.Mean(), min: minV, max: maxV}
	if !exact {
		d.min, d.max = uint64(max(h.Min(), 0)), uint64(max(h.Max(), 0))
	}
	w := walkQuantiles(&d)
	for _, b := range h.Distribution() {
		if b.Count > 0 && !w.add(uint64(max(b.To, 0)), uint64(b.Count)) {
			break
		}
	}
	w.done()
	d.hdr = encodeHistogram(h)
	return d
}

// encodeHistogram is h's V2 compressed base64 encoding (the .hlog line
// format), or "" when it does not encode (a corrupt histogram: merges then
// fall back to worst-round percentiles).
func encodeHistogram(h *hdrhistogram.Histogram) string {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// DecodeHDR decodes an HdrHistogram V2 compressed base64 encoding, as
// summary.json and .hlog lines hold it. Errors: longer than MaxHDRBytes,
// a geometry past MaxHDRCounts (CheckHDR, before anything is allocated),
// or not a valid encoding.
func DecodeHDR(enc string) (*hdrhistogram.Histogram, error) {
	if err := safeio.CheckHDR(enc); err != nil {
		return nil, fmt.Errorf("decode hdr: %w", err)
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		return nil, fmt.Errorf("decode hdr: %w", err)
	}
	return h, nil
}

// merge combines several rounds' dists. When every non-empty one carries
// its encoding the histograms are merged and the result is exact (exact
// true); otherwise count, min, mean and max are still exact but each
// percentile is the worst (largest) round's.
func merge(ds []dist) (dist, bool) {
	var in []dist
	for _, d := range ds {
		if d.count > 0 {
			in = append(in, d)
		}
	}
	switch len(in) {
	case 0:
		return dist{}, true
	case 1:
		return in[0], true
	}
	out := dist{min: math.MaxUint64}
	var sum float64
	for _, d := range in {
		out.count += d.count
		sum += d.mean * float64(d.count)
		out.min, out.max = min(out.min, d.min), max(out.max, d.max)
		for i := range out.q {
			out.q[i] = max(out.q[i], d.q[i])
		}
	}
	out.mean = sum / float64(out.count)
	h, err := mergeHDR(in)
	if err != nil {
		return out, false
	}
	m := distOfHistogram(h, out.min, out.max, true)
	m.count, m.mean = out.count, out.mean // exact, whatever the histogram says
	return m, true
}

// mergeHDR decodes and merges every encoding of ds.
func mergeHDR(ds []dist) (*hdrhistogram.Histogram, error) {
	var acc *hdrhistogram.Histogram
	for _, d := range ds {
		if d.hdr == "" {
			return nil, errors.New("a round carries no hdr")
		}
		h, err := DecodeHDR(d.hdr)
		if err != nil {
			return nil, err
		}
		if acc == nil {
			acc = h
			continue
		}
		if dropped := acc.Merge(h); dropped != 0 {
			return nil, fmt.Errorf("merge hdr: %d values out of range", dropped)
		}
	}
	return acc, nil
}

// Latency summarises a distribution of durations in nanoseconds (wakeup
// latency, drain time, one-way delay, send lag, time per write), by the
// percentile definition of this package: Count samples, exact MinNs,
// MeanNs and MaxNs, and P50Ns … P999Ns.
type Latency struct {
	Count  uint64  `json:"count"`
	MinNs  int64   `json:"min_ns"`
	MeanNs float64 `json:"mean_ns"`
	P50Ns  int64   `json:"p50_ns"`
	P90Ns  int64   `json:"p90_ns"`
	P99Ns  int64   `json:"p99_ns"`
	P999Ns int64   `json:"p99_9_ns"`
	MaxNs  int64   `json:"max_ns"`
	// HDR is the distribution itself: the HdrHistogram V2 compressed,
	// base64 encoding (the .hlog line format), so rounds can be merged
	// exactly. Empty when not recorded (interval records, checkpoints);
	// merges then fall back to worst-round percentiles and say so.
	HDR string `json:"hdr,omitempty"`
}

// TickStats summarises a distribution in clock ticks (per-call cost;
// Summary.Clock says what one tick is: a TSC tick is not a core cycle),
// by the same definition as Latency.
type TickStats struct {
	Count     uint64  `json:"count"`
	MinTicks  uint64  `json:"min_ticks"`
	MeanTicks float64 `json:"mean_ticks"`
	P50Ticks  uint64  `json:"p50_ticks"`
	P90Ticks  uint64  `json:"p90_ticks"`
	P99Ticks  uint64  `json:"p99_ticks"`
	P999Ticks uint64  `json:"p99_9_ticks"`
	MaxTicks  uint64  `json:"max_ticks"`
	HDR       string  `json:"hdr,omitempty"`
}

func toNs(v uint64) int64 { return int64(min(v, math.MaxInt64)) }

func fromNs(v int64) uint64 { return uint64(max(v, 0)) }

func (d dist) latency() Latency {
	return Latency{Count: d.count, MinNs: toNs(d.min), MeanNs: d.mean, P50Ns: toNs(d.q[0]), P90Ns: toNs(d.q[1]),
		P99Ns: toNs(d.q[2]), P999Ns: toNs(d.q[3]), MaxNs: toNs(d.max), HDR: d.hdr}
}

func (l Latency) dist() dist {
	return dist{count: l.Count, min: fromNs(l.MinNs), mean: l.MeanNs, max: fromNs(l.MaxNs), hdr: l.HDR,
		q: [4]uint64{fromNs(l.P50Ns), fromNs(l.P90Ns), fromNs(l.P99Ns), fromNs(l.P999Ns)}}
}

func (d dist) ticks() TickStats {
	return TickStats{Count: d.count, MinTicks: d.min, MeanTicks: d.mean, P50Ticks: d.q[0], P90Ticks: d.q[1],
		P99Ticks: d.q[2], P999Ticks: d.q[3], MaxTicks: d.max, HDR: d.hdr}
}

func (t TickStats) dist() dist {
	return dist{count: t.Count, min: t.MinTicks, mean: t.MeanTicks, max: t.MaxTicks, hdr: t.HDR,
		q: [4]uint64{t.P50Ticks, t.P90Ticks, t.P99Ticks, t.P999Ticks}}
}

// at returns quantity q of d.
func (d dist) at(q Quantity) float64 {
	switch q {
	case Min:
		return float64(d.min)
	case Mean:
		return d.mean
	case P50, P90, P99, P999:
		return float64(d.q[q-P50])
	}
	return float64(d.max)
}

// Ns returns quantity q of l in ns.
func (l Latency) Ns(q Quantity) float64 { return l.dist().at(q) }

// Ticks returns quantity q of t in clock ticks.
func (t TickStats) Ticks(q Quantity) float64 { return t.dist().at(q) }

// LatencyOf summarises h (values in ns); with hdr it also carries h's
// encoding, for summary.json (allocates). A nil or empty h gives the zero
// Latency.
func LatencyOf(h *record.HDR, hdr bool) Latency { return distOf(h, hdr).latency() }

// TickStatsOf summarises h (values in clock ticks) like LatencyOf.
func TickStatsOf(h *record.HDR, hdr bool) TickStats { return distOf(h, hdr).ticks() }

// WakeupLatencyRange is the largest wakeup latency the engine's recorder
// holds apart (ns); larger ones are recorded as this value.
const WakeupLatencyRange = int64(10e9)

// LatencyFromHistogram summarises an hdrhistogram-go histogram of ns
// values read from another tool's file (an .hlog, cyclictest -h), with its
// encoding. Its exact min is unknown, so it is the lowest bucket's lowest
// value; maxNs > 0 gives the exact max (an .hlog's Interval_Max as rtload
// writes it), else it is the highest bucket's highest value.
func LatencyFromHistogram(h *hdrhistogram.Histogram, maxNs int64) Latency {
	if h == nil || h.TotalCount() <= 0 {
		return Latency{}
	}
	minV, maxV := uint64(max(h.Min(), 0)), uint64(max(h.Max(), 0))
	if maxNs > 0 {
		maxV = uint64(maxNs)
	}
	return distOfHistogram(h, minV, maxV, true).latency()
}

// MergeLatency combines the Latency of several rounds. When every
// non-empty input carries its HDR encoding the result is exact (exact
// true): the histograms merged, min, max, count and mean exact. Otherwise
// count, min, mean and max are still exact, but each percentile is the
// worst (largest) of the rounds and exact is false. Empty inputs are
// skipped; no input gives the zero Latency and exact true.
func MergeLatency(ls ...Latency) (l Latency, exact bool) {
	d, exact := mergeOf(ls, Latency.dist)
	return d.latency(), exact
}

// CountOver is how many of l's samples lie above ns: from its HDR, the
// samples of every bucket whose lowest value is above ns (a sample within
// a bucket's width of ns, 0.1% of it past 2048 ns, may be left out). ok
// is false when l has samples up to past ns and no HDR to count them
// from (or an HDR that does not decode); with none past ns (MaxNs ≤ ns)
// it is 0 and ok without one. It is how a gate counts the wakeups later
// than a threshold the reader itself did not count (Reader.Spikes counts
// those over its own readers[].threshold).
func (l Latency) CountOver(ns int64) (uint64, bool) {
	if l.Count == 0 || l.MaxNs <= ns {
		return 0, true
	}
	if l.HDR == "" {
		return 0, false
	}
	h, err := DecodeHDR(l.HDR)
	if err != nil {
		return 0, false
	}
	var n uint64
	for _, b := range h.Distribution() {
		if b.From > ns && b.Count > 0 {
			n += uint64(b.Count)
		}
	}
	return n, true
}

// MergeTickStats combines several rounds' TickStats like MergeLatency.
func MergeTickStats(ts ...TickStats) (t TickStats, exact bool) {
	d, exact := mergeOf(ts, TickStats.dist)
	return d.ticks(), exact
}

// mergeOf merges the dists of xs.
func mergeOf[T any](xs []T, toDist func(T) dist) (dist, bool) {
	ds := make([]dist, len(xs))
	for i, x := range xs {
		ds[i] = toDist(x)
	}
	return merge(ds)
}

// UnmarshalJSON reads a TickStats, also in the form summary.json and
// intervals.jsonl version 1 wrote it: the same numbers under *_ns names
// ("min_ns", "p99_ns", …), although they were clock ticks.
func (t *TickStats) UnmarshalJSON(b []byte) error {
	type plain TickStats
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var old struct {
		MinNs  *uint64  `json:"min_ns"`
		MeanNs *float64 `json:"mean_ns"`
		P50Ns  *uint64  `json:"p50_ns"`
		P90Ns  *uint64  `json:"p90_ns"`
		P99Ns  *uint64  `json:"p99_ns"`
		P999Ns *uint64  `json:"p99_9_ns"`
		MaxNs  *uint64  `json:"max_ns"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	*t = TickStats(v)
	for _, f := range []struct {
		dst *uint64
		src *uint64
	}{{&t.MinTicks, old.MinNs}, {&t.P50Ticks, old.P50Ns}, {&t.P90Ticks, old.P90Ns}, {&t.P99Ticks, old.P99Ns},
		{&t.P999Ticks, old.P999Ns}, {&t.MaxTicks, old.MaxNs}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if old.MeanNs != nil {
		t.MeanTicks = *old.MeanNs
	}
	return nil
}

// BucketPercentile returns the lower edge of the bucket of s holding the
// sample at quantile q (the rank of this package's definition), or
// s.Overflow when that sample is in the overflow bucket (printed "8256+").
// An empty s returns 0. It is a bucket edge, not a value: the sample lies
// in [edge, edge+Width).
func BucketPercentile(s record.Snapshot, q float64) uint64 {
	n := s.OverflowCount
	for _, c := range s.Counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	r := rank(min(q, 1), n)
	var cum uint64
	for i, c := range s.Counts {
		cum += c
		if cum >= r {
			return s.Lower(i)
		}
	}
	return s.Overflow
}
