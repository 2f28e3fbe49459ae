package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	// Wakeups, Overruns, Calls, Data, EAGAIN, Messages, Lost in the interval.
	Wakeups  uint64 `json:"wakeups"`
	Overruns uint64 `json:"overruns"`
	Calls    uint64 `json:"calls"`
	Data     uint64 `json:"data_calls"`
	EAGAIN   uint64 `json:"eagain_calls"`
	Messages uint64 `json:"messages_received"`
	Lost     uint64 `json:"messages_lost"`
	// Sent is messages sent to this reader's endpoints in the interval.
	Sent uint64 `json:"messages_sent"`
	// PerCallTicks (clock ticks), WakeupLatency and Drain (ns).
	PerCallTicks  Latency `json:"per_call_ticks"`
	WakeupLatency Latency `json:"wakeup_latency"`
	Drain         Latency `json:"drain"`
	// Spikes is wakeups above the reader's threshold in the interval.
	Spikes uint64 `json:"spikes"`
	// Counters are the reader thread's perf_event_open counters over the
	// interval (deltas; see Reader.Counters).
	Counters []Counter `json:"counters,omitempty"`
	// CPUInterrupts is what the reader's CPU served in the interval.
	CPUInterrupts *CPUInterrupts `json:"cpu_interrupts,omitempty"`
	// Noise is each source's work in the interval.
	Noise []NoiseInterval `json:"noise,omitempty"`
	// Process state at the end of the interval: resident memory, open fds,
	// goroutines, and GC cycles so far.
	RSSBytes   int64  `json:"rss_bytes"`
	FDs        int    `json:"fds"`
	Goroutines int    `json:"goroutines"`
	GCCycles   uint32 `json:"gc_cycles"`
	// LateHandoffs counts interval ends the writer was too slow for (the
	// interval then grew; nothing was lost).
	LateHandoffs uint64 `json:"late_handoffs"`
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

// JSONLWriter appends JSON records, one per line, each in a single
// write(2), so a crash can tear only the last line. Sync fsyncs.
type JSONLWriter struct {
	f   *os.File
	buf bytes.Buffer
}

// CreateJSONL creates (or truncates) path.
func CreateJSONL(path string) (*JSONLWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &JSONLWriter{f: f}, nil
}

// Write appends v as one line.
func (w *JSONLWriter) Write(v any) error {
	if w == nil || w.f == nil {
		return os.ErrClosed
	}
	w.buf.Reset()
	if err := json.NewEncoder(&w.buf).Encode(v); err != nil {
		return err
	}
	_, err := w.f.Write(w.buf.Bytes())
	return err
}

// Sync fsyncs the file.
func (w *JSONLWriter) Sync() error {
	if w == nil || w.f == nil {
		return nil
	}
	return w.f.Sync()
}

// Close syncs and closes; idempotent.
func (w *JSONLWriter) Close() error {
	if w == nil || w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

// ReadJSONL decodes every line of path into values made by newV, calling
// add for each. A torn last line (a writer killed mid-write) is skipped and
// reported in torn; a bad line anywhere else is an error naming its line.
func ReadJSONL[T any](path string) (out []T, torn int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	line := 0
	for {
		b, rerr := r.ReadBytes('\n')
		if len(b) > 0 {
			line++
			var v T
			if jerr := json.Unmarshal(b, &v); jerr != nil {
				// Only the very last line may be torn (no newline, or cut short).
				if _, peekErr := r.Peek(1); errors.Is(peekErr, io.EOF) {
					return out, 1, nil
				}
				return out, 0, fmt.Errorf("%s:%d: %w", path, line, jerr)
			}
			out = append(out, v)
		}
		if rerr == io.EOF {
			return out, 0, nil
		}
		if rerr != nil {
			return out, 0, rerr
		}
	}
}
