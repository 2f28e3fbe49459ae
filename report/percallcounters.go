package report

// PerCallCounter is one hardware event counted around every recv call of
// a reader (readers[].counters: read with rdpmc before and after each
// call, like the cycles clock, so the count includes the reads' own few
// dozen instructions): its count per call in each call class of PerCall
// and PerCallClass. Each Latency holds event counts per call, not ns
// (despite its field names, as in per_call_ticks), with the full
// distribution in its HDR; MeanNs is the mean count per call.
type PerCallCounter struct {
	// Event is perf(1)'s name: "instructions", "cache-misses", …
	Event  string  `json:"event"`
	All    Latency `json:"all"`
	Data   Latency `json:"data"`
	EAGAIN Latency `json:"eagain"`
	Warm   Latency `json:"warm_eagain"`
	Cold   Latency `json:"cold_eagain"`
	First  Latency `json:"first"`
	Rest   Latency `json:"rest"`
	// Clamped counts calls whose count was above the histograms' range
	// (record.EventMax), recorded at its top.
	Clamped uint64 `json:"clamped,omitempty"`
}
