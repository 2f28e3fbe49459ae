package wakelog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// wakeupLogFile is one file of a log on disk.
type wakeupLogFile struct {
	name string // relative to the dir given to listWakeupLog
	seq  int    // -1 for a single unchunked file
	gz   bool
}

// listWakeupLog lists the files of log base in dir, in order, relative to
// dir: the chunks <base>.<n>.csv[.gz] by n, or the single file <base>.csv.
// Where a crash left chunk n both plain and compressed it lists the .gz,
// which is complete by construction. base may also name one file (ending
// in .csv or .csv.gz, possibly with a directory), which is listed alone.
// Errors: no file of base (wrapping fs.ErrNotExist), or both <base>.csv
// and chunks.
func listWakeupLog(dir, base string) ([]wakeupLogFile, error) {
	sub, b := filepath.Split(base)
	src, err := safeio.OpenSource(filepath.Join(dir, sub))
	if err != nil {
		return nil, fmt.Errorf("wakeup log %s: %w", filepath.Join(dir, base), err)
	}
	defer src.Close()
	if strings.HasSuffix(b, ".csv") || strings.HasSuffix(b, ".csv.gz") {
		if fi, err := src.Lstat(b); err == nil && fi.Mode().IsRegular() {
			return []wakeupLogFile{{name: base, seq: -1, gz: strings.HasSuffix(b, ".gz")}}, nil
		}
	}
	ents, err := src.Names(results.MaxDirEntries)
	if err != nil {
		return nil, fmt.Errorf("wakeup log %s: %w", filepath.Join(dir, base), err)
	}
	slices.Sort(ents)
	plain := false
	var chunks []wakeupLogFile
	for _, name := range ents {
		if name == b+".csv" {
			plain = true
			continue
		}
		seq, gz, ok := parseWakeupChunkName(b, name)
		if !ok {
			continue
		}
		f := wakeupLogFile{name: filepath.Join(sub, name), seq: seq, gz: gz}
		if i := slices.IndexFunc(chunks, func(c wakeupLogFile) bool { return c.seq == seq }); i >= 0 {
			if gz {
				chunks[i] = f
			}
			continue
		}
		chunks = append(chunks, f)
	}
	slices.SortFunc(chunks, func(a, b wakeupLogFile) int { return a.seq - b.seq })
	switch {
	case plain && len(chunks) > 0:
		return nil, fmt.Errorf("wakeup log %s: both %s.csv and %d chunks", filepath.Join(dir, base), b, len(chunks))
	case plain:
		return []wakeupLogFile{{name: filepath.Join(sub, b+".csv"), seq: -1}}, nil
	case len(chunks) == 0:
		return nil, fmt.Errorf("wakeup log %s: no %s.csv and no chunks: %w", filepath.Join(dir, base), b, fs.ErrNotExist)
	}
	return chunks, nil
}

// ReadStats says what a wakeup log reader read: files, rows returned, and
// torn rows skipped at the end of the newest chunk.
type ReadStats struct {
	Files    int
	Rows     int
	TornRows int
	// Torn says where the log's last line was cut short and how, naming
	// the file and line ("wakeups-p00-00-recvfrom-r0-rt.csv:841: last
	// line cut short (no newline; 7 of 10 fields): skipped"), "" when it
	// was not: a reader of results passes it on as a note.
	Torn string
}

