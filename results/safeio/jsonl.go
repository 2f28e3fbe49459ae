package safeio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// JSONL appends JSON records to a file, one per line, each in a single
// write(2) of the whole line. A failed or short write (a full disk) is cut
// back with ftruncate(2) to the end of the last whole record, so the file
// never ends in a torn line that rtload wrote, and the writer is broken
// from then on: Write returns the first error again. With a limit, records
// that would take the file past it are dropped and counted instead.
type JSONL struct {
	name    string
	f       *os.File
	buf     bytes.Buffer
	enc     *json.Encoder // into buf, kept: one record encodes without allocating an encoder
	size    int64         // bytes on disk, all whole records
	limit   int64
	dropped uint64
	err     error
}

// CreateJSONL creates name in d (O_EXCL: see Dir.Create) for records;
// limit > 0 caps its size in bytes.
func (d *Dir) CreateJSONL(name string, limit int64) (*JSONL, error) {
	f, err := d.Create(name)
	if err != nil {
		return nil, err
	}
	w := &JSONL{name: filepath.Join(d.path, name), f: f, limit: limit}
	w.enc = json.NewEncoder(&w.buf)
	return w, nil
}

// Write appends v as one line, or drops it (and counts it) when the line
// would pass the limit. Errors name the file; after one, every Write fails.
func (w *JSONL) Write(v any) error {
	if w == nil || w.f == nil {
		return os.ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return fmt.Errorf("%s: %w", w.name, err)
	}
	if w.limit > 0 && w.size+int64(w.buf.Len()) > w.limit {
		w.dropped++
		return nil
	}
	n, err := w.f.Write(w.buf.Bytes())
	if err == nil && n < w.buf.Len() {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 {
			w.f.Truncate(w.size)
		}
		w.err = fmt.Errorf("%s: %w", w.name, err)
		return w.err
	}
	w.size += int64(n)
	return nil
}

// Dropped is the number of records not written because of the limit.
func (w *JSONL) Dropped() uint64 {
	if w == nil {
		return 0
	}
	return w.dropped
}

// Sync fsyncs the file.
func (w *JSONL) Sync() error {
	if w == nil || w.f == nil {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", w.name, err)
	}
	return nil
}

// Close syncs and closes; idempotent.
func (w *JSONL) Close() error {
	if w == nil || w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if err != nil {
		return fmt.Errorf("%s: %w", w.name, err)
	}
	return nil
}
