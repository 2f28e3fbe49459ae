package load

import (
	"runtime"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
)

// TestLoadStreamsWakeupLogs: Load checks a reader's wakeup log row by
// row and holds none of it (issue 34: holding 32.8 M rows took compare
// to 4.8 GB), so loading 400,000 rows allocates a few MiB, not the 22 MB
// of rows.
func TestLoadStreamsWakeupLogs(t *testing.T) {
	dir := t.TempDir()
	testutil.LongLogDir(t, dir, 400_000, 123_456, 900_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	runs, err := Runs([]string{dir}, []string{"a"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs[0].Notes) != 0 {
		t.Errorf("notes: %q", runs[0].Notes)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("loading a log of 400,000 rows allocated %d MiB", alloc>>20)
	}
}
