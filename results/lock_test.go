package results_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rtload/rtload/results"
)

// TestClaimRace: runs racing for one empty directory (or one new path)
// from a common start: exactly one claims it each time; every other one
// is refused with a DirError naming the directory and the winner's pid;
// the winner's Close removes the lock, leaving the directory as found.
func TestClaimRace(t *testing.T) {
	const rounds, racers = 20, 8
	for _, existing := range []bool{true, false} {
		name := "existing empty directory"
		if !existing {
			name = "new path"
		}
		t.Run(name, func(t *testing.T) {
			for round := range rounds {
				dir := filepath.Join(t.TempDir(), "out")
				if existing {
					if err := os.Mkdir(dir, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				var (
					wg    sync.WaitGroup
					start = make(chan struct{})
					dirs  = make([]*results.Dir, racers)
					errs  = make([]error, racers)
				)
				for i := range racers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						dirs[i], _, errs[i] = results.CreateDir(dir)
					}()
				}
				close(start)
				wg.Wait()
				won := 0
				for i, err := range errs {
					switch {
					case err == nil:
						won++
					case !errors.Is(err, results.ErrUnsafeDir) || !strings.Contains(err.Error(), dir) ||
						!strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())):
						t.Errorf("round %d, racer %d: %v; want a refusal naming %s and pid %d", round, i, err, dir, os.Getpid())
					}
				}
				if won != 1 {
					t.Fatalf("round %d: %d of %d racers claimed %s, want exactly 1 (%v)", round, won, racers, dir, errs)
				}
				for _, d := range dirs {
					d.Close()
				}
				if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
					t.Fatalf("round %d: after Close %s holds %v (%v), want nothing", round, dir, ents, err)
				}
			}
		})
	}
}

// TestClaimHeld: the lock is flock(2)ed by the claiming run until Close,
// and a later run is told it is in use; a marker whose run has ended
// (no lock held: killed) is refused as such, naming the file to remove.
func TestClaimHeld(t *testing.T) {
	dir := t.TempDir()
	d, _, err := results.CreateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, results.LockFile))
	if err != nil {
		t.Fatalf("no %s in a claimed directory: %v", results.LockFile, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("flock of a claimed directory's lock: %v, want EWOULDBLOCK", err)
	}
	f.Close()
	if _, _, err := results.CreateDir(dir); err == nil || !strings.Contains(err.Error(), "is in use by another rtload run (pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("a second claim: %v, want in use by pid %d", err, os.Getpid())
	}
	d.Close()
	if _, err := os.Lstat(filepath.Join(dir, results.LockFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock left after Close: %v", err)
	}

	// A killed run's marker: present, not locked.
	stale := filepath.Join(dir, results.LockFile)
	if err := os.WriteFile(stale, []byte("pid 4194301\nstarted 2026-12-01T10:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = results.CreateDir(dir)
	want := fmt.Sprintf("another rtload run (pid 4194301, started 2026-12-01T10:00:00Z) that has ended without removing it (killed?): if no run uses the directory, remove %s", stale)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a stale marker: %v\nwant %q", err, want)
	}
}
