package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// ResultsDir opens dir (made by the test) as a results directory; it is
// closed at Cleanup.
func ResultsDir(t testing.TB, dir string) *store.Dir {
	t.Helper()
	d, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// WriteSummary writes s as dir/summary.json.
func WriteSummary(t testing.TB, dir string, s *results.Summary) {
	t.Helper()
	if err := ResultsDir(t, dir).WriteSummary(s); err != nil {
		t.Fatal(err)
	}
}

// WakeupLatencyOf summarises the latencies of logged wakeups (negative ones
// count as 0, as the reader records them) exactly as the engine's recorder
// would have: for a complete log it equals the reader's WakeupLatency
// without its HDR. Tests compare a wakeup log with its summary by it.
func WakeupLatencyOf(rows []record.Wakeup) results.Latency {
	h := record.NewHDR(results.WakeupLatencyRange)
	for _, w := range rows {
		h.RecordSigned(w.LatencyNs)
	}
	return results.LatencyOf(h, false)
}

// Latency is the Latency (with its HDR encoding) of n samples base,
// base+step, … ns.
func Latency(n int, base, step int64) results.Latency {
	h := record.NewHDR(results.WakeupLatencyRange)
	for i := range n {
		h.RecordSigned(base + int64(i)*step)
	}
	return results.LatencyOf(h, true)
}

// TickStats is the TickStats (with its HDR encoding) of n samples base,
// base+step, … ticks.
func TickStats(n int, base, step uint64) results.TickStats {
	h := record.NewHDR(1 << 40)
	for i := range n {
		h.Record(base + uint64(i)*step)
	}
	return results.TickStatsOf(h, true)
}

// Tmpfs mounts a tmpfs of size bytes (a small disk that fills) on a fresh
// directory and returns it; Cleanup unmounts it. Needs root (skips
// otherwise).
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	Requires(t, Root)
	dir := t.TempDir()
	if err := unix.Mount("rtload-test", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// FillDisk writes a file "filler" in dir until its filesystem is full (at
// most 1 GiB; more fails the test).
func FillDisk(t testing.TB, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler")) // test helper: a file in a tmpfs the test mounted
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	for range 4096 {
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
	t.Fatal("disk never filled")
}

// DirNames lists dir's entries by name.
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
