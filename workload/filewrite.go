package workload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// FileWriteConfig configures the fstime write loop (unixbench fstime
// w_test, seed 002_6f10e0e6388b30c2: 256-byte write(2) calls, 2000 per pass,
// then lseek(fd, 0, SEEK_SET), for 10 s, reported in KB/s). The zero value
// is invalid: Block and Blocks must be set.
type FileWriteConfig struct {
	// Dir holds the file; "" = a new os.MkdirTemp directory that Close removes.
	Dir string
	// Block is the bytes per write(2) call, ≥ 1 (256 in the seed).
	Block int
	// Blocks is the write(2) calls per pass before lseek(fd, 0, SEEK_SET), ≥ 1
	// (2000 in the seed).
	Blocks int
	// Clock times each write(2) call; nil = no per-call timing (then Hist
	// and HDR must be nil too).
	Clock *rt.Clock
	// Hist (optional) receives each write's cost in clock ticks.
	Hist *record.Linear
	// HDR (optional) receives each write's cost in ns (ticks converted with
	// Clock.Info().Hz).
	HDR *record.HDR
}

// validate lists every problem of c; it does not change c.
func (c FileWriteConfig) validate() error {
	var errs []error
	if c.Block < 1 {
		errs = append(errs, fmt.Errorf("block %d bytes: must be ≥ 1", c.Block))
	}
	if c.Blocks < 1 {
		errs = append(errs, fmt.Errorf("blocks %d per pass: must be ≥ 1", c.Blocks))
	}
	if c.Clock == nil && (c.Hist != nil || c.HDR != nil) {
		errs = append(errs, errors.New("hist/hdr set without a clock to time the writes"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("filewrite config: %w", errors.Join(errs...))
	}
	return nil
}

// FileWriteResult is a FileWrite's accounting. Run returns the counts of
// that call; Result returns them since NewFileWrite, with ElapsedNs the sum
// of the time spent in Run (direct Pass calls add counts, not time).
type FileWriteResult struct {
	// Passes counts completed passes (Blocks writes without an error, then
	// a successful lseek). Writes counts write(2) calls that returned ≥ 0
	// bytes, Bytes what they wrote, ShortWrites those that wrote less than
	// Block, Errors the calls (write or lseek) that failed.
	Passes, Writes, Bytes, ShortWrites, Errors uint64
	// ElapsedNs is CLOCK_MONOTONIC time inside Run.
	ElapsedNs int64
	// KBps is Bytes/1024 per second of ElapsedNs: unixbench's "KB/sec".
	KBps float64
	// WritesPerSec is Writes per second of ElapsedNs.
	WritesPerSec float64
	// FileSize is the file's fstat(2) size when the result was taken
	// (Blocks*Block once a pass completed); -1 if fstat failed.
	FileSize int64
	// LastErrno is the last error of a write or lseek (0 if none).
	LastErrno unix.Errno
}

// FileWrite is unixbench fstime's write test on one file, driven by raw
// write(2) and lseek(2) calls on a blocking fd that never meets the
// netpoller. One goroutine at a time may use it (the probe's thread).
type FileWrite struct {
	fd        int
	path      string
	tmpDir    string // made by NewFileWrite, removed by Close
	buf       []byte
	blocks    int
	clock     *rt.Clock
	hist      *record.Linear
	hdr       *record.HDR
	nsPerTick float64
	c         FileWriteResult // counts since construction; ElapsedNs summed over Run
	lastCalls uint32          // system calls of the last Pass
	closed    bool
}

// fileSeq numbers the FileWrites of this process so that two in one Dir
// never share (and truncate or unlink) a file.
var fileSeq atomic.Uint64

// NewFileWrite creates the file rtload-fstime-<pid>-<n> in cfg.Dir (n
// counts FileWrites in this process) with open(2)
// O_CREAT|O_TRUNC|O_WRONLY|O_CLOEXEC, mode 0600, and preallocates a
// Block-byte buffer filled with a byte pattern. Every problem of cfg is
// listed in one error; on any error nothing stays open or created.
func NewFileWrite(cfg FileWriteConfig) (_ *FileWrite, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	f := &FileWrite{fd: -1, blocks: cfg.Blocks, clock: cfg.Clock, hist: cfg.Hist, hdr: cfg.HDR}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	dir := cfg.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "rtload-fstime-"); err != nil {
			return nil, fmt.Errorf("filewrite: %w", err)
		}
		f.tmpDir = dir
	}
	name := "rtload-fstime-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(fileSeq.Add(1)-1, 10)
	f.path = filepath.Join(dir, name)
	fd, err := unix.Open(f.path, unix.O_CREAT|unix.O_TRUNC|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		f.path = "" // not ours: Close must not unlink a file that someone else made
		return nil, fmt.Errorf("filewrite: %w", &os.PathError{Op: "open", Path: filepath.Join(dir, name), Err: err})
	}
	f.fd = fd
	f.buf = make([]byte, cfg.Block)
	for i := range f.buf {
		f.buf[i] = byte(i)
	}
	if cfg.Clock != nil {
		f.nsPerTick = 1e9 / cfg.Clock.Info().Hz
	}
	return f, nil
}

// Path returns the file's path.
func (f *FileWrite) Path() string { return f.path }

