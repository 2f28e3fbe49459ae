package results

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rtload/rtload/record"
)

// WakeupLogMinChunk is the smallest ChunkBytes WakeupLogConfig accepts
// (bytes). A chunk always holds the header (83 bytes) and at least one row
// (at most 150 bytes), so an open chunk never grows past ChunkBytes.
const WakeupLogMinChunk = 1 << 10

// wakeupLogGzipLevel trades a little ratio for a short rotation: the writer
// goroutine compresses synchronously while the real-time thread keeps
// filling the ring. On per-wakeup CSV with noisy latencies BestSpeed gives
// about 2.2×, the default level about 2.4× at several times the CPU.
const wakeupLogGzipLevel = gzip.BestSpeed

// WakeupLogConfig describes a per-wakeup log split into chunks. The zero
// value of each size means "off": ChunkBytes 0 writes one plain file
// <Base>.csv, byte for byte what WakeupCSV writes; LimitBytes 0 keeps every
// chunk.
//
// On disk, chunk n of a log is <Base>.<nnnn>.csv while open and
// <Base>.<nnnn>.csv.gz once closed and compressed (n from 0, at least four
// digits). Every chunk starts with WakeupCSVHeader, so each reads alone.
type WakeupLogConfig struct {
	Dir  string // results directory; must exist
	Base string // file name base, e.g. "wakeups-00-recvfrom-r0-rt"; a name, not a path

	// ChunkBytes rotates the open chunk before a row would take it past
	// this many bytes (uncompressed, header included). 0 = never rotate:
	// one plain <Base>.csv, as WakeupCSV writes. Otherwise at least
	// WakeupLogMinChunk.
	ChunkBytes int64

	// LimitBytes caps the bytes on disk over all chunks of this log:
	// closed chunks as stored (compressed when Compress) plus the open
	// chunk. 0 = no cap. At each rotation the oldest closed chunks are
	// deleted, and counted in WakeupLogStats, until the closed chunks plus
	// a full open chunk (ChunkBytes) fit. Needs ChunkBytes > 0 and
	// LimitBytes ≥ ChunkBytes. See WakeupLog for the exact bound.
	LimitBytes int64

	// Compress gzips each chunk as it closes, and the last one at Close,
	// on the goroutine calling Write. Needs ChunkBytes > 0.
	Compress bool
}

