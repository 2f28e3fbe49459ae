package results

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rtload/rtload/record"
)

// WakeupCSVHeader is the first line of a per-wakeup log. Columns, one row
// per real-time wakeup (record.Wakeup): tick number k, absolute deadline
// (CLOCK_MONOTONIC ns), wake latency (ns), drain time (ns), messages
// received, recv calls, calls returning EAGAIN, ticks missed before this
// one, and the reader thread's voluntary and involuntary context switches
// since the previous wakeup (getrusage(RUSAGE_THREAD) at the tick boundary).
const WakeupCSVHeader = "tick,deadline_ns,latency_ns,drain_ns,messages,calls,eagain,missed,vol_cs,invol_cs"

// WakeupCSVHeaderV1 is the header of logs written before the context-switch
// columns; readers accept it (VolCS and InvolCS read as 0).
const WakeupCSVHeaderV1 = "tick,deadline_ns,latency_ns,drain_ns,messages,calls,eagain,missed"

// wakeupHeaderColumns returns the column count of a known header, or 0.
func wakeupHeaderColumns(h string) int {
	switch h {
	case WakeupCSVHeader:
		return 10
	case WakeupCSVHeaderV1:
		return 8
	}
	return 0
}

// wakeupCSVBuffer is the bufio size: about a thousand rows per write(2).
const wakeupCSVBuffer = 64 << 10

// WakeupCSV streams record.Wakeup rows to a CSV file (wakeups-<variant>.csv
// in a results directory). It belongs to one goroutine, the non-real-time
// writer draining the ring; Write does not allocate.
type WakeupCSV struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	row  []byte // reused row buffer
}

// CreateWakeupCSV creates (or truncates) path and writes the header.
func CreateWakeupCSV(path string) (*WakeupCSV, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("wakeup csv: %w", err)
	}
	w := &WakeupCSV{
		path: path,
		f:    f,
		bw:   bufio.NewWriterSize(f, wakeupCSVBuffer),
		row:  make([]byte, 0, 128),
	}
	if _, err := w.bw.WriteString(WakeupCSVHeader + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("wakeup csv %s: %w", path, err)
	}
	return w, nil
}

// Write appends one row. It formats with strconv into a reused buffer and
// does not allocate (except to build an error). Write after Close fails
// with os.ErrClosed.
func (w *WakeupCSV) Write(r *record.Wakeup) error {
	if w.f == nil {
		return fmt.Errorf("wakeup csv %s: %w", w.path, os.ErrClosed)
	}
	b := appendWakeupRow(w.row[:0], r)
	w.row = b
	if _, err := w.bw.Write(b); err != nil {
		return fmt.Errorf("wakeup csv %s: %w", w.path, err)
	}
	return nil
}

// Close flushes, fsyncs and closes the file. It is idempotent: later
// calls return nil.
func (w *WakeupCSV) Close() error {
	if w.f == nil {
		return nil
	}
	f := w.f
	w.f = nil
	err := errors.Join(w.bw.Flush(), f.Sync(), f.Close())
	if err != nil {
		return fmt.Errorf("wakeup csv %s: close: %w", w.path, err)
	}
	return nil
}

// ReadWakeupCSV reads a whole per-wakeup log written by WakeupCSV. Errors
// name the file and line ("wakeups-A.csv:12: latency_ns: …").
//
// A chunk of a rotating log (".csv.gz" or ".csv") is read the same way;
// a torn last line (a writer killed mid-row) is skipped.
func ReadWakeupCSV(path string) ([]record.Wakeup, error) {
	if strings.HasSuffix(path, ".gz") || isChunkName(path) {
		var out []record.Wakeup
		_, err := readWakeupChunk(path, strings.HasSuffix(path, ".gz"), true, &out)
		return out, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("wakeup csv: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	var out []record.Wakeup
	names := strings.Split(WakeupCSVHeader, ",")
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			n := wakeupHeaderColumns(text)
			if n == 0 {
				return nil, fmt.Errorf("%s:1: header %q, want %q", path, text, WakeupCSVHeader)
			}
			names = names[:n]
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) != len(names) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", path, line, len(fields), len(names))
		}
		var r record.Wakeup
		var u [10]uint64
		var s [3]int64
		for i, fld := range fields {
			var err error
			switch i {
			case 1, 2, 3:
				s[i-1], err = strconv.ParseInt(fld, 10, 64)
			case 0:
				u[i], err = strconv.ParseUint(fld, 10, 64)
			default:
				u[i], err = strconv.ParseUint(fld, 10, 32)
			}
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %w", path, line, names[i], err)
			}
		}
		r.Tick = u[0]
		r.DeadlineNs, r.LatencyNs, r.DrainNs = s[0], s[1], s[2]
		r.Messages, r.Calls, r.EAGAIN, r.Missed = uint32(u[4]), uint32(u[5]), uint32(u[6]), uint32(u[7])
		r.VolCS, r.InvolCS = uint32(u[8]), uint32(u[9])
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%s: empty, want header %q", path, WakeupCSVHeader)
	}
	return out, nil
}

// isChunkName reports whether path looks like an open chunk "<base>.NNNN.csv".
func isChunkName(path string) bool {
	name := strings.TrimSuffix(path, ".csv")
	i := strings.LastIndexByte(name, '.')
	if i < 0 || len(name)-i-1 < 4 {
		return false
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