// Write wraps write(2): one Block-byte write at the current offset, retried
// on EINTR, timed into Hist and HDR when set, and counted. It returns the
// call's errno (0 on success, short writes included). It does not allocate.
func (f *FileWrite) Write() unix.Errno {
	var t0 rt.Ticks
	if f.clock != nil {
		t0 = f.clock.Now()
	}
	var n int
	var err error
	for {
		n, err = unix.Write(f.fd, f.buf)
		if err != unix.EINTR {
			break
		}
	}
	if f.clock != nil {
		dt := uint64(f.clock.Now() - t0)
		if f.hist != nil {
			f.hist.Record(dt)
		}
		if f.hdr != nil {
			f.hdr.Record(uint64(float64(dt) * f.nsPerTick))
		}
	}
	if err != nil {
		return f.fail(err)
	}
	f.c.Writes++
	f.c.Bytes += uint64(n)
	if n < len(f.buf) {
		f.c.ShortWrites++
	}
	return 0
}

// Rewind wraps lseek(2): lseek(fd, 0, SEEK_SET), counted on failure. It does
// not allocate.
func (f *FileWrite) Rewind() unix.Errno {
	if _, err := unix.Seek(f.fd, 0, unix.SEEK_SET); err != nil {
		return f.fail(err)
	}
	return 0
}

// Offset returns the file position, lseek(fd, 0, SEEK_CUR), in bytes.
func (f *FileWrite) Offset() (int64, unix.Errno) {
	off, err := unix.Seek(f.fd, 0, unix.SEEK_CUR)
	if err != nil {
		return -1, errnoOf(err)
	}
	return off, 0
}

func (f *FileWrite) fail(err error) unix.Errno {
	errno := errnoOf(err)
	f.c.Errors++
	f.c.LastErrno = errno
	return errno
}

// errnoOf returns err as a unix.Errno (EIO for anything else, which
// x/sys/unix does not return).
func errnoOf(err error) unix.Errno {
	if errno, ok := err.(unix.Errno); ok {
		return errno
	}
	return unix.EIO
}

// Pass makes Blocks write(2) calls, then lseek(fd, 0, SEEK_SET): one
// fstime inner loop, one unit of measured work. A failing write ends the
// pass early (fstime gives up on a write error too), and the lseek still
// runs so the next pass starts at offset 0. It returns the first errno (0
// if none); a pass counts in Passes only when it had none. Short writes are
// counted, not retried. It does not allocate.
func (f *FileWrite) Pass() unix.Errno {
	var first unix.Errno
	w := uint32(0)
	for i := 0; i < f.blocks; i++ {
		w++
		if errno := f.Write(); errno != 0 {
			first = errno
			break
		}
	}
	if errno := f.Rewind(); errno != 0 && first == 0 {
		first = errno
	}
	if first == 0 {
		f.c.Passes++
	}
	f.lastCalls = w + 1 // the writes and the lseek
	return first
}

// LastCalls returns the system calls of the last Pass: its write(2) calls
// plus the lseek(2).
func (f *FileWrite) LastCalls() uint32 { return f.lastCalls }

// Run repeats Pass until CLOCK_MONOTONIC (rt.Monotonic) reaches untilNs or
// stop (nil = none) is set, both checked between passes as fstime checks
// its alarm, or until a pass returns an errno. It returns this call's
// accounting: Passes, Writes … and ElapsedNs from entry to the end of the
// last pass, so every pass started counts whole (Writes == Passes*Blocks
// unless a write failed). Call it on the thread that owns f.
func (f *FileWrite) Run(untilNs int64, stop *atomic.Bool) FileWriteResult {
	before := f.c
	start := rt.Monotonic()
	for (stop == nil || !stop.Load()) && rt.Monotonic() < untilNs {
		if f.Pass() != 0 {
			break
		}
	}
	elapsed := rt.Monotonic() - start
	f.c.ElapsedNs += elapsed
	r := FileWriteResult{
		Passes: f.c.Passes - before.Passes, Writes: f.c.Writes - before.Writes, Bytes: f.c.Bytes - before.Bytes,
		ShortWrites: f.c.ShortWrites - before.ShortWrites, Errors: f.c.Errors - before.Errors,
		ElapsedNs: elapsed,
	}
	if r.Errors > 0 {
		r.LastErrno = f.c.LastErrno
	}
	return f.finish(r)
}

// Result returns the accounting since NewFileWrite.
func (f *FileWrite) Result() FileWriteResult { return f.finish(f.c) }

// finish fills the rates and the file size of r.
func (f *FileWrite) finish(r FileWriteResult) FileWriteResult {
	r.KBps, r.WritesPerSec = 0, 0
	if r.ElapsedNs > 0 {
		s := float64(r.ElapsedNs) / 1e9
		r.KBps = float64(r.Bytes) / 1024 / s
		r.WritesPerSec = float64(r.Writes) / s
	}
	r.FileSize = -1
	var st unix.Stat_t
	if f.fd >= 0 && unix.Fstat(f.fd, &st) == nil {
		r.FileSize = st.Size
	}
	return r
}

// Close closes the fd, removes the file and, when NewFileWrite made it, the
// temporary directory. It is idempotent; later Passes fail with EBADF.
func (f *FileWrite) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	if f.fd >= 0 {
		if err := unix.Close(f.fd); err != nil {
			errs = append(errs, fmt.Errorf("filewrite %s: %w", f.path, os.NewSyscallError("close", err)))
		}
		f.fd = -1
	}
	if f.path != "" {
		if err := os.Remove(f.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("filewrite: %w", err))
		}
	}
	if f.tmpDir != "" {
		if err := os.RemoveAll(f.tmpDir); err != nil {
			errs = append(errs, fmt.Errorf("filewrite: %w", err))
		}
	}
	return errors.Join(errs...)
}
