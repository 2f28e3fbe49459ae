package safeio

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// Decompression is bounded by what it produces, not by what it reads: a
// 2.6 MB gzip file can hold 1 GiB of valid rows, and a 10 MB .pb.gz 10
// GiB. Every gzip stream rtload reads from results (wakeup-log chunks,
// profiles; every member of a multi-member file counted together) goes
// through Inflate, which stops with ErrInflateLimit as soon as either
// bound is passed:
//   - more than max bytes inflated (what the writer ever puts in one file:
//     wakelog.MaxChunkBytes, results.MaxProfileInflatedBytes);
//   - more than MaxInflateRatio times the compressed bytes read so far,
//     once past inflateRatioFloor. The data rtload writes compresses far
//     less: wakeup-log rows 4–5× (measured on 200,000 rows of a loaded and
//     of a timer-only reader, gzip levels 1–9), pprof protobufs about 2×;
//     gzip's ceiling is about 1032×. A file past the ratio is a bomb,
//     refused after inflating about a MiB, not a large file read to its
//     end.

// ErrInflateLimit is matched by the error of a gzip stream that inflates
// past its bound.
var ErrInflateLimit = errors.New("inflates past its limit")

// MaxInflateRatio is the most inflated bytes per compressed byte read:
// six times what rtload's own files reach.
const MaxInflateRatio = 32

// inflateRatioFloor is the inflated size below which the ratio is not
// checked (a small file of repeated rows may compress well).
const inflateRatioFloor = 1 << 20

// Inflate returns a reader of the gzip stream r (all its members) that
// fails with an error wrapping ErrInflateLimit, naming the bound, once it
// has produced more than limit bytes or more than MaxInflateRatio
// times the compressed bytes consumed (past inflateRatioFloor). Errors
// of the stream itself (a bad header, a truncated or corrupt member) are
// gzip's; Inflate's own are prefixed with name, Read's are not (the caller
// names the file and the line).
func Inflate(r io.Reader, name string, limit int64) (io.ReadCloser, error) {
	cr := &countingReader{r: bufio.NewReaderSize(r, 64<<10)}
	zr, err := gzip.NewReader(cr)
	if err != nil {
		return nil, fmt.Errorf("%s: gzip: %w", name, err)
	}
	return &inflater{zr: zr, in: cr, max: limit}, nil
}

// countingReader counts the bytes read through it. It is an
// io.ByteReader, so that gzip reads exactly what it consumes and the
// count is the compressed bytes used.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

type inflater struct {
	zr  *gzip.Reader
	in  *countingReader
	max int64
	out int64
	err error
}

func (z *inflater) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	// Never hand out more than one byte past max in total: the caller
	// sees the data up to the bound and then the error.
	if room := z.max + 1 - z.out; int64(len(p)) > room {
		p = p[:max(room, 0)]
	}
	n, err := z.zr.Read(p)
	z.out += int64(n)
	switch {
	case z.out > z.max:
		z.err = fmt.Errorf("gzip stream %w of %s inflated: refused (a decompression bomb, or not written by rtload)", ErrInflateLimit, SizeName(z.max))
		return 0, z.err
	case z.out > inflateRatioFloor && z.out > MaxInflateRatio*z.in.n:
		z.err = fmt.Errorf("gzip stream %w: %d bytes inflated from %d, more than %d× (a decompression bomb: rtload's own files compress far less)", ErrInflateLimit, z.out, z.in.n, MaxInflateRatio)
		return 0, z.err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("gzip: %w", err)
		z.err = err
	}
	return n, err
}

func (z *inflater) Close() error { return z.zr.Close() }

// InflateAll reads the whole gzip stream r through Inflate.
func InflateAll(r io.Reader, name string, limit int64) ([]byte, error) {
	zr, err := Inflate(r, name, limit)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}
