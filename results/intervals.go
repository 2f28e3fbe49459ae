package results

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// IntervalsFile is the interval log of a soak run, one JSON object a line.
const IntervalsFile = "intervals.jsonl"

// SpikesFile logs every wakeup above a reader's threshold, one JSON object a line.
const SpikesFile = "spikes.jsonl"

// Interval is one reader's record for one interval of a run (intervals.jsonl).
// Counts are for the interval alone; latency summaries cover its wakeups
// and calls only.
type Interval struct {
	Time    time.Time `json:"time"`
	Trial   int       `json:"trial"`
	Variant string    `json:"variant"`
	Round   int       `json:"round"`
	Reader  string    `json:"reader"`
	// Seq numbers the reader's intervals in the trial from 0; FromNs and
	// ToNs are the first and last deadline covered (CLOCK_MONOTONIC ns).
	Seq    int   `json:"seq"`
	FromNs int64 `json:"from_ns"`
	ToNs   int64 `json:"to_ns"`
	// Wakeups, Overruns (overrun events), MissedTicks (ticks skipped and
	// never run), BacklogSkips (catch-up overruns past the backlog limit),
	// Calls, Data, EAGAIN, Messages, Lost in the interval (see Reader).
	Wakeups      uint64 `json:"wakeups"`
	Overruns     uint64 `json:"overruns"`
	MissedTicks  uint64 `json:"missed_ticks"`
	BacklogSkips uint64 `json:"backlog_skips,omitempty"`
	Calls        uint64 `json:"calls"`
	Data         uint64 `json:"data_calls"`
	EAGAIN       uint64 `json:"eagain_calls"`
	Messages     uint64 `json:"messages_received"`
	Lost         uint64 `json:"messages_lost"`
	// Sent is messages sent to this reader's endpoints in the interval.
	Sent uint64 `json:"messages_sent"`
	// PerCallTicks (clock ticks), WakeupLatency and Drain (ns), without
	// HDR encodings.
	PerCallTicks  TickStats `json:"per_call_ticks"`
	WakeupLatency Latency   `json:"wakeup_latency"`
	Drain         Latency   `json:"drain"`
	// DataMeanTicks and EAGAINMeanTicks are the interval's mean cost of its
	// data calls and of its EAGAIN calls (clock ticks, exact; 0 without
	// such calls): the two kinds of call drift apart (the data path moves
	// with the sender's CPU and the caches, EAGAIN with the system-call
	// path), and PerCallTicks mixes them.
	DataMeanTicks   float64 `json:"data_mean_ticks,omitempty"`
	EAGAINMeanTicks float64 `json:"eagain_mean_ticks,omitempty"`
	// DataP50Ticks and EAGAINP50Ticks are the medians of the same calls,
	// DataIQMTicks and EAGAINIQMTicks their interquartile means (the mean
	// of the middle half), all interpolated within the buckets of the
	// reader's per-call histograms (record.Linear.Quantile, TrimmedMean:
	// report.bucket_width sets their resolution); 0 without such calls.
	// A median or a trimmed mean leaves out the calls a preemption or an
	// interrupt stretched, which a mean carries.
	DataP50Ticks   float64 `json:"data_p50_ticks,omitempty"`
	EAGAINP50Ticks float64 `json:"eagain_p50_ticks,omitempty"`
	DataIQMTicks   float64 `json:"data_iqm_ticks,omitempty"`
	EAGAINIQMTicks float64 `json:"eagain_iqm_ticks,omitempty"`
	// Controls are the drift controls of the interval's ticks (see
	// Reader.Controls; no HDR encodings, SkippedTicks the interval's);
	// nil when the reader times none.
	Controls *Controls `json:"controls,omitempty"`
	// Spikes is wakeups above the reader's threshold in the interval, among
	// the logged wakeups (spikes.jsonl's records of the interval).
	Spikes uint64 `json:"spikes"`
	// Counters are the reader thread's perf_event_open counters over the
	// interval (deltas; see Reader.Counters).
	Counters []Counter `json:"counters,omitempty"`
	// CPUInterrupts is what the reader's CPU served in the interval.
	CPUInterrupts *CPUInterrupts `json:"cpu_interrupts,omitempty"`
	// Noise is each source's work in the interval.
	Noise []NoiseInterval `json:"noise,omitempty"`
	// Process state at the end of the interval: resident memory, open fds,
	// goroutines, and GC cycles so far. RSSBytes and FDs are left out
	// (never 0 as if measured) when /proc could not be read for them;
	// ProcessUnknown then says why.
	RSSBytes       int64  `json:"rss_bytes,omitempty"`
	FDs            int    `json:"fds,omitempty"`
	ProcessUnknown string `json:"process_unknown,omitempty"`
	Goroutines     int    `json:"goroutines"`
	GCCycles       uint32 `json:"gc_cycles"`
	// GCRuns is the garbage collections the process ran since the
	// reader's previous record (a soak's writer collecting once its heap
	// grew by the headroom): its readers waited at their safe point
	// meanwhile. RSSBoundBytes is the resident memory the run keeps under
	// by design: its first interval's RSS, plus the soak's GC headroom,
	// plus 64 MiB.
	GCRuns        uint32 `json:"gc_runs,omitempty"`
	RSSBoundBytes int64  `json:"rss_bound_bytes,omitempty"`
	// Exporter is what the metrics endpoint (--metrics-addr) met in the
	// interval; nil without one.
	Exporter *ExporterInterval `json:"exporter,omitempty"`
	// Mark, when set, says how rtload itself may have disturbed the
	// interval: its own GC ran, its RSS passed RSSBoundBytes, or its
	// metrics endpoint met more than scrapes (a connection refused, or
	// more connections than requests served: a flood, or requests over
	// its limits). The trial's marks (Trial.Marks) sum them up.
	Mark string `json:"mark,omitempty"`
	// LateHandoffs counts interval ends the writer was too slow for (the
	// interval then grew; nothing was lost).
	LateHandoffs uint64 `json:"late_handoffs"`
	// Clocksource is the kernel clocksource at the end of the interval (as
	// the kernel watch last read it); Invalid, once the kernel changed
	// what the trial measures, says how (see MarkInvalid), in this
	// interval's record and every later one.
	Clocksource string `json:"clocksource,omitempty"`
	Invalid     string `json:"invalid,omitempty"`
}

