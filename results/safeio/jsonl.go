package safeio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"github.com/rtload/rtload/internal/termsafe"
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

// JSONLLimits bound a JSONL file read (EachJSONL).
type JSONLLimits struct {
	Bytes   int64          // the largest file, and all its lines read
	Cap     string         // why no writer passes Bytes, for its refusal: "spikes.jsonl is capped at 64 MiB"
	Line    int            // the longest line
	Records int            // the most lines
	Lists   map[string]int // the pre-pass's list limits (Bounds.Lists)
	Memory  int64          // one line's decoded memory, when no budget is given
}

// EachJSONL decodes every line of path into a T and calls f with it, in
// order, charging each record (twice its size) and what it decodes to to
// budget (nil: each line its own, of lim.Memory). A torn last line (a
// writer killed mid-write) is skipped and reported in torn; a bad line
// anywhere else or one past lim is an error naming its line (and
// column); a file larger than lim.Bytes is refused before it is read.
// path's last component is opened as Source.Open opens every file (a
// link, a FIFO or a device is refused). On an error, f has seen the
// records before it.
func EachJSONL[T any](path string, lim *JSONLLimits, budget *Bounds, f func(T)) (torn int, err error) {
	src, file, fi, err := OpenInput(path)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	defer file.Close()
	path = termsafe.Escape(path)
	if fi.Size() > lim.Bytes {
		return 0, fmt.Errorf("%s: %d bytes, larger than the limit of %s for a JSONL file (%s): refused", path, fi.Size(), SizeName(lim.Bytes), lim.Cap)
	}
	typ := reflect.TypeFor[T]()
	var read int64
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 0, 64<<10), lim.Line)
	line := 0
	var bad error
	for sc.Scan() {
		line++
		if bad != nil { // a bad line followed by another: not a torn tail
			return 0, bad
		}
		if line > lim.Records {
			return 0, fmt.Errorf("%s:%d: more than %d records, more than rtload writes: refused", path, line, lim.Records)
		}
		// The file may grow as it is read (a running soak's): what is
		// read is bounded as its size was.
		if read += int64(len(sc.Bytes())) + 1; read > lim.Bytes {
			return 0, fmt.Errorf("%s:%d: larger than the limit of %s for a JSONL file: refused", path, line, SizeName(lim.Bytes))
		}
		// The pre-pass: its list limits and key check on every line, and
		// the records' memory in budget (else a line's own, fresh).
		lb, record := budget, 2*int64(typ.Size())
		if lb == nil {
			lb, record = &Bounds{Lists: lim.Lists, Limit: lim.Memory, What: "a line of any JSONL file rtload writes"}, 0
		}
		if serr := lb.Check(sc.Bytes(), path, line, typ, record); serr != nil && !errors.Is(serr, ErrSyntax) {
			return 0, serr
		}
		var v T
		if jerr := json.Unmarshal(sc.Bytes(), &v); jerr != nil {
			bad = fmt.Errorf("%s:%d: %w", path, line, jerr)
			continue
		}
		f(v)
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	if bad != nil {
		return 1, nil // only the very last line may be torn
	}
	return 0, nil
}
