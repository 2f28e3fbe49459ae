package workload_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/workload"
)

// The seed's fstime shape (002_6f10e0e6388b30c2): 256-byte writes, 2000 per pass.
const (
	fstimeBlock  = 256
	fstimeBlocks = 2000
)

func newFileWrite(t testing.TB, cfg workload.FileWriteConfig) *workload.FileWrite {
	t.Helper()
	f, err := workload.NewFileWrite(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestFileWriteRun runs the seed's loop for 300 ms. Passes are never cut
// short by the deadline (it is checked between passes), so without errors
// Writes is exactly Passes*Blocks.
func TestFileWriteRun(t *testing.T) {
	c := clock(t)
	hist := record.NewLinear(128, 64, 8256)
	hdr := record.NewHDR(int64(time.Second))
	f := newFileWrite(t, workload.FileWriteConfig{Dir: t.TempDir(), Block: fstimeBlock, Blocks: fstimeBlocks,
		Clock: c, Hist: hist, HDR: hdr})
	var stop atomic.Bool
	r := f.Run(rt.Monotonic()+int64(300*time.Millisecond), &stop)
	t.Logf("%+v", r)

	if r.Passes == 0 || r.Errors != 0 || r.ShortWrites != 0 || r.LastErrno != 0 {
		t.Fatalf("Run = %+v; want passes and no errors or short writes", r)
	}
	if r.Writes != r.Passes*fstimeBlocks {
		t.Errorf("Writes %d != Passes %d × Blocks %d", r.Writes, r.Passes, fstimeBlocks)
	}
	if r.Bytes != r.Writes*fstimeBlock {
		t.Errorf("Bytes %d != Writes %d × Block %d", r.Bytes, r.Writes, fstimeBlock)
	}
	if r.FileSize != fstimeBlocks*fstimeBlock {
		t.Errorf("FileSize %d, want %d (the file never grows past one pass)", r.FileSize, fstimeBlocks*fstimeBlock)
	}
	if r.ElapsedNs < int64(300*time.Millisecond) {
		t.Errorf("ElapsedNs %d ends before the 300 ms deadline", r.ElapsedNs)
	}
	secs := float64(r.ElapsedNs) / 1e9
	if want := float64(r.Bytes) / 1024 / secs; math.Abs(r.KBps-want) > 1e-9*want {
		t.Errorf("KBps %f, want Bytes/1024/s = %f", r.KBps, want)
	}
	if want := float64(r.Writes) / secs; math.Abs(r.WritesPerSec-want) > 1e-9*want {
		t.Errorf("WritesPerSec %f, want %f", r.WritesPerSec, want)
	}
	if hist.Total() != r.Writes {
		t.Errorf("Hist.Total %d, Writes %d", hist.Total(), r.Writes)
	}
	if n := hdr.Histogram().TotalCount(); uint64(n) != r.Writes {
		t.Errorf("HDR count %d, Writes %d", n, r.Writes)
	}
	if off, errno := f.Offset(); off != 0 || errno != 0 {
		t.Errorf("offset after Run = %d, %v; want 0", off, errno)
	}
	if got := f.Result(); got.Passes != r.Passes || got.Writes != r.Writes || got.ElapsedNs != r.ElapsedNs {
		t.Errorf("Result() = %+v after one Run %+v", got, r)
	}

	// A second Run returns its own counts; Result sums both.
	stop.Store(true)
	if r2 := f.Run(rt.Monotonic()+int64(time.Second), &stop); r2.Passes != 0 || r2.Writes != 0 {
		t.Errorf("Run with stop set = %+v; want no pass", r2)
	}
	if r3 := f.Run(0, nil); r3.Passes != 0 {
		t.Errorf("Run past its deadline = %+v; want no pass", r3)
	}
	if got := f.Result(); got.Writes != r.Writes {
		t.Errorf("Result().Writes %d after empty Runs, want %d", got.Writes, r.Writes)
	}
}

// TestFileWriteOffset checks the position arithmetic: a Pass ends at 0,
// k raw writes end at k*Block.
func TestFileWriteOffset(t *testing.T) {
	const block, blocks = 100, 7
	f := newFileWrite(t, workload.FileWriteConfig{Dir: t.TempDir(), Block: block, Blocks: blocks})
	if errno := f.Pass(); errno != 0 {
		t.Fatal(errno)
	}
	if off, errno := f.Offset(); off != 0 || errno != 0 {
		t.Errorf("offset after Pass = %d, %v; want 0", off, errno)
	}
	if n := f.LastCalls(); n != blocks+1 {
		t.Errorf("LastCalls = %d; want %d writes + 1 lseek", n, blocks)
	}
	for k := 1; k <= 3*blocks; k++ { // past one pass: the file grows
		if errno := f.Write(); errno != 0 {
			t.Fatal(errno)
		}
		if off, errno := f.Offset(); off != int64(k*block) || errno != 0 {
			t.Fatalf("offset after %d writes = %d, %v; want %d", k, off, errno, k*block)
		}
	}
	if r := f.Result(); r.FileSize != 3*blocks*block || r.Passes != 1 || r.Writes != 4*blocks {
		t.Errorf("Result = %+v; want size %d, 1 pass, %d writes", r, 3*blocks*block, 4*blocks)
	}
	if errno := f.Rewind(); errno != 0 {
		t.Fatal(errno)
	}
	if off, _ := f.Offset(); off != 0 {
		t.Errorf("offset after Rewind = %d", off)
	}
	b, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range b {
		if c != byte(i%block) {
			t.Fatalf("file byte %d = %d, want the pattern %d", i, c, byte(i%block))
		}
	}
}

// TestFileWriteTempDir checks the file of a FileWrite without Dir: "fstime"
// in a new directory rtload-fstime-<pid>-<random> under os.TempDir() (the
// pid lets rtload cleanup tell a dead run's), mode 0666 less the umask.
func TestFileWriteTempDir(t *testing.T) {
	defer unix.Umask(unix.Umask(0o027))
	f, err := workload.NewFileWrite(workload.FileWriteConfig{Block: 16, Blocks: 4})
	if err != nil {
		t.Fatal(err)
	}
	path := f.Path()
	dir := filepath.Dir(path)
	prefix := fmt.Sprintf("%s%d-", workload.LeftoverPrefix, os.Getpid())
	if filepath.Base(path) != "fstime" || !strings.HasPrefix(filepath.Base(dir), prefix) || filepath.Dir(dir) != filepath.Clean(os.TempDir()) {
		t.Errorf("file %s: want fstime in a new directory %s… under %s", path, prefix, os.TempDir())
	}
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want a regular file 0640 (0666 less umask 027)", st.Mode())
	}
	if errno := f.Pass(); errno != 0 {
		t.Fatal(errno)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temp dir %s after Close: %v; want it removed", dir, err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if errno := f.Pass(); errno != unix.EBADF {
		t.Errorf("Pass after Close = %v, want EBADF", errno)
	}
	if r := f.Result(); r.Errors == 0 || r.LastErrno != unix.EBADF || r.FileSize != -1 {
		t.Errorf("Result after Close = %+v; want the EBADF counted and no size", r)
	}
}

func TestFileWriteCloseKeepsDir(t *testing.T) {
	dir := t.TempDir()
	a := newFileWrite(t, workload.FileWriteConfig{Dir: dir, Block: 8, Blocks: 2})
	b := newFileWrite(t, workload.FileWriteConfig{Dir: dir, Block: 8, Blocks: 2})
	if a.Path() == b.Path() {
		t.Fatalf("two FileWrites share %s", a.Path())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("file after Close: %v", err)
	}
	if _, err := os.Stat(b.Path()); err != nil {
		t.Errorf("other FileWrite's file: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("caller's Dir removed: %v", err)
	}
}

func TestNewFileWriteErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		name string
		cfg  workload.FileWriteConfig
		want []string // substrings of the error
		is   error
	}{
		{"missing dir is named", workload.FileWriteConfig{Dir: missing, Block: 256, Blocks: 2000},
			[]string{"open " + missing + ": no such file or directory"}, fs.ErrNotExist},
		{"every config problem listed", workload.FileWriteConfig{Block: 0, Blocks: -1, Hist: record.NewLinear(1, 0, 10)},
			[]string{"filewrite config", "block 0 bytes: must be ≥ 1", "blocks -1 per pass: must be ≥ 1", "without a clock"}, nil},
		{"hdr without clock", workload.FileWriteConfig{Block: 1, Blocks: 1, HDR: record.NewHDR(10)},
			[]string{"hist/hdr set without a clock"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := workload.NewFileWrite(tc.cfg)
			if err == nil {
				f.Close()
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed NewFileWrite left %s: %v", missing, err)
	}
}

func TestFileWritePassAllocs(t *testing.T) {
	c := clock(t)
	for _, tc := range []struct {
		name string
		cfg  workload.FileWriteConfig
	}{
		{"raw", workload.FileWriteConfig{Block: fstimeBlock, Blocks: 16}},
		{"timed+recorded", workload.FileWriteConfig{Block: fstimeBlock, Blocks: 16, Clock: c,
			Hist: record.NewLinear(128, 64, 8256), HDR: record.NewHDR(int64(time.Second))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Dir = t.TempDir()
			f := newFileWrite(t, tc.cfg)
			if a := testing.AllocsPerRun(100, func() { f.Pass() }); a != 0 {
				t.Errorf("Pass allocs %v", a)
			}
			if a := testing.AllocsPerRun(100, func() { f.Write() }); a != 0 {
				t.Errorf("Write allocs %v", a)
			}
			if r := f.Result(); r.Errors != 0 || r.Passes != 101 || r.Writes != 101*16+101 {
				t.Errorf("Result = %+v; want 101 passes (AllocsPerRun's warm-up + 100) and 101 more writes, no errors", r)
			}
		})
	}
}

// BenchmarkFileWritePass times b.N seed-shaped passes (2000 × 256-byte
// writes + lseek), raw and with per-write timing into both recorders.
func BenchmarkFileWritePass(b *testing.B) {
	c := clock(b)
	for _, bc := range []struct {
		name string
		cfg  workload.FileWriteConfig
	}{
		{"raw", workload.FileWriteConfig{Block: fstimeBlock, Blocks: fstimeBlocks}},
		{"timed+recorded", workload.FileWriteConfig{Block: fstimeBlock, Blocks: fstimeBlocks, Clock: c,
			Hist: record.NewLinear(128, 64, 8256), HDR: record.NewHDR(int64(time.Second))}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bc.cfg.Dir = b.TempDir()
			f := newFileWrite(b, bc.cfg)
			b.ReportAllocs()
			t0 := rt.Monotonic()
			for b.Loop() {
				if errno := f.Pass(); errno != 0 {
					b.Fatal(errno)
				}
			}
			ns := float64(rt.Monotonic() - t0)
			r := f.Result()
			b.ReportMetric(ns/float64(r.Writes), "ns/write")
			b.ReportMetric(float64(r.Bytes)/1024/(ns/1e9), "KB/s")
		})
	}
}

// TestFileWriteLinkSafe plants, in the Dir given, a symbolic link at every
// name the old scheme used (rtload-fstime-<pid>-<n>, n < 64), each pointing
// at a victim file elsewhere, as another user could in a shared /tmp.
// NewFileWrite and a pass must leave the victim untouched and write a
// regular file of their own, named unpredictably, mode 0666 less the umask.
func TestFileWriteLinkSafe(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	for n := range 64 {
		if err := os.Symlink(victim, filepath.Join(dir, fmt.Sprintf("rtload-fstime-%d-%d", os.Getpid(), n))); err != nil {
			t.Fatal(err)
		}
	}
	defer unix.Umask(unix.Umask(0o022))
	f := newFileWrite(t, workload.FileWriteConfig{Dir: dir, Block: 16, Blocks: 4})
	if errno := f.Pass(); errno != 0 {
		t.Fatal(errno)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious" {
		t.Errorf("victim after NewFileWrite and a pass: %q, %v; want it untouched", b, err)
	}
	st, err := os.Lstat(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm() != 0o644 || st.Size() != 4*16 {
		t.Errorf("%s: mode %v size %d; want a regular file 0644 (umask 022) holding one pass, 64 bytes", f.Path(), st.Mode(), st.Size())
	}
	name := filepath.Base(f.Path())
	rest, ok := strings.CutPrefix(name, fmt.Sprintf("rtload-fstime-%d-", os.Getpid()))
	if !ok || len(rest) != 8 || strings.Trim(rest, "0123456789abcdef") != "" {
		t.Errorf("file name %s; want rtload-fstime-<pid>-<8 random hex digits>", name)
	}
}

// TestFileWriteRefusesOthersDir gives a Dir owned by another user (nobody):
// root must not write into it.
func TestFileWriteRefusesOthersDir(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	dir := filepath.Join(t.TempDir(), "nobodys")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	f, err := workload.NewFileWrite(workload.FileWriteConfig{Dir: dir, Block: 16, Blocks: 4})
	if err == nil {
		f.Close()
		t.Fatal("NewFileWrite wrote into a directory owned by uid 65534")
	}
	if want := "owned by uid 65534, not by this user (uid 0) or root"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused NewFileWrite left %v", ents)
	}
}
