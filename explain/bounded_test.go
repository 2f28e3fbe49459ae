package explain

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// TestDirStreamsWakeupLogs: Dir analyzes a reader's wakeup log in two
// passes over its files and holds none of it (issue 34: holding 32.8 M
// rows took explain to 3.9 GB), so 400,000 rows allocate a few MiB, and
// the spike among them is found.
func TestDirStreamsWakeupLogs(t *testing.T) {
	testutil.Long(t, "streams millions of wakeup rows")
	dir := t.TempDir()
	testutil.LongLogDir(t, dir, 400_000, 123_456, 900_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rs, err := Dir(dir)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	w := rs[0].Wakeups
	if w == nil || w.Rows != 400_000 || w.Spikes == 0 {
		t.Fatalf("wakeups %+v, want 400000 rows and the spike", w)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("explaining a log of 400,000 rows allocated %d MiB", alloc>>20)
	}
}

// TestDirStreamsSpikes: Dir reads spikes.jsonl as a stream, keeping of
// each spike only what the analysis asks (issue 34: held, 100 MB of
// spikes took explain to 3 GB): with 200,000 spikes (31 MB) its live heap
// stays at a few MiB (garbage aside: each line is decoded and dropped).
func TestDirStreamsSpikes(t *testing.T) {
	testutil.Long(t, "streams 58 MB of spikes")
	dir := t.TempDir()
	s := testutil.LongLogDir(t, dir, 1000, 500, 900_000)
	tr, rd := s.Trials[0], s.Trials[0].Readers[0]
	var b strings.Builder
	for k := range 200_000 {
		fmt.Fprintf(&b, `{"trial":%d,"variant":"%s","reader":"%s","tick":%d,"latency_ns":900000,"threshold_ns":800000,"noise":[{"kind":"hackbench","unit":"messages","state":"on"}]}`+"\n", tr.Index, tr.Variant, rd.Name, k)
	}
	if err := os.WriteFile(filepath.Join(dir, results.SpikesFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var rs []Reader
	var err error
	live := peakLiveHeap(func() { rs, err = Dir(dir) })
	if err != nil {
		t.Fatal(err)
	}
	w := rs[0].Wakeups
	if w == nil || w.Threshold != 800_000 || w.Spikes != 1 || w.NoiseKnown != 1 || w.NoiseOn != 1 {
		t.Fatalf("wakeups %+v, want the spike at tick 500 over the reader's threshold, noise on", w)
	}
	t.Logf("%d MiB live at most", live>>20)
	if live > 24<<20 {
		t.Errorf("explaining with 200,000 spikes (%d MB): %d MiB live", b.Len()>>20, live>>20)
	}
}

// peakLiveHeap runs f with the collector at GOGC=10 and returns the
// largest live heap (runtime/metrics /gc/heap/live:bytes, as the last
// collection found it) seen while it ran, sampled every millisecond.
func peakLiveHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	done, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var p uint64
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				peak <- p
				return
			case <-tk.C:
				p = max(p, read())
			}
		}
	}()
	f()
	close(done)
	p := max(<-peak, read())
	return p - min(p, base)
}
