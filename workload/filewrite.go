package workload

import (
	"crypto/rand"
	"encoding/hex"
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
	dirFD     int    // the directory holding the file, for openat and unlinkat
	name      string // the file's name in it
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

// NewFileWrite creates the file the writes go to and preallocates a
// Block-byte buffer filled with a byte pattern. rtload runs as root, so the
// file is created link-safe:
//
//   - Dir "": in a new directory made for it, os.TempDir()/
//     rtload-fstime-<pid>-<random> (mkdir(2) mode 0700, never an existing
//     one), the file "fstime".
//   - Dir set: in Dir, which must be owned by this user or by root (else
//     the error says whose it is), the file rtload-fstime-<pid>-<random>.
//
// The file is made with openat(2) on the directory's fd, flags
// O_CREAT|O_EXCL|O_NOFOLLOW|O_WRONLY|O_CLOEXEC and mode 0666 less the
// umask: a link or file planted at that name makes the open fail (EEXIST,
// then a fresh random name is tried, up to 16 times) instead of being
// followed or truncated. Close unlinks it with unlinkat(2) on the same
// directory fd. The pid in the names lets ListLeftovers and SweepLeftovers
// (rtload cleanup) find what a killed run left behind. Every problem of cfg
// is listed in one error; on any error nothing stays open or created.
func NewFileWrite(cfg FileWriteConfig) (_ *FileWrite, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	f := &FileWrite{fd: -1, dirFD: -1, blocks: cfg.Blocks, clock: cfg.Clock, hist: cfg.Hist, hdr: cfg.HDR}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	dir := cfg.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", LeftoverPrefix+strconv.Itoa(os.Getpid())+"-"); err != nil {
			return nil, fmt.Errorf("filewrite: %w", err)
		}
		f.tmpDir = dir
	}
	if f.dirFD, err = openDir(dir, f.tmpDir == ""); err != nil {
		return nil, fmt.Errorf("filewrite: %w", err)
	}
	if err := f.create(dir); err != nil {
		return nil, fmt.Errorf("filewrite: %w", err)
	}
	f.buf = make([]byte, cfg.Block)
	for i := range f.buf {
		f.buf[i] = byte(i)
	}
	if cfg.Clock != nil {
		f.nsPerTick = 1e9 / cfg.Clock.Info().Hz
	}
	return f, nil
}

// openDir opens dir for openat(2) and, with checkOwner, refuses one owned
// by neither this user nor root.
func openDir(dir string, checkOwner bool) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, &os.PathError{Op: "fstat", Path: dir, Err: err}
	}
	if euid := os.Geteuid(); checkOwner && int(st.Uid) != euid && st.Uid != 0 {
		unix.Close(fd)
		return -1, fmt.Errorf("dir %s is owned by uid %d, not by this user (uid %d) or root: refusing to write into another user's directory", dir, st.Uid, euid)
	}
	return fd, nil
}

// create makes the file in f.dirFD (dir is its path, for messages).
func (f *FileWrite) create(dir string) error {
	const flags = unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_WRONLY | unix.O_CLOEXEC
	for try := 0; ; try++ {
		name := "fstime"
		if f.tmpDir == "" {
			name = LeftoverPrefix + strconv.Itoa(os.Getpid()) + "-" + randomHex()
		}
		fd, err := unix.Openat(f.dirFD, name, flags, 0o666)
		if err == nil {
			f.fd, f.name, f.path = fd, name, filepath.Join(dir, name)
			return nil
		}
		if err != unix.EEXIST || f.tmpDir != "" || try == 15 {
			return &os.PathError{Op: "openat O_CREAT|O_EXCL|O_NOFOLLOW", Path: filepath.Join(dir, name), Err: err}
		}
	}
}

// randomHex returns 8 lowercase hex digits from crypto/rand.
func randomHex() string {
	var b [4]byte
	rand.Read(b[:]) // never returns an error (crypto/rand, Go ≥ 1.24)
	return hex.EncodeToString(b[:])
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

// Close closes the fd, unlinks the file (unlinkat(2) in the directory it
// was made in) and, when NewFileWrite made it, removes the temporary
// directory (rmdir(2): only when empty, never through a link). It is idempotent; later Passes fail with EBADF.
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
	if f.name != "" {
		if err := unix.Unlinkat(f.dirFD, f.name, 0); err != nil && err != unix.ENOENT {
			errs = append(errs, fmt.Errorf("filewrite: %w", &os.PathError{Op: "unlinkat", Path: f.path, Err: err}))
		}
	}
	if f.dirFD >= 0 {
		unix.Close(f.dirFD)
		f.dirFD = -1
	}
	if f.tmpDir != "" {
		if err := unix.Rmdir(f.tmpDir); err != nil && err != unix.ENOENT {
			errs = append(errs, fmt.Errorf("filewrite: %w", &os.PathError{Op: "rmdir", Path: f.tmpDir, Err: err}))
		}
	}
	return errors.Join(errs...)
}
