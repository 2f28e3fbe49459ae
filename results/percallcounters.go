package results

import "github.com/rtload/rtload/record"

// PerCallCounter is one hardware event counted around every recv call of
// a reader (readers[].counters: read with rdpmc before and after each
// call, like the cycles clock, so each count includes the reads' own few
// dozen instructions): its count per call in each call class of PerCall
// and PerCallClass, as CountStats (event counts, not time).
type PerCallCounter struct {
	// Event is perf(1)'s name: "instructions", "cache-misses", …
	Event  string     `json:"event"`
	All    CountStats `json:"all"`
	Data   CountStats `json:"data"`
	EAGAIN CountStats `json:"eagain"`
	Warm   CountStats `json:"warm_eagain"`
	Cold   CountStats `json:"cold_eagain"`
	First  CountStats `json:"first"`
	Rest   CountStats `json:"rest"`
	// Clamped counts calls whose count was above the histograms' range
	// (record.EventMax), recorded at its top.
	Clamped uint64 `json:"clamped,omitempty"`
}

// CountStats summarises a distribution of event counts per call (no
// unit: instructions, cache misses, … per recv call), with the same
// percentile definition as Latency and TickStats.
type CountStats struct {
	Count     uint64  `json:"count"`
	MinCount  uint64  `json:"min"`
	MeanCount float64 `json:"mean"`
	P50Count  uint64  `json:"p50"`
	P90Count  uint64  `json:"p90"`
	P99Count  uint64  `json:"p99"`
	P999Count uint64  `json:"p99_9"`
	MaxCount  uint64  `json:"max"`
	HDR       string  `json:"hdr,omitempty"`
}

// CountStatsOf summarises h (values are event counts) like LatencyOf.
func CountStatsOf(h *record.HDR, hdr bool) CountStats { return distOf(h, hdr).counts() }

// MergeCountStats combines several rounds' CountStats like MergeLatency.
func MergeCountStats(cs ...CountStats) (c CountStats, exact bool) {
	d, exact := mergeOf(cs, CountStats.dist)
	return d.counts(), exact
}

// Value returns quantity q of c.
func (c CountStats) Value(q Quantity) float64 { return c.dist().at(q) }

func (d dist) counts() CountStats {
	return CountStats{Count: d.count, MinCount: d.min, MeanCount: d.mean, P50Count: d.q[0], P90Count: d.q[1],
		P99Count: d.q[2], P999Count: d.q[3], MaxCount: d.max, HDR: d.hdr}
}

func (c CountStats) dist() dist {
	return dist{count: c.Count, min: c.MinCount, mean: c.MeanCount, max: c.MaxCount, hdr: c.HDR,
		q: [4]uint64{c.P50Count, c.P90Count, c.P99Count, c.P999Count}}
}
