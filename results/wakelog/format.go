package wakelog

// Header is the first line of every chunk of a per-wakeup log.
// Columns, one row per real-time wakeup (record.Wakeup): tick number k,
// absolute deadline (CLOCK_MONOTONIC ns), wake latency (ns), drain time
// (ns), messages received, recv calls, calls returning EAGAIN, ticks
// missed before this one, and the reader thread's voluntary and
// involuntary context switches since the previous wakeup
// (getrusage(RUSAGE_THREAD) at the tick boundary).
const Header = "tick,deadline_ns,latency_ns,drain_ns,messages,calls,eagain,missed,vol_cs,invol_cs"

// HeaderV1 is the header of logs written before the context-switch
// columns; readers accept it (VolCS and InvolCS read as 0).
const HeaderV1 = "tick,deadline_ns,latency_ns,drain_ns,messages,calls,eagain,missed"

// wakeupHeaderColumns returns the column count of a known header, or 0.
func wakeupHeaderColumns(h string) int {
	switch h {
	case Header:
		return 10
	case HeaderV1:
		return 8
	}
	return 0
}

// wakeupLogBuffer is the write and read buffer size: about a thousand rows
// per write(2). maxWakeupRow is the longest row (ten fields at their
// widest, commas and newline).
const (
	wakeupLogBuffer = 64 << 10
	maxWakeupRow    = 20 + 3*20 + 6*10 + 10
)
