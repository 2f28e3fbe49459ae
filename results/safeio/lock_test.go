package safeio_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rtload/rtload/results/safeio"
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
					dirs  = make([]*safeio.Dir, racers)
					errs  = make([]error, racers)
				)
				for i := range racers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						dirs[i], _, errs[i] = safeio.CreateDir(dir)
					}()
				}
				close(start)
				wg.Wait()
				won := 0
				for i, err := range errs {
					switch {
					case err == nil:
						won++
					case !errors.Is(err, safeio.ErrUnsafeDir) || !strings.Contains(err.Error(), dir) ||
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
// and a later run is told it is in use.
func TestClaimHeld(t *testing.T) {
	dir := t.TempDir()
	d, _, err := safeio.CreateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, safeio.LockFile))
	if err != nil {
		t.Fatalf("no %s in a claimed directory: %v", safeio.LockFile, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("flock of a claimed directory's lock: %v, want EWOULDBLOCK", err)
	}
	f.Close()
	if _, _, err := safeio.CreateDir(dir); err == nil || !strings.Contains(err.Error(), "is in use by another rtload run (pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("a second claim: %v, want in use by pid %d", err, os.Getpid())
	}
	if d.TakenOver() != "" {
		t.Errorf("a fresh claim says it took over: %s", d.TakenOver())
	}
	d.Close()
	if _, err := os.Lstat(filepath.Join(dir, safeio.LockFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock left after Close: %v", err)
	}
}

// killedRun leaves in dir what a killed run leaves (issue 34 row 6): its
// marker, not locked, and its files.
func killedRun(t *testing.T, dir string) {
	t.Helper()
	for name, body := range map[string]string{
		safeio.LockFile:                     "pid 4194301\nstarted 2026-12-01T10:00:00Z\n",
		"wakeups-p00-00-recvfrom-r0-rt.csv": "seq,wakeup_ns\n",
		"summary.json":                      "{}",
		".summary.json.12345.tmp":           "{",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClaimKilledRun (issue 34 row 6): a directory holding a killed run's
// marker (no lock held) and files is taken over by the next run, which
// says so naming the killed run, and finds the directory empty but for
// its own marker: the killed run's files are moved, not lost, into
// killed-run-<pid>. On main the next run was refused ("remove …").
func TestClaimKilledRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	killedRun(t, dir)
	d, _, err := safeio.CreateDir(dir)
	if err != nil {
		t.Fatalf("a killed run's directory: %v, want it taken over", err)
	}
	msg := d.TakenOver()
	sub := filepath.Join(dir, safeio.KilledRunDir+"4194301")
	want := "taken over from rtload pid 4194301 (started 2026-12-01T10:00:00Z), which ended without releasing it (killed?); its 3 entries moved to " + sub
	if msg != want {
		t.Errorf("TakenOver: %q\nwant %q", msg, want)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != safeio.LockFile+" "+safeio.KilledRunDir+"4194301" {
		t.Errorf("directory after the takeover: %v, want only the lock and the killed run's subdirectory", names)
	}
	moved, _ := os.ReadDir(sub)
	if len(moved) != 3 {
		t.Errorf("%s holds %d entries, want the killed run's 3", sub, len(moved))
	}
	b, _ := os.ReadFile(filepath.Join(dir, safeio.LockFile))
	if !strings.Contains(string(b), "pid "+strconv.Itoa(os.Getpid())+"\n") {
		t.Errorf("the lock is not this run's: %q", b)
	}
	if _, _, err := safeio.CreateDir(dir); err == nil || !strings.Contains(err.Error(), "is in use by another rtload run (pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("a claim of the taken-over directory: %v, want in use", err)
	}
	d.Close()
	if _, err := os.Lstat(filepath.Join(dir, safeio.LockFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock left after Close: %v", err)
	}
}

// TestClaimKilledRunRace: runs racing to take over one killed run's
// directory: exactly one does each time, the others are refused naming
// it (in use by this pid).
func TestClaimKilledRunRace(t *testing.T) {
	const rounds, racers = 20, 8
	for round := range rounds {
		dir := filepath.Join(t.TempDir(), "out")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		killedRun(t, dir)
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			dirs  = make([]*safeio.Dir, racers)
			errs  = make([]error, racers)
		)
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				dirs[i], _, errs[i] = safeio.CreateDir(dir)
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
				if dirs[i].TakenOver() == "" {
					t.Errorf("round %d: the winner does not say it took over", round)
				}
			case !errors.Is(err, safeio.ErrUnsafeDir) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())):
				t.Errorf("round %d, racer %d: %v; want a refusal naming pid %d", round, i, err, os.Getpid())
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of %d racers took %s over, want exactly 1 (%v)", round, won, racers, dir, errs)
		}
		for _, d := range dirs {
			d.Close()
		}
		if moved, _ := os.ReadDir(filepath.Join(dir, safeio.KilledRunDir+"4194301")); len(moved) != 3 {
			t.Errorf("round %d: %d of the killed run's 3 entries kept", round, len(moved))
		}
	}
}
