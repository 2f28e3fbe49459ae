package facts

import (
	"path/filepath"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/interop"
	"github.com/rtload/rtload/results"
)

// TestForeignFiles reads back the files rtload writes for other tools —
// cyclictest's -h layout and an HdrHistogram log — as compare columns:
// their wakeup latency matches the run they came from.
func TestForeignFiles(t *testing.T) {
	h := hdrhistogram.New(0, 10e9, 3)
	for i := int64(1); i <= 1000; i++ {
		h.RecordValue(5000 + i*40) // 5.04 µs … 45 µs
	}
	lat := results.LatencyFromHistogram(h, 0)
	s := &results.Summary{Version: results.SummaryVersion, Scenario: "timer-only",
		Clock: results.ClockInfo{Kind: "tsc", Unit: "TSC ticks", Hz: 2e9},
		Trials: []results.Trial{{Variant: "base", DurationNs: 10e9,
			Readers: []results.Reader{{Name: "timer", Wakeups: lat.Count, WakeupLatency: lat}}}}}
	dir := t.TempDir()
	if _, err := interop.WriteInterop(testutil.ResultsDir(t, dir).Dir, s); err != nil {
		t.Fatal(err)
	}
	runs, err := load.Runs([]string{filepath.Join(dir, "wakeup-cyclictest.txt"), filepath.Join(dir, "wakeup.hlog")}, []string{"ct", "hlog"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if !r.Foreign || len(r.Summary.Trials) != 1 || len(r.Summary.Trials[0].Readers) != 1 {
			t.Fatalf("%s: %+v", r.Label, r.Summary)
		}
		got := r.Summary.Trials[0].Readers[0].WakeupLatency
		if got.Count != 1000 {
			t.Errorf("%s: %d wakeups, want 1000", r.Label, got.Count)
		}
		// cyclictest rows are 1 µs wide: within 1 µs of the original p99.
		if d := got.P99Ns - lat.P99Ns; d > 1000 || d < -1000 {
			t.Errorf("%s: p99 %d ns, want %d ±1 µs", r.Label, got.P99Ns, lat.P99Ns)
		}
	}
	res, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("foreign runs give warnings: %+v", res.Warnings)
	}
}
