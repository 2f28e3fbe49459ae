package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results/wakelog"
)

// TestLoadTornWakeupLog: a wakeup log whose last line was cut short (no
// newline, 3 of 10 fields) is read without that row, and the run's notes
// say so, naming the file and the line: never silently.
func TestLoadTornWakeupLog(t *testing.T) {
	dir := t.TempDir()
	s := comparetest.SeedRuns()[0].Summary
	s.Trials[0].Readers[0].WakeupLog = []string{"w.csv"}
	testutil.WriteSummary(t, dir, s)
	log := wakelog.Header + "\n1,10000000,5000,400000,450,451,1,0,0,0\n2,20000000,4"
	if err := os.WriteFile(filepath.Join(dir, "w.csv"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := Runs([]string{dir}, []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	want := "wakeup log: " + filepath.Join(dir, "w.csv") + ":3: last line cut short (no newline; 3 of 10 fields): skipped"
	if !strings.Contains(strings.Join(runs[0].Notes, "\n"), want) {
		t.Errorf("notes %q, want %q", runs[0].Notes, want)
	}
}