// ExporterInterval is the metrics endpoint's work in an interval:
// connections accepted, those closed without a request served (over its
// header limit, timed out, not HTTP), requests served, and how often it
// held back accepting because descriptors ran short.
type ExporterInterval struct {
	Connections uint64 `json:"connections"`
	Refused     uint64 `json:"refused"`
	Requests    uint64 `json:"requests"`
	FDWaits     uint64 `json:"fd_waits,omitempty"`
}

// NoiseInterval is one noise source's work in an interval.
type NoiseInterval struct {
	Kind  string `json:"kind"`
	Unit  string `json:"unit"`
	Count uint64 `json:"count,omitempty"`
	State string `json:"state,omitempty"`
}

// Spike is one wakeup above a reader's threshold (spikes.jsonl), with what
// surrounded it.
type Spike struct {
	Time        time.Time `json:"time"`
	Trial       int       `json:"trial"`
	Variant     string    `json:"variant"`
	Reader      string    `json:"reader"`
	Tick        uint64    `json:"tick"`
	DeadlineNs  int64     `json:"deadline_ns"`
	LatencyNs   int64     `json:"latency_ns"`
	ThresholdNs int64     `json:"threshold_ns"`
	// DrainNs, Messages, Calls, EAGAIN describe the tick itself; Missed the
	// ticks skipped before it; PrevDrainNs the previous tick's drain time.
	DrainNs     int64  `json:"drain_ns"`
	PrevDrainNs int64  `json:"prev_drain_ns"`
	Messages    uint32 `json:"messages"`
	Calls       uint32 `json:"calls"`
	EAGAIN      uint32 `json:"eagain"`
	Missed      uint32 `json:"missed"`
	// Noise is each source's state ("on"/"off") when the writer saw the
	// spike (within ~50 ms of it).
	Noise []NoiseInterval `json:"noise,omitempty"`
	// BrokeTrace is true for the spike that stopped ftrace (breaktrace).
	BrokeTrace bool `json:"broke_trace,omitempty"`
}

// SpikesLimit is the default cap on spikes.jsonl (bytes): a soak with a
// low threshold writes about 400 bytes per spike. Spikes past the cap are
// still counted (Reader.Spikes) and the ones not written are counted in
// Reader.SpikesDropped.
const SpikesLimit = 64 << 20

// MaxJSONLLine is the longest line store.ReadJSONL accepts.
const MaxJSONLLine = 1 << 20

// MaxJSONLRecords bounds the records store.ReadJSONL returns: spikes.jsonl is
// capped at SpikesLimit bytes (records of about 400 bytes), an interval
// log holds one record per reader and interval.
const MaxJSONLRecords = 1 << 20

// MaxJSONLBytes is the largest JSONL file store.ReadJSONL reads: spikes.jsonl's
// cap (SpikesLimit), which the writer never passes (issue 34: the reader
// took any size, and 100 MB took explain to 3 GB). An interval log is not
// capped by its writer; one past this is refused too (no command reads
// one back).
const MaxJSONLBytes = SpikesLimit

// MaxJSONLMemory bounds the memory the records store.ReadJSONL returns may take
// decoded, as the summary pre-pass estimates it line by line (safeio.Bounds),
// each record counted twice for the growing slice: spikes.jsonl decodes
// to about its size (a 400-byte spike is a 160-byte Spike and its
// strings), while a line of `{}` is a whole record and `"noise":[{},…]`
// 56 bytes for every 3. store.EachJSONL holds no record and needs no such bound.
const MaxJSONLMemory = 128 << 20

// ProcessFile is the name of a run-wide file (IntervalsFile, SpikesFile)
// written by process p of a multi-process run: "spikes-p03.jsonl".
func ProcessFile(name string, p int) string {
	ext := filepath.Ext(name)
	return fmt.Sprintf("%s-p%02d%s", strings.TrimSuffix(name, ext), p, ext)
}
