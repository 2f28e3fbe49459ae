package explain

import (
	"runtime"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
)

// TestDirStreamsWakeupLogs: Dir analyzes a reader's wakeup log in two
// passes over its files and holds none of it (issue 34: holding 32.8 M
// rows took explain to 3.9 GB), so 400,000 rows allocate a few MiB, and
// the spike among them is found.
func TestDirStreamsWakeupLogs(t *testing.T) {
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
