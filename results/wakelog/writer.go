package wakelog

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results/safeio"
)

// MinChunk is the smallest ChunkBytes Config accepts
// (bytes). A chunk always holds the header (83 bytes) and at least one row
// (at most 150 bytes), so an open chunk never grows past ChunkBytes.
const MinChunk = 1 << 10

// wakeupLogGzipLevel trades a little ratio for a short rotation: the writer
// goroutine compresses synchronously while the real-time thread keeps
// filling the ring. On per-wakeup CSV with noisy latencies BestSpeed gives
// about 2.2×, the default level about 2.4× at several times the CPU.
const wakeupLogGzipLevel = gzip.BestSpeed

// Config describes a per-wakeup log split into chunks. The zero
// value of each size means "off": ChunkBytes 0 writes one plain file
// <Base>.csv (Header, then one row per wakeup); LimitBytes 0
// keeps every chunk.
//
// On disk, chunk n of a log is <Base>.<nnnn>.csv while open and
// <Base>.<nnnn>.csv.gz once closed and compressed (n from 0, at least four
// digits). Every chunk starts with Header, so each reads alone.
type Config struct {
	Dir  *safeio.Dir // results directory
	Base string      // file name base, e.g. "wakeups-00-recvfrom-r0-rt" (results.WakeupLogBase); a name, not a path

	// ChunkBytes rotates the open chunk before a row would take it past
	// this many bytes (uncompressed, header included). 0 = never rotate:
	// one plain <Base>.csv. Otherwise at least
	// MinChunk.
	ChunkBytes int64

	// LimitBytes caps the bytes on disk over all chunks of this log:
	// closed chunks as stored (compressed when Compress) plus the open
	// chunk. 0 = no cap. At each rotation the oldest closed chunks are
	// deleted, and counted in Stats, until the closed chunks plus
	// a full open chunk (ChunkBytes) fit. Needs ChunkBytes > 0 and
	// LimitBytes ≥ ChunkBytes. See Writer for the exact bound.
	LimitBytes int64

	// Compress gzips each chunk as it closes, and the last one at Close,
	// on the goroutine calling Write. Needs ChunkBytes > 0.
	Compress bool
}

