package plot

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results/wakelog"
)

// TestLoadThinsWhileReading: Load keeps at most MaxPoints wakeups of a
// column however long its log (issue 34: holding 32.8 M rows took plot to
// 6.4 GB), and keeps the ones thin would draw from all of them, the
// spike included.
func TestLoadThinsWhileReading(t *testing.T) {
	testutil.Long(t, "reads 400,000 wakeup rows")
	dir := t.TempDir()
	s := testutil.LongLogDir(t, dir, 400_000, 123_456, 900_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cols, err := Load([]string{dir}, nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	c := cols[0]
	if len(c.Wakeups) > MaxPoints {
		t.Fatalf("%d wakeups kept, want at most %d", len(c.Wakeups), MaxPoints)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("plotting a log of 400,000 rows allocated %d MiB", alloc>>20)
	}
	// What thin makes of every row, as the time panel drew it.
	rows, _, err := wakelog.ReaderWakeups(dir, s.Trials[0].Readers[0])
	if err != nil {
		t.Fatal(err)
	}
	all := make([]Wakeup, len(rows))
	for i, w := range rows {
		all[i] = Wakeup{Seconds: float64(w.DeadlineNs-rows[0].DeadlineNs) / 1e9, LatencyUs: float64(w.LatencyNs) / 1e3}
	}
	want := thin(all, MaxPoints)
	if len(want) != len(c.Wakeups) {
		t.Fatalf("%d points kept, thin of every row gives %d", len(c.Wakeups), len(want))
	}
	spike := false
	for i, p := range want {
		if got := c.Wakeups[i]; got.Seconds != p.X || got.LatencyUs != p.Y {
			t.Fatalf("point %d: %+v, thin of every row gives %+v", i, got, p)
		}
		spike = spike || p.Y == 900
	}
	if !spike {
		t.Error("the spike of 900 µs is not kept")
	}
}

// TestCDFOneLatency: a column whose logged wakeups all have one latency
// (and no HDR histogram) draws its CDF: gonum widened the one-point range
// by ±1, below 0, and its log scale panicked ("Values must be greater
// than 0 for a log scale"; found reading issue 34's logs of 0 and 1 ns).
func TestCDFOneLatency(t *testing.T) {
	cols := []Column{{Label: "v", Wakeups: []Wakeup{{Seconds: 0, LatencyUs: 0}, {Seconds: 0.01, LatencyUs: 0.001}}}}
	if err := Render(cols, Options{Out: filepath.Join(t.TempDir(), "p.png")}); err != nil {
		t.Fatal(err)
	}
}
