package results

import (
	"fmt"
	"strings"
)

// WakeupLogHeader is the first line of every chunk of a per-wakeup log.
// Columns, one row per real-time wakeup (record.Wakeup): tick number k,
// absolute deadline (CLOCK_MONOTONIC ns), wake latency (ns), drain time
// (ns), messages received, recv calls, calls returning EAGAIN, ticks
// missed before this one, and the reader thread's voluntary and
// involuntary context switches since the previous wakeup
// (getrusage(RUSAGE_THREAD) at the tick boundary).
const WakeupLogHeader = "tick,deadline_ns,latency_ns,drain_ns,messages,calls,eagain,missed,vol_cs,invol_cs"

// WakeupLogHeaderV1 is the header of logs written before the context-switch
// columns; readers accept it (VolCS and InvolCS read as 0).
const WakeupLogHeaderV1 = "tick,deadline_ns,latency_ns,drain_ns,messages,calls,eagain,missed"

// wakeupHeaderColumns returns the column count of a known header, or 0.
func wakeupHeaderColumns(h string) int {
	switch h {
	case WakeupLogHeader:
		return 10
	case WakeupLogHeaderV1:
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

// WakeupLogBase is the file name base of the per-wakeup log of reader
// reader in trial index (variant, round): "wakeups-<index>-<variant>-
// r<round>-<reader>", names made file-safe (every byte other than
// [A-Za-z0-9._-] becomes '_'). The engine names logs with it; summary.json
// then lists each reader's files (Reader.WakeupLog), which is how every
// reader of results finds them.
func WakeupLogBase(index int, variant string, round int, reader string) string {
	return fmt.Sprintf("wakeups-%02d-%s-r%d-%s", index, fileSafe(variant), round, fileSafe(reader))
}

// fileSafe maps s to a file-name-safe form.
func fileSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// wakeupLogBaseOf is the base of a log file name: "<base>.csv",
// "<base>.<n>.csv" and "<base>.<n>.csv.gz" give <base>.
func wakeupLogBaseOf(name string) string {
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".csv")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		digits := name[i+1:]
		if digits != "" && strings.Trim(digits, "0123456789") == "" {
			return name[:i]
		}
	}
	return name
}