// Validate returns every problem with c, joined, or nil. It does not
// change c.
func (c Config) Validate() error {
	var errs []error
	if c.Dir == nil {
		errs = append(errs, errors.New("no results directory"))
	}
	switch {
	case c.Base == "":
		errs = append(errs, errors.New("base is empty"))
	case c.Base == "." || c.Base == ".." || strings.ContainsRune(c.Base, filepath.Separator):
		errs = append(errs, fmt.Errorf("base %q is not a file name (put the directory in Dir)", c.Base))
	}
	if c.ChunkBytes < 0 {
		errs = append(errs, fmt.Errorf("chunk bytes %d is negative (0 = one unrotated file)", c.ChunkBytes))
	} else if c.ChunkBytes > 0 && c.ChunkBytes < MinChunk {
		errs = append(errs, fmt.Errorf("chunk bytes %d below the minimum %d", c.ChunkBytes, MinChunk))
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

// Stats is what a Writer wrote and what its cap deleted.
type Stats struct {
	Files         []string // chunk file names kept, oldest first, relative to Dir (the open chunk last)
	Rows          uint64   // rows written in all
	RowsDropped   uint64   // rows in chunks deleted by LimitBytes
	ChunksDropped int      // chunks deleted by LimitBytes
	BytesOnDisk   int64    // closed chunks as stored + open chunk including rows still buffered
}

// wakeupChunk is one closed chunk of a Writer.
type wakeupChunk struct {
	name  string // relative to Dir
	rows  uint64
	bytes int64 // size on disk
}

// Writer streams record.Wakeup rows into a rotating, optionally
// compressed and capped set of CSV chunks (see Config). It
// belongs to one goroutine, the non-real-time writer draining the ring:
// every method, Stats included, must be called from it.
//
// Disk bound, with LimitBytes L and ChunkBytes C (sizes are file lengths;
// filesystem blocks add at most one block per file):
//   - whenever Write, Sync or Close returns, the log's files total ≤ L;
//   - during a rotation inside Write (and the final compression in Close)
//     they total ≤ L + G, where G ≤ C + gzip framing is the compressed
//     chunk being written while its plain source still exists. Without
//     Compress the bound is L throughout.
//
// Whole rows only: rows are buffered and written out in whole rows (one
// write(2) per 64 KiB); a write that fails or comes up short
// (a full disk) is cut back with ftruncate(2) to the last whole row, and
// the log is broken from then on (Write returns the error). A killed
// writer leaves at most one torn line at the end of the open chunk, which
// ReadLog skips and counts. Sync flushes and fsyncs the open chunk.
// A closed chunk is compressed into a temporary dot-file, fsynced, renamed
// to its final .gz name, the directory fsynced, and only then the plain
// chunk removed: a .gz under its final name is always complete. A crash
// between rename and removal leaves both the .gz and the plain chunk;
// readers use the .gz. Every file is created through Dir (O_EXCL,
// O_NOFOLLOW).
type Writer struct {
	cfg Config

	f         *os.File // open chunk; nil once closed
	buf       []byte   // whole rows not yet written
	written   int64    // bytes of the open chunk on disk, all whole rows
	seq       int      // index of the open chunk
	name      string   // open chunk name, relative to Dir
	openBytes int64    // header + rows written to the open chunk (buffered included)
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

// Create validates cfg, removes any earlier log of cfg.Base in
// cfg.Dir (its plain file, chunks and temporary files: like creat(2)
// truncating, so a reader never mixes two runs), and opens the first chunk
// with its header.
func Create(cfg Config) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := removeWakeupLog(cfg.Dir, cfg.Base); err != nil {
		return nil, fmt.Errorf("wakeup log %s: remove earlier log: %w", cfg.Base, err)
	}
	l := &Writer{cfg: cfg, buf: make([]byte, 0, wakeupLogBuffer+maxWakeupRow)}
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
	if err := cfg.Dir.Sync(); err != nil {
		l.f.Close()
		cfg.Dir.Remove(l.name)
		return nil, fmt.Errorf("wakeup log %s: %w", cfg.Base, err)
	}
	return l, nil
}

// Write appends one row, rotating first when the row would take the open
// chunk past ChunkBytes. It formats with strconv into a reused buffer and
// does not allocate except when it rotates or fails. After an error the
// log is broken and Write returns that error again; Write after Close
// fails with os.ErrClosed.
func (l *Writer) Write(r *record.Wakeup) error {
	if l.done {
		return fmt.Errorf("wakeup log %s: %w", l.cfg.Base, os.ErrClosed)
	}
	if l.err != nil {
		return l.err
	}
	n := len(l.buf)
	l.buf = appendWakeupRow(l.buf, r)
	rowLen := int64(len(l.buf) - n)
	if l.cfg.ChunkBytes > 0 && l.openRows > 0 && l.openBytes+rowLen > l.cfg.ChunkBytes {
		l.buf = l.buf[:n]
		if err := l.rotate(); err != nil {
			l.err = fmt.Errorf("wakeup log %s: rotate chunk %d: %w", l.cfg.Base, l.seq, err)
			return l.err
		}
		l.buf = appendWakeupRow(l.buf, r)
	}
	l.openBytes += rowLen
	l.openRows++
	l.rows++
	if len(l.buf) >= wakeupLogBuffer {
		if err := l.flush(); err != nil {
			l.err = fmt.Errorf("wakeup log %s: %w", l.name, err)
			return l.err
		}
	}
	return nil
}

// flush writes the buffered whole rows in one write(2). A failed or short
// write is cut back to the last whole row on disk (ftruncate(2)), so the
// chunk never ends in a torn row, and the rows buffered are lost (the log
// is broken from then on).
func (l *Writer) flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	n, err := l.f.Write(l.buf)
	if err == nil && n < len(l.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 {
			l.f.Truncate(l.written)
		}
		l.buf = l.buf[:0]
		return err
	}
	l.written += int64(n)
	l.buf = l.buf[:0]
	return nil
}

// Sync flushes buffered rows and fsyncs the open chunk, so that a crash
// afterwards loses nothing written before it. Call it once per soak
// interval, not per row.
func (l *Writer) Sync() error {
	if l.done {
		return fmt.Errorf("wakeup log %s: sync: %w", l.cfg.Base, os.ErrClosed)
	}
	if l.err != nil {
		return l.err
	}
	if err := l.flush(); err != nil {
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
func (l *Writer) Close() error {
	if l.done {
		return nil
	}
	l.done = true
	if l.f == nil { // a failed rotation already closed it
		return nil
	}
	c := wakeupChunk{name: l.name, rows: l.openRows, bytes: l.openBytes}
	if err := l.closeChunk(); err != nil {
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
	if err := l.cfg.Dir.Sync(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("wakeup log %s: close: %w", l.cfg.Base, err)
	}
	return nil
}

// Limit is the log's cap, LimitBytes (0 = none).
func (l *Writer) Limit() int64 { return l.cfg.LimitBytes }

// Stats reports the files kept and the rows written and dropped so far.
func (l *Writer) Stats() Stats {
	s := Stats{
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

// openChunk creates chunk l.seq (or <Base>.csv when not rotating) and
// buffers its header.
func (l *Writer) openChunk() error {
	if l.cfg.ChunkBytes == 0 {
		l.name = l.cfg.Base + ".csv"
	} else {
		l.name = wakeupChunkName(l.cfg.Base, l.seq)
	}
	f, err := l.cfg.Dir.Create(l.name)
	if err != nil {
		return fmt.Errorf("wakeup log: %w", err)
	}
	l.f, l.written = f, 0
	l.buf = append(l.buf[:0], Header+"\n"...)
	l.openBytes = int64(len(Header) + 1)
	l.openRows = 0
	return nil
}

// closeChunk flushes, fsyncs and closes the open chunk.
func (l *Writer) closeChunk() error {
	err := l.flush()
	f := l.f
	l.f = nil
	err = errors.Join(err, f.Sync(), f.Close())
	if err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	return nil
}

// rotate closes the open chunk, compresses it when configured, deletes the
// oldest chunks the cap no longer allows with a full open chunk, and opens
// the next chunk.
func (l *Writer) rotate() error {
	c := wakeupChunk{name: l.name, rows: l.openRows, bytes: l.openBytes}
	if err := l.closeChunk(); err != nil {
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
	return l.cfg.Dir.Sync()
}

// compress writes chunk c to a temporary .gz, fsyncs it, renames it to
// <c.name>.gz, fsyncs the directory and removes the plain chunk.
func (l *Writer) compress(c wakeupChunk) (_ wakeupChunk, err error) {
	d := l.cfg.Dir
	src, err := d.Open(c.name)
	if err != nil {
		return c, fmt.Errorf("compress: %w", err)
	}
	defer src.Close()
	final := c.name + ".gz"
	tmp, tmpName, err := d.CreateTemp(final)
	if err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	defer func() {
		if err != nil {
			d.DropTemp(tmp, tmpName)
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
	// The .gz must be durable under its name (commitTemp fsyncs the
	// directory) before the plain copy goes.
	if err := d.CommitTemp(tmpName, final); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	l.callHook("renamed")
	if err := d.Remove(c.name); err != nil {
		return c, fmt.Errorf("compress %s: %w", c.name, err)
	}
	return wakeupChunk{name: final, rows: c.rows, bytes: fi.Size()}, nil
}

func (l *Writer) callHook(stage string) {
	if l.hook != nil {
		l.hook(stage)
	}
}

// evict deletes the oldest closed chunks until they and reserve bytes fit
// in LimitBytes, counting what it deleted.
func (l *Writer) evict(reserve int64) error {
	if l.cfg.LimitBytes == 0 {
		return nil
	}
	for len(l.closed) > 0 && l.closedBytes+reserve > l.cfg.LimitBytes {
		c := l.closed[0]
		if err := l.cfg.Dir.Remove(c.name); err != nil {
			return fmt.Errorf("limit %d bytes: %w", l.cfg.LimitBytes, err)
		}
		l.closed = l.closed[1:]
		l.closedBytes -= c.bytes
		l.rowsDropped += c.rows
		l.chunksDropped++
	}
	return nil
}

// appendWakeupRow appends r as one CSV row with its newline: the columns
// of Header, in its order.
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

// removeWakeupLog deletes every file of log base in d: <base>.csv,
// chunks and temporary files.
func removeWakeupLog(d *safeio.Dir, base string) error {
	names, err := d.ReadDir()
	if err != nil {
		return err
	}
	for _, name := range names {
		_, _, chunk := parseWakeupChunkName(base, name)
		if name == base+".csv" || chunk || isWakeupLogTemp(base, name) {
			if err := d.Remove(name); err != nil {
				return err
			}
		}
	}
	return nil
}