// Validate returns every problem with c, joined, or nil. It does not
// change c.
func (c WakeupLogConfig) Validate() error {
	var errs []error
	switch {
	case c.Base == "":
		errs = append(errs, errors.New("base is empty"))
	case c.Base == "." || c.Base == ".." || strings.ContainsRune(c.Base, filepath.Separator):
		errs = append(errs, fmt.Errorf("base %q is not a file name (put the directory in Dir)", c.Base))
	}
	if c.ChunkBytes < 0 {
		errs = append(errs, fmt.Errorf("chunk bytes %d is negative (0 = one unrotated file)", c.ChunkBytes))
	} else if c.ChunkBytes > 0 && c.ChunkBytes < WakeupLogMinChunk {
		errs = append(errs, fmt.Errorf("chunk bytes %d below the minimum %d", c.ChunkBytes, WakeupLogMinChunk))
	}
	if c.LimitBytes < 0 {
		errs = append(errs, fmt.Errorf("limit bytes %d is negative (0 = no cap)", c.LimitBytes))
	}
	if c.ChunkBytes == 0 && c.LimitBytes > 0 {
		errs = append(errs, fmt.Errorf("limit bytes %d needs chunk bytes > 0: one unrotated file cannot be capped", c.LimitBytes))
	}
	if c.ChunkBytes > 0 && c.LimitBytes > 0 && c.LimitBytes < c.ChunkBytes {
		errs = append(errs, fmt.Errorf("limit bytes %d below chunk bytes %d: the open chunk alone may reach chunk bytes", c.LimitBytes, c.ChunkBytes))
	}
	if c.ChunkBytes == 0 && c.Compress {
		errs = append(errs, errors.New("compress needs chunk bytes > 0: chunk bytes 0 writes one plain <base>.csv"))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("wakeup log %s: invalid config: %w", c.Base, errors.Join(errs...))
}

// WakeupLogStats is what a WakeupLog wrote and what its cap deleted.
type WakeupLogStats struct {
	Files         []string // chunk file names kept, oldest first, relative to Dir (the open chunk last)
	Rows          uint64   // rows written in all
	RowsDropped   uint64   // rows in chunks deleted by LimitBytes
	ChunksDropped int      // chunks deleted by LimitBytes
	BytesOnDisk   int64    // closed chunks as stored + open chunk including rows still buffered
}

// wakeupChunk is one closed chunk of a WakeupLog.
type wakeupChunk struct {
	name  string // relative to Dir
	rows  uint64
	bytes int64 // size on disk
}

// WakeupLog streams record.Wakeup rows into a rotating, optionally
// compressed and capped set of CSV chunks (see WakeupLogConfig). Like
// WakeupCSV it belongs to one goroutine, the non-real-time writer draining
// the ring: every method, Stats included, must be called from it.
//
// Disk bound, with LimitBytes L and ChunkBytes C (sizes are file lengths;
// filesystem blocks add at most one block per file):
//   - whenever Write, Sync or Close returns, the log's files total ≤ L;
//   - during a rotation inside Write (and the final compression in Close)
//     they total ≤ L + G, where G ≤ C + gzip framing is the compressed
//     chunk being written while its plain source still exists. Without
//     Compress the bound is L throughout.
//
// Crash safety: Sync flushes and fsyncs the open chunk; a killed writer
// leaves at most one torn line at the end of the open chunk, which
// ReadWakeupLog skips and counts. A closed chunk is compressed into a
// temporary dot-file, fsynced, renamed to its final .gz name, the directory
// fsynced, and only then the plain chunk removed: a .gz under its final
// name is always complete. A crash between rename and removal leaves both
// the .gz and the plain chunk; readers use the .gz.
type WakeupLog struct {
	cfg WakeupLogConfig

	f         *os.File // open chunk; nil once closed
	bw        *bufio.Writer
	row       []byte // reused row buffer
	seq       int    // index of the open chunk
	name      string // open chunk name, relative to Dir
	openBytes int64  // header + rows written to the open chunk (buffered included)
	openRows  uint64

	closed      []wakeupChunk // oldest first
	closedBytes int64

	rows          uint64
	rowsDropped   uint64
	chunksDropped int

	gz   *gzip.Writer // reused across chunks; nil unless Compress
	err  error        // sticky: the first write or rotation error
	done bool         // Close called

	// hook, when set by tests, is called at stages of a compression:
	// "compressed" (temporary .gz written and fsynced, not yet renamed) and
	// "renamed" (final .gz in place, plain chunk not yet removed).
	hook func(stage string)
}

// CreateWakeupLog validates cfg, removes any earlier log of cfg.Base in
// cfg.Dir (its plain file, chunks and temporary files: like os.Create
// truncating, so a reader never mixes two runs), and opens the first chunk
// with its header.
func CreateWakeupLog(cfg WakeupLogConfig) (*WakeupLog, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := removeWakeupLog(cfg.Dir, cfg.Base); err != nil {
		return nil, fmt.Errorf("wakeup log %s: remove earlier log: %w", cfg.Base, err)
	}
	l := &WakeupLog{
		cfg: cfg,
		bw:  bufio.NewWriterSize(nil, wakeupCSVBuffer),
		row: make([]byte, 0, 160),
	}
	if cfg.Compress {
		gz, err := gzip.NewWriterLevel(nil, wakeupLogGzipLevel)
		if err != nil {
			return nil, fmt.Errorf("wakeup log %s: %w", cfg.Base, err)
		}
		l.gz = gz
	}
	if err := l.openChunk(); err != nil {
		return nil, err
	}
	if err := wakeupLogSyncDir(cfg.Dir); err != nil {
		l.f.Close()
		os.Remove(l.path(l.name))
		return nil, fmt.Errorf("wakeup log %s: %w", cfg.Base, err)
	}
	return l, nil
}

// Write appends one row, rotating first when the row would take the open
// chunk past ChunkBytes. It formats with strconv into a reused buffer and
// does not allocate except when it rotates or fails. After an error the
// log is broken and Write returns that error again; Write after Close
// fails with os.ErrClosed.
func (l *WakeupLog) Write(r *record.Wakeup) error {
	if l.done {
		return fmt.Errorf("wakeup log %s: %w", l.cfg.Base, os.ErrClosed)
	}
	if l.err != nil {
		return l.err
	}
	b := appendWakeupRow(l.row[:0], r)
	l.row = b
	if l.cfg.ChunkBytes > 0 && l.openRows > 0 && l.openBytes+int64(len(b)) > l.cfg.ChunkBytes {
		if err := l.rotate(); err != nil {
			l.err = fmt.Errorf("wakeup log %s: rotate chunk %d: %w", l.cfg.Base, l.seq, err)
			return l.err
		}
	}
	if _, err := l.bw.Write(b); err != nil {
		l.err = fmt.Errorf("wakeup log %s: %w", l.name, err)
		return l.err
	}
	l.openBytes += int64(len(b))
	l.openRows++
	l.rows++
	return nil
}

// Sync flushes buffered rows and fsyncs the open chunk, so that a crash
// afterwards loses nothing written before it. Call it once per soak
// interval, not per row.
func (l *WakeupLog) Sync() error {
	if l.done {
		return fmt.Errorf("wakeup log %s: sync: %w", l.cfg.Base, os.ErrClosed)
	}
	if l.err != nil {
		return l.err
	}
	if err := l.bw.Flush(); err != nil {
		l.err = fmt.Errorf("wakeup log %s: %w", l.name, err)
		return l.err
	}
	if err := l.f.Sync(); err != nil {
		l.err = fmt.Errorf("wakeup log %s: %w", l.name, err)
		return l.err
	}
	return nil
}

// Close flushes, fsyncs and closes the open chunk, compresses it when
// Compress (so a cleanly closed chunked log is all .gz), applies LimitBytes
// once more and fsyncs the directory. It is idempotent: later calls return
// nil. After an earlier Write error it still flushes and closes what it can
// but leaves the last chunk plain.
func (l *WakeupLog) Close() error {
	if l.done {
		return nil
	}
	l.done = true
	if l.f == nil { // a failed rotation already closed it
		return nil
	}
	c := wakeupChunk{name: l.name, rows: l.openRows, bytes: l.openBytes}
	if err := l.closeOpen(); err != nil {
		l.closed = append(l.closed, c) // kept plain, maybe short
		l.closedBytes += c.bytes
		return fmt.Errorf("wakeup log %s: close: %w", l.cfg.Base, err)
	}
	var errs []error
	if l.cfg.Compress && l.err == nil {
		gc, err := l.compress(c)
		if err != nil {
			errs = append(errs, err)
		} else {
			c = gc
		}
	}
	l.closed = append(l.closed, c)
	l.closedBytes += c.bytes
	if err := l.evict(0); err != nil {
		errs = append(errs, err)
	}
	if err := wakeupLogSyncDir(l.cfg.Dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("wakeup log %s: close: %w", l.cfg.Base, err)
	}
	return nil
}

// Stats reports the files kept and the rows written and dropped so far.
func (l *WakeupLog) Stats() WakeupLogStats {
	s := WakeupLogStats{
		Files:         make([]string, 0, len(l.closed)+1),
		Rows:          l.rows,
		RowsDropped:   l.rowsDropped,
		ChunksDropped: l.chunksDropped,
		BytesOnDisk:   l.closedBytes,
	}
	for _, c := range l.closed {
		s.Files = append(s.Files, c.name)
	}
	if l.f != nil {
		s.Files = append(s.Files, l.name)
		s.BytesOnDisk += l.openBytes
	}
	return s
}

func (l *WakeupLog) path(name string) string { return filepath.Join(l.cfg.Dir, name) }

// openChunk creates chunk l.seq (or <Base>.csv when not rotating) and
// buffers its header.
func (l *WakeupLog) openChunk() error {
	if l.cfg.ChunkBytes == 0 {
		l.name = l.cfg.Base + ".csv"
	} else {
		l.name = wakeupChunkName(l.cfg.Base, l.seq)
	}
	f, err := os.Create(l.path(l.name))
	if err != nil {
		return fmt.Errorf("wakeup log: %w", err)
	}
	l.bw.Reset(f)
	if _, err := l.bw.WriteString(WakeupCSVHeader + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("wakeup log %s: %w", l.name, err)
	}
	l.f = f
	l.openBytes = int64(len(WakeupCSVHeader) + 1)
	l.openRows = 0
	return nil
}

// closeOpen flushes, fsyncs and closes the open chunk.
func (l *WakeupLog) closeOpen() error {
	f := l.f
	l.f = nil
	err := errors.Join(l.bw.Flush(), f.Sync(), f.Close())
	l.bw.Reset(nil)
	if err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	return nil
}

// rotate closes the open chunk, compresses it when configured, deletes the
// oldest chunks the cap no longer allows with a full open chunk, and opens
// the next chunk.
func (l *WakeupLog) rotate() error {
	c := wakeupChunk{name: l.name, rows: l.openRows, bytes: l.openBytes}
	if err := l.closeOpen(); err != nil {
		return err
	}
	if l.cfg.Compress {
		gc, err := l.compress(c)
		if err != nil {
			return err
		}
		c = gc
	}
	l.closed = append(l.closed, c)
	l.closedBytes += c.bytes
	if err := l.evict(l.cfg.ChunkBytes); err != nil {
		return err
	}
	l.seq++
	if err := l.openChunk(); err != nil {
		return err
	}
	return wakeupLogSyncDir(l.cfg.Dir)
}

// compress writes chunk c to a temporary .gz, fsyncs it, renames it to
// <c.name>.gz, fsyncs the directory and removes the plain chunk.
func (l *WakeupLog) compress(c wakeupChunk) (_ wakeupChunk, err error) {
	src, err := os.Open(l.path(c.name))
	if err != nil {
		return c, fmt.Errorf("compress: %w", err)
	}
	defer src.Close()
	final := c.name + ".gz"
	tmp, err := os.CreateTemp(l.cfg.Dir, "."+final+".*.tmp")
	if err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	l.gz.Reset(tmp)
	l.gz.Name = c.name
	if _, err = io.Copy(l.gz, src); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	if err = l.gz.Close(); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	l.gz.Reset(nil)
	if err = tmp.Chmod(0o644); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	if err = tmp.Sync(); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	fi, err := tmp.Stat()
	if err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	if err = tmp.Close(); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	l.callHook("compressed")
	if err = os.Rename(tmp.Name(), l.path(final)); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	// The .gz must be durable under its name before the plain copy goes.
	if err := wakeupLogSyncDir(l.cfg.Dir); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	l.callHook("renamed")
	if err := os.Remove(l.path(c.name)); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	return wakeupChunk{name: final, rows: c.rows, bytes: fi.Size()}, nil
}

func (l *WakeupLog) callHook(stage string) {
	if l.hook != nil {
		l.hook(stage)
	}
}

// evict deletes the oldest closed chunks until they and reserve bytes fit
// in LimitBytes, counting what it deleted.
func (l *WakeupLog) evict(reserve int64) error {
	if l.cfg.LimitBytes == 0 {
		return nil
	}
	for len(l.closed) > 0 && l.closedBytes+reserve > l.cfg.LimitBytes {
		c := l.closed[0]
		if err := os.Remove(l.path(c.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("limit %d bytes: %w", l.cfg.LimitBytes, err)
		}
		l.closed = l.closed[1:]
		l.closedBytes -= c.bytes
		l.rowsDropped += c.rows
		l.chunksDropped++
	}
	return nil
}

// appendWakeupRow appends r as one CSV row with its newline, in the format
// of WakeupCSV.Write.
func appendWakeupRow(b []byte, r *record.Wakeup) []byte {
	b = strconv.AppendUint(b, r.Tick, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.DeadlineNs, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.LatencyNs, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.DrainNs, 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.Messages), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.Calls), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.EAGAIN), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.Missed), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.VolCS), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.InvolCS), 10)
	return append(b, '\n')
}