// ReadLog reads every chunk of log base in dir in order (plain or
// gzip; see listWakeupLog for what base may name) and returns all rows:
// the log as it is on disk, also beyond a checkpoint's list of files. To
// read a reader's wakeups from a results directory, use ReaderWakeups.
func ReadLog(dir, base string) ([]record.Wakeup, ReadStats, error) {
	files, err := listWakeupLog(dir, base)
	if err != nil {
		return nil, ReadStats{}, err
	}
	for i := 1; i < len(files); i++ {
		if files[i].seq != files[i-1].seq+1 {
			return nil, ReadStats{}, fmt.Errorf("wakeup log %s: chunk %d missing between %s and %s",
				filepath.Join(dir, base), files[i-1].seq+1, files[i-1].name, files[i].name)
		}
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	return ReadFiles(dir, names)
}

// ReaderWakeups reads reader r's per-wakeup log from the results directory
// dir: exactly the files summary.json lists for it (Reader.WakeupLog), in
// order. A checkpoint may list a chunk as plain that was compressed after
// it was written: the .gz is read then. No files give no rows and no
// error. Every file is opened as Source.Open opens it (a link, a FIFO or
// a device is refused), and the rows read are bounded (see ReadFiles).
//
// It holds every row (RowBytes each, up to 2.25 times that while
// the slice grows: about 2 GiB at MaxRows): for tools and tests.
// The commands that read results stream a log instead (EachReaderWakeup,
// RowBudget), holding none of it.
func ReaderWakeups(dir string, r results.Reader) ([]record.Wakeup, ReadStats, error) {
	var out []record.Wakeup
	st, err := eachReaderWakeup(dir, r, MaxRows, func(w record.Wakeup) { out = append(out, w) })
	if err != nil {
		return nil, st, err
	}
	return out, st, nil
}

// RowBytes is the memory of one wakeup row held (record.Wakeup).
const RowBytes = int(unsafe.Sizeof(record.Wakeup{}))

// EachReaderWakeup reads reader r's per-wakeup log as ReaderWakeups does
// and calls f with each row, in order, holding none: its memory does not
// grow with the log. The log is read as it is parsed, so f may see rows
// of a log that then fails (a torn line in a closed chunk, a bad value, a
// bound passed): on an error, discard what f gathered.
func EachReaderWakeup(dir string, r results.Reader, f func(record.Wakeup)) (ReadStats, error) {
	return eachReaderWakeup(dir, r, MaxRows, f)
}

// MaxRowsTotal is the most wakeup rows a RowBudget lets one command
// read over all readers and results directories: a bound on its time
// (parsing 32 M rows takes about 3 s of CPU here), not its memory, for the
// commands stream the rows (explain, compare, report, check) or keep a
// bounded thinning of them (plot). Each chunk may be listed once in a
// summary (a name listed twice is refused), so the rows are at most what
// the directory's files inflate to.
const MaxRowsTotal = 1 << 25

// RowBudget bounds the wakeup rows one command reads, over every reader
// of every results directory it reads (NewRowBudget: MaxRowsTotal).
// Not safe for concurrent use.
type RowBudget struct{ left int }

// NewRowBudget returns a budget of MaxRowsTotal rows.
func NewRowBudget() *RowBudget { return &RowBudget{left: MaxRowsTotal} }

// EachReaderWakeup is EachReaderWakeup taking the rows read from
// the budget: a log that would pass what is left is refused with an error
// naming the limit (and takes nothing).
func (b *RowBudget) EachReaderWakeup(dir string, r results.Reader, f func(record.Wakeup)) (ReadStats, error) {
	if b.left <= 0 {
		return ReadStats{}, fmt.Errorf("wakeup log of %s not read: %d rows read already, the most one command reads", termsafe.Escape(r.Name), MaxRowsTotal)
	}
	st, err := eachReaderWakeup(dir, r, min(MaxRows, b.left), f)
	if err == nil {
		b.left -= st.Rows
	}
	return st, err
}

func eachReaderWakeup(dir string, r results.Reader, maxRows int, f func(record.Wakeup)) (ReadStats, error) {
	if len(r.WakeupLog) == 0 {
		return ReadStats{}, nil
	}
	src, err := safeio.OpenSource(dir)
	if err != nil {
		return ReadStats{}, fmt.Errorf("wakeup log: %w", err)
	}
	defer src.Close()
	files := make([]string, len(r.WakeupLog))
	for i, f := range r.WakeupLog {
		files[i] = f
		if _, err := src.Lstat(f); errors.Is(err, fs.ErrNotExist) && strings.HasSuffix(f, ".csv") {
			if _, err := src.Lstat(f + ".gz"); err == nil {
				files[i] = f + ".gz"
			}
		}
	}
	return readWakeups(func(string) (*safeio.Source, error) { return src, nil }, files, &rowSink{max: maxRows, f: f})
}

// rowSink takes the rows of a log, in order, over its files: at most max.
type rowSink struct {
	n, max int
	f      func(record.Wakeup)
}

// MaxChunkBytes is the most bytes one gzip-compressed wakeup-log
// chunk may inflate to: the largest log_chunk a scenario may set (the
// writer rotates before a chunk passes it), so that no .csv.gz rtload
// wrote is refused.
const MaxChunkBytes = 64 << 20

// MaxRows is the most rows one reader's wakeup log may hold when
// read back (about 46 hours at 100 Hz): a reader of results refuses a
// longer log. Held (ReaderWakeups) it is 0.9 GiB of rows; streamed
// (EachReaderWakeup) it is only time.
const MaxRows = 1 << 24

// ReadFiles reads the wakeup log files (names relative to dir, plain CSV
// or gzip by their .gz suffix) in order and returns all rows.
//
// A writer killed before Close leaves its open chunk plain and possibly
// ending in a line without its newline. That unterminated last line of the
// last file is skipped and counted in TornRows (even if it parses: a
// number may be cut short), never an error; so is a torn or missing header
// there. Either is said in ReadStats.Torn, naming the file and line, for
// the reader of results to pass on as a note. Anything else is an error naming file and line: a torn line or a
// bad value in any other place, a chunk without its header, a truncated or
// corrupt .gz.
//
// Bounds: each file is opened as Source.Open opens it (a symlink, FIFO or
// device is refused with ErrRefusedFile before anything is read); a .gz
// inflates to at most MaxChunkBytes and at most MaxInflateRatio
// times its size (ErrInflateLimit); all files together hold at most
// MaxRows rows.
func ReadFiles(dir string, files []string) ([]record.Wakeup, ReadStats, error) {
	var out []record.Wakeup
	sink := &rowSink{max: MaxRows, f: func(w record.Wakeup) { out = append(out, w) }}
	srcs := map[string]*safeio.Source{}
	defer func() {
		for _, s := range srcs {
			s.Close()
		}
	}()
	st, err := readWakeups(func(sub string) (*safeio.Source, error) {
		if s, ok := srcs[sub]; ok {
			return s, nil
		}
		s, err := safeio.OpenSource(filepath.Join(dir, sub))
		if err != nil {
			return nil, fmt.Errorf("wakeup log: %w", err)
		}
		srcs[sub] = s
		return s, nil
	}, files, sink)
	if err != nil {
		return nil, st, err
	}
	return out, st, nil
}

// readWakeups is ReadFiles with the directory of each file (a name's
// directory part, "" for a plain name) opened by open, each row given to
// sink.
func readWakeups(open func(sub string) (*safeio.Source, error), files []string, sink *rowSink) (ReadStats, error) {
	var st ReadStats
	for i, name := range files {
		sub, base := filepath.Split(name)
		src, err := open(sub)
		if err != nil {
			return st, err
		}
		torn, err := readWakeupFile(src, base, i == len(files)-1, sink)
		if err != nil {
			return st, err
		}
		st.Files++
		st.TornRows += torn.rows
		if torn.note != "" {
			st.Torn = torn.note
		}
	}
	st.Rows = sink.n
	return st, nil
}

// tornTail is what a log file's unterminated last line was: rows (1 for
// a row, 0 for a header) and a note naming the file and line.
type tornTail struct {
	rows int
	note string
}

// readWakeupFile gives the rows of one file to sink; last allows a torn
// tail, which it skips and returns.
func readWakeupFile(src *safeio.Source, name string, last bool, sink *rowSink) (torn tornTail, err error) {
	f, _, err := src.Open(name)
	if err != nil {
		return tornTail{}, fmt.Errorf("wakeup log: %w", err)
	}
	defer f.Close()
	return parseWakeupLog(f, termsafe.Escape(src.Join(name)), strings.HasSuffix(name, ".gz"), last, sink)
}

func parseWakeupLog(r io.Reader, name string, gz, last bool, sink *rowSink) (torn tornTail, err error) {
	if gz {
		zr, err := safeio.Inflate(r, name, MaxChunkBytes)
		if err != nil {
			return tornTail{}, err
		}
		defer zr.Close()
		r = zr
	}
	br := bufio.NewReaderSize(r, wakeupLogBuffer)
	line, cols := 0, 0
	for {
		b, err := br.ReadSlice('\n')
		long := false
		for errors.Is(err, bufio.ErrBufferFull) { // skip to the end of an overlong line
			long = true
			_, err = br.ReadSlice('\n')
		}
		if errors.Is(err, io.EOF) {
			if len(b) == 0 && !long {
				break
			}
			line++
			if !last {
				return tornTail{}, fmt.Errorf("%s:%d: torn line (no newline) in a closed chunk", name, line)
			}
			torn = tornNote(name, line, cols, b, long)
			break
		}
		if err != nil {
			return tornTail{}, fmt.Errorf("%s:%d: %w", name, line+1, err)
		}
		line++
		if long {
			return tornTail{}, fmt.Errorf("%s:%d: line longer than %d bytes", name, line, wakeupLogBuffer)
		}
		b = b[:len(b)-1]
		if line == 1 {
			if cols = wakeupHeaderColumns(string(b)); cols == 0 {
				// The line is not quoted: a file that is not a wakeup
				// log says nothing of its content.
				return tornTail{}, fmt.Errorf("%s:1: not a wakeup log header (want %q)", name, Header)
			}
			continue
		}
		w, err := parseWakeupRow(b, cols)
		if err != nil {
			return tornTail{}, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if sink.n >= sink.max {
			return tornTail{}, fmt.Errorf("%s:%d: more than %d rows, more wakeups than rtload reads back (at most %d for a reader, %d for a command): refused", name, line, sink.max, MaxRows, MaxRowsTotal)
		}
		sink.n++
		sink.f(w)
	}
	if line == 0 && !last {
		return tornTail{}, fmt.Errorf("%s: empty, want header %q", name, Header)
	}
	return torn, nil
}

// maxTornHow bounds how a torn tail was cut, in a note (bytes).
const maxTornHow = 200

// tornNote is the torn tail b (the last line of the newest chunk, line,
// without its newline; long when it passed the buffer, b its last part)
// of a log whose header gave cols columns (0: the header is the torn
// line). A row is skipped even when its fields parse: a number may be
// cut short. The note is bounded: b is never quoted whole.
func tornNote(name string, line, cols int, b []byte, long bool) tornTail {
	if line == 1 {
		return tornTail{note: fmt.Sprintf("%s:1: header cut short (no newline): no rows", name)}
	}
	how := "no newline"
	switch {
	case long:
		how = fmt.Sprintf("no newline; longer than %d bytes", wakeupLogBuffer)
	default:
		if n := bytes.Count(b, []byte{','}) + 1; n != cols {
			how = fmt.Sprintf("no newline; %d of %d fields", n, cols)
		} else if _, err := parseWakeupRow(b, cols); err != nil {
			how = "no newline; " + err.Error()
			if len(how) > maxTornHow { // a field quoted whole may be long
				how = strings.ToValidUTF8(how[:maxTornHow], "") + "…"
			}
		} else {
			how = fmt.Sprintf("no newline; %d fields, the last maybe cut inside its number", n)
		}
	}
	return tornTail{rows: 1, note: fmt.Sprintf("%s:%d: last line cut short (%s): skipped", name, line, how)}
}

var wakeupColumns = [10]string{"tick", "deadline_ns", "latency_ns", "drain_ns", "messages", "calls", "eagain", "missed", "vol_cs", "invol_cs"}

// parseWakeupRow parses one row (without newline) as appendWakeupRow
// writes it, with cols columns (10, or 8 for HeaderV1 logs). It does not
// allocate unless it fails.
func parseWakeupRow(b []byte, cols int) (record.Wakeup, error) {
	var w record.Wakeup
	var fld [len(wakeupColumns)][]byte
	n, start := 0, 0
	for i := 0; i <= len(b); i++ {
		if i < len(b) && b[i] != ',' {
			continue
		}
		if n < len(fld) {
			fld[n] = b[start:i]
		}
		n++
		start = i + 1
	}
	if n != cols {
		return w, fmt.Errorf("%d fields, want %d", n, cols)
	}
	var ok [10]bool
	w.Tick, ok[0] = parseWakeupUint(fld[0], 1<<64-1)
	w.DeadlineNs, ok[1] = parseWakeupInt(fld[1])
	w.LatencyNs, ok[2] = parseWakeupInt(fld[2])
	w.DrainNs, ok[3] = parseWakeupInt(fld[3])
	var u [6]uint64
	for i := range u[:cols-4] {
		u[i], ok[4+i] = parseWakeupUint(fld[4+i], 1<<32-1)
	}
	w.Messages, w.Calls, w.EAGAIN, w.Missed = uint32(u[0]), uint32(u[1]), uint32(u[2]), uint32(u[3])
	w.VolCS, w.InvolCS = uint32(u[4]), uint32(u[5])
	for i, good := range ok[:cols] {
		if !good {
			return w, fmt.Errorf("%s: invalid value %q", wakeupColumns[i], fld[i])
		}
	}
	return w, nil
}

// parseWakeupUint parses unsigned decimal digits up to max.
func parseWakeupUint(b []byte, max uint64) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (max-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// parseWakeupInt parses an optionally negative decimal int64.
func parseWakeupInt(b []byte) (int64, bool) {
	if len(b) > 0 && b[0] == '-' {
		v, ok := parseWakeupUint(b[1:], 1<<63)
		return int64(-v), ok
	}
	v, ok := parseWakeupUint(b, 1<<63-1)
	return int64(v), ok
}
