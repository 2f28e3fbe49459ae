package results

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockFile is the marker a run holds in its results directory from the
// moment it claims the directory (CreateDir, CreateNewDir) until Close:
// "pid N" and "started TIME" lines, flock(2)ed LOCK_EX by the run for as
// long as it holds it, and removed by Close. Two runs given the same empty
// --out at the same moment both find it empty, but only one can link its
// marker into place: the other is refused, naming the first one's pid. A
// marker left by a run that was killed (SIGKILL) is no longer locked; the
// refusal then says that run has ended.
const LockFile = ".rtload.lock"

// maxLockFile bounds how much of a LockFile is read back.
const maxLockFile = 4096

// claim takes the directory for this process: it writes the marker into
// a fresh temporary file, locks it (flock LOCK_EX) and hard-links it to
// LockFile with linkat(2), which never follows a link and fails when the
// name exists. So the marker appears already whole and locked, and of runs
// racing for the directory exactly one links it; the others get a
// *DirError naming it (lockHolder).
func (d *Dir) claim() error {
	f, tmp, err := d.createTemp(LockFile)
	if err != nil {
		return fmt.Errorf("results directory %s: lock: %w", d.path, err)
	}
	defer func() {
		d.root.Remove(tmp) // the temporary name only; the marker keeps the inode
		d.forget(tmp)
	}()
	body := fmt.Sprintf("pid %d\nstarted %s\n", os.Getpid(), time.Now().Format(time.RFC3339))
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return fmt.Errorf("results directory %s: lock: write %s: %w", d.path, tmp, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("results directory %s: lock: %w", d.path, os.NewSyscallError("flock", err))
	}
	if err := d.root.Link(tmp, LockFile); err != nil {
		f.Close()
		if errors.Is(err, fs.ErrExist) {
			return &DirError{d.path, d.lockHolder()}
		}
		return fmt.Errorf("results directory %s: lock: link %s: %w", d.path, LockFile, err)
	}
	d.mu.Lock()
	d.lock = f
	d.mu.Unlock()
	return nil
}

// ReleaseLock removes the directory's LockFile and drops its lock, if this
// Dir holds them (Close does it too); it is idempotent and safe to call
// while other goroutines write into the directory (a forced exit).
func (d *Dir) ReleaseLock() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lock == nil {
		return
	}
	if d.root != nil {
		d.root.Remove(LockFile)
	}
	d.lock.Close() // drops the flock
	d.lock = nil
}

// lockHolder says who holds the directory's LockFile, as a DirError
// reason: a run still holding its lock, or one that ended without removing
// the marker.
func (d *Dir) lockHolder() string {
	f, err := d.root.OpenFile(LockFile, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Sprintf("is being claimed by another rtload run (its %s cannot be read: %v): one run per results directory; choose another", LockFile, err)
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxLockFile))
	who := "another rtload run"
	if pid, started := parseLock(b); pid > 0 {
		who = "another rtload run (pid " + strconv.Itoa(pid)
		if started != "" {
			who += ", started " + started
		}
		who += ")"
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return fmt.Sprintf("is in use by %s: one run per results directory; choose another", who)
	case err == nil:
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return fmt.Sprintf("holds the lock of %s that has ended without removing it (killed?): if no run uses the directory, remove %s, or choose another",
			who, filepath.Join(d.path, LockFile))
	default:
		return fmt.Sprintf("is locked by %s (%v): one run per results directory; choose another", who, os.NewSyscallError("flock", err))
	}
}

// withoutClaims is names less the temporary files of claims in flight
// (another run's claim makes one for an instant before linking it to
// LockFile): they do not make a directory non-empty. A killed claim's
// leftover stays harmless: LockFile itself always counts.
func withoutClaims(names []string) []string {
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, "."+LockFile+".") || !strings.HasSuffix(n, ".tmp") {
			out = append(out, n)
		}
	}
	return out
}

// parseLock reads a LockFile's pid and start time (0, "" when absent).
func parseLock(b []byte) (pid int, started string) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, _ := bytes.Cut(line, []byte(" "))
		switch string(k) {
		case "pid":
			if n, err := strconv.Atoi(string(v)); err == nil && n > 0 {
				pid = n
			}
		case "started":
			if t, err := time.Parse(time.RFC3339, string(v)); err == nil {
				started = t.Format(time.RFC3339)
			}
		}
	}
	return pid, started
}