func wakeupLogSyncDir(dir string) error {
	if dir == "" {
		dir = "."
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// wakeupChunkName is the plain name of chunk seq of base.
func wakeupChunkName(base string, seq int) string {
	return fmt.Sprintf("%s.%04d.csv", base, seq)
}

// parseWakeupChunkName reports whether name is chunk seq of base, plain
// (<base>.<digits>.csv) or compressed (<base>.<digits>.csv.gz).
func parseWakeupChunkName(base, name string) (seq int, gz, ok bool) {
	rest, found := strings.CutPrefix(name, base+".")
	if !found {
		return 0, false, false
	}
	if r, found := strings.CutSuffix(rest, ".csv.gz"); found {
		rest, gz = r, true
	} else if r, found := strings.CutSuffix(rest, ".csv"); found {
		rest = r
	} else {
		return 0, false, false
	}
	if len(rest) == 0 {
		return 0, false, false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return 0, false, false
		}
	}
	seq, err := strconv.Atoi(rest)
	if err != nil {
		return 0, false, false
	}
	return seq, gz, true
}

// isWakeupLogTemp reports whether name is a temporary .gz of base left by
// a crash during compression (.<base>.<nnnn>.csv.gz.<random>.tmp).
func isWakeupLogTemp(base, name string) bool {
	inner, ok := strings.CutPrefix(name, ".")
	if !ok {
		return false
	}
	inner, ok = strings.CutSuffix(inner, ".tmp")
	if !ok {
		return false
	}
	dot := strings.LastIndexByte(inner, '.')
	if dot < 0 {
		return false
	}
	_, gz, ok := parseWakeupChunkName(base, inner[:dot])
	return ok && gz
}

// removeWakeupLog deletes every file of log base in dir: <base>.csv,
// chunks and temporary files.
func removeWakeupLog(dir, base string) error {
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		_, _, chunk := parseWakeupChunkName(base, name)
		if name == base+".csv" || chunk || isWakeupLogTemp(base, name) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// wakeupLogFile is one file of a log on disk.
type wakeupLogFile struct {
	name string // relative to the dir given to WakeupLogFiles
	seq  int    // -1 for a single unchunked file
	gz   bool
}

// WakeupLogFiles lists the files of log base in dir, in order, relative to
// dir: the chunks <base>.<n>.csv[.gz] by n, or the single file <base>.csv.
// Where a crash left chunk n both plain and compressed it lists the .gz,
// which is complete by construction. base may also name one file (ending
// in .csv or .csv.gz, possibly with a directory), which is listed alone.
// Errors: no file of base (wrapping fs.ErrNotExist), or both <base>.csv
// and chunks.
func WakeupLogFiles(dir, base string) ([]string, error) {
	files, err := listWakeupLog(dir, base)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	return names, nil
}

func listWakeupLog(dir, base string) ([]wakeupLogFile, error) {
	sub, b := filepath.Split(base)
	if strings.HasSuffix(b, ".csv") || strings.HasSuffix(b, ".csv.gz") {
		if fi, err := os.Stat(filepath.Join(dir, base)); err == nil && fi.Mode().IsRegular() {
			return []wakeupLogFile{{name: base, seq: -1, gz: strings.HasSuffix(b, ".gz")}}, nil
		}
	}
	d := filepath.Join(dir, sub)
	ents, err := os.ReadDir(d)
	if err != nil {
		return nil, fmt.Errorf("wakeup log %s: %w", filepath.Join(dir, base), err)
	}
	plain := false
	var chunks []wakeupLogFile
	for _, e := range ents {
		name := e.Name()
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

// ReadStats says what ReadWakeupLog read: files, rows returned, and torn
// rows skipped at the end of the newest chunk.
type ReadStats struct {
	Files    int
	Rows     int
	TornRows int
}

// ReadWakeupLog reads every chunk of log base in dir in order (plain or
// gzip; see WakeupLogFiles for what base may name) and returns all rows.
//
// A writer killed before Close leaves its open chunk plain and possibly
// ending in a line without its newline. That unterminated last line of the
// newest file is skipped and counted in TornRows (even if it parses: a
// number may be cut short), never an error; so is a torn or missing header
// there. Anything else is an error naming file and line: a torn line or a
// bad value in any other place, a chunk without its header, a truncated or
// corrupt .gz, or a gap in chunk numbers (a chunk lost in the middle).
func ReadWakeupLog(dir, base string) ([]record.Wakeup, ReadStats, error) {
	var st ReadStats
	files, err := listWakeupLog(dir, base)
	if err != nil {
		return nil, st, err
	}
	for i := 1; i < len(files); i++ {
		if files[i].seq != files[i-1].seq+1 {
			return nil, st, fmt.Errorf("wakeup log %s: chunk %d missing between %s and %s",
				filepath.Join(dir, base), files[i-1].seq+1, files[i-1].name, files[i].name)
		}
	}
	var out []record.Wakeup
	for i, f := range files {
		torn, err := readWakeupChunk(filepath.Join(dir, f.name), f.gz, i == len(files)-1, &out)
		if err != nil {
			return nil, st, err
		}
		st.Files++
		st.TornRows += torn
	}
	st.Rows = len(out)
	return out, st, nil
}

// readWakeupChunk appends the rows of one file to out. last allows a torn
// tail, which it skips and returns as torn rows.
func readWakeupChunk(path string, gz, last bool, out *[]record.Wakeup) (torn int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("wakeup log: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, wakeupCSVBuffer))
		if err != nil {
			if last && errors.Is(err, io.EOF) {
				return 0, nil // unreachable by construction: .gz appear complete
			}
			return 0, fmt.Errorf("%s: gzip: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	br := bufio.NewReaderSize(r, wakeupCSVBuffer)
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
				return 0, fmt.Errorf("%s:%d: torn line (no newline) in a closed chunk", path, line)
			}
			if line > 1 {
				torn++
			}
			break
		}
		if err != nil {
			return 0, fmt.Errorf("%s:%d: %w", path, line+1, err)
		}
		line++
		if long {
			return 0, fmt.Errorf("%s:%d: line longer than %d bytes", path, line, wakeupCSVBuffer)
		}
		b = b[:len(b)-1]
		if line == 1 {
			if cols = wakeupHeaderColumns(string(b)); cols == 0 {
				return 0, fmt.Errorf("%s:1: header %q, want %q", path, b, WakeupCSVHeader)
			}
			continue
		}
		w, err := parseWakeupRow(b, cols)
		if err != nil {
			return 0, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		*out = append(*out, w)
	}
	if line == 0 && !last {
		return 0, fmt.Errorf("%s: empty, want header %q", path, WakeupCSVHeader)
	}
	return torn, nil
}

var wakeupColumns = [10]string{"tick", "deadline_ns", "latency_ns", "drain_ns", "messages", "calls", "eagain", "missed", "vol_cs", "invol_cs"}

// parseWakeupRow parses one row (without newline) as WakeupCSV writes it,
// with cols columns (10, or 8 for WakeupCSVHeaderV1 logs). It does not
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
