package engine

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// TestPlantedLinks: links planted in an (already open) results directory
// under the names a run writes, pointing at a root-only file, are never
// followed: the run refuses to write through intervals.jsonl or
// spikes.jsonl (EEXIST, naming the file); a wakeup log replaces an
// earlier log of its name, so it removes the link itself and creates its
// own file. The victim keeps its content either way.
func TestPlantedLinks(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	victim := filepath.Join(t.TempDir(), "victim")
	content := []byte("root's own data\n")
	if err := os.WriteFile(victim, content, 0o600); err != nil {
		t.Fatal(err)
	}
	spec, trials := load(t, `
name: planted
duration: 300ms
warmup: 50ms
interval: 100ms
readers: [{name: rt, cpu: 1, period: 10ms, threshold: 1us}]
`)
	for _, name := range []string{results.IntervalsFile, results.SpikesFile, results.WakeupLogBase(0, "base", 0, "rt") + ".csv"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			_, err := Run(context.Background(), spec, trials, Options{OutDir: dir})
			if filepath.Ext(name) == ".csv" {
				fi, lerr := os.Lstat(filepath.Join(dir, name))
				if err != nil || lerr != nil || !fi.Mode().IsRegular() {
					t.Errorf("wakeup log over a planted link: run %v, file %v %v", err, fi.Mode(), lerr)
				}
			} else if !errors.Is(err, fs.ErrExist) || !bytes.Contains([]byte(err.Error()), []byte(name)) {
				t.Errorf("run over a planted %s: %v, want EEXIST naming it", name, err)
			}
			if got, err := os.ReadFile(victim); err != nil || !bytes.Equal(got, content) {
				t.Fatalf("victim changed: %q %v", got, err)
			}
		})
	}
}

// TestSoakDefaultCaps: a soak whose scenario sets no log_limit still caps
// its wakeup log (SoakWakeupLogLimit), and says so in the summary.
func TestSoakDefaultCaps(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	spec, trials := load(t, `
name: soak-caps
duration: 0s
interval: 200ms
readers: [{name: rt, cpu: 1, period: 10ms}]
`)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	sum, err := Run(ctx, spec, trials, Options{OutDir: t.TempDir()})
	if !errors.Is(err, ErrStopped) || sum == nil || len(sum.Trials) != 1 {
		t.Fatalf("soak: %v", err)
	}
	if r := sum.Trials[0].Readers[0]; r.WakeupLogLimit != SoakWakeupLogLimit || len(r.WakeupLog) == 0 {
		t.Errorf("wakeup log cap %d, files %v; want %d", r.WakeupLogLimit, r.WakeupLog, SoakWakeupLogLimit)
	}
}
