package safeio

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
// marker left by a run that was killed (SIGKILL) is no longer locked: the
// next run takes the directory over (claim), moving the killed run's
// files into KilledRunDir and saying so (Dir.TakenOver).
const LockFile = ".rtload.lock"

// KilledRunDir is the prefix of the subdirectory a run that takes over a
// killed run's results directory moves that run's files into:
// killed-run-<pid> (-2, -3, … when taken), inside the directory itself,
// so that nothing the killed run wrote is lost or overwritten.
const KilledRunDir = "killed-run-"

// maxKilledRunDirs bounds the names tried for a KilledRunDir.
const maxKilledRunDirs = 100

// maxLockFile bounds how much of a LockFile is read back.
const maxLockFile = 4096

// claim takes the directory for this process: it writes the marker into
// a fresh temporary file, locks it (flock LOCK_EX) and hard-links it to
// LockFile with linkat(2), which never follows a link and fails when the
// name exists. So the marker appears already whole and locked, and of runs
// racing for the directory exactly one links it; the others get a
// *DirError naming it (lockHolder).
func (d *Dir) claim() error {
	f, tmp, err := d.CreateTemp(LockFile)
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
		if !errors.Is(err, fs.ErrExist) {
			f.Close()
			return fmt.Errorf("results directory %s: lock: link %s: %w", d.path, LockFile, err)
		}
		if err := d.takeOver(tmp); err != nil {
			f.Close()
			return err
		}
	}
	d.mu.Lock()
	d.lock = f
	d.mu.Unlock()
	return nil
}

// takeOver replaces the LockFile of a run that has ended without removing
// it (killed) with this run's marker tmp, already written and locked:
// it takes the old marker's flock (LOCK_EX, non-blocking: a live run holds
// it, and the claim is refused naming that run), checks that it is still
// the file at LockFile (another run may have taken over first), and only
// then renames tmp over it, so of runs taking over at once exactly one
// does. The old marker's lock is held until the rename is done: a run that
// opened the old marker and locks it after that finds another file at
// LockFile and is refused. The taken-over run's pid and start are kept
// for TakenOver.
func (d *Dir) takeOver(tmp string) error {
	old, err := d.root.OpenFile(LockFile, os.O_RDONLY, 0)
	if err != nil {
		return &DirError{d.path, d.LockHolder()}
	}
	defer old.Close() // drops the old marker's flock, after the rename
	switch err := lockEnded(old); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return &DirError{d.path, d.LockHolder()} // a live run's
	case err != nil:
		return fmt.Errorf("results directory %s: lock: %w", d.path, os.NewSyscallError("flock", err))
	}
	ofi, err1 := old.Stat()
	lfi, err2 := d.root.Lstat(LockFile)
	if err1 != nil || err2 != nil || !os.SameFile(ofi, lfi) {
		// Another run took over between our open and our lock: its
		// marker is at LockFile now, locked.
		return &DirError{d.path, d.LockHolder()}
	}
	b, _ := io.ReadAll(io.LimitReader(old, maxLockFile))
	pid, started := parseLock(b)
	if err := d.root.Rename(tmp, LockFile); err != nil {
		return fmt.Errorf("results directory %s: lock: take over %s: %w", d.path, LockFile, err)
	}
	d.mu.Lock()
	d.took = &takenOver{pid: pid, started: started}
	d.mu.Unlock()
	return nil
}

// lockEnded takes the flock (LOCK_EX, non-blocking) of old, a marker
// whose run may have ended. While its run has ended, a lock held on it is
// another claim's for an instant (a check of whether it is held takes a
// shared lock, a run taking it over an exclusive one until its rename),
// so lockEnded tries again, 1 ms apart, at most takeOverPolls times; a
// live run's lock is refused at once (EWOULDBLOCK).
func lockEnded(old *os.File) error {
	for try := 0; ; try++ {
		err := syscall.Flock(int(old.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || try == takeOverPolls {
			return err
		}
		b, _ := io.ReadAll(io.NewSectionReader(old, 0, maxLockFile))
		if pid, _ := parseLock(b); pid <= 0 || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// takenOver is the run whose results directory this one took over.
type takenOver struct {
	pid     int
	started string
	moved   int    // entries moved into sub
	sub     string // the KilledRunDir they went to ("" when none)
	moveErr error  // why the move stopped short, if it did
}

// TakenOver says, when this run took the directory over from a run that
// had ended without removing its LockFile (killed), which run it was and
// where its files went; "" otherwise. Print it: it is a run's directory
// reused.
func (d *Dir) TakenOver() string {
	d.mu.Lock()
	t := d.took
	d.mu.Unlock()
	if t == nil {
		return ""
	}
	who := "a run"
	if t.pid > 0 {
		who = "rtload pid " + strconv.Itoa(t.pid)
		if t.started != "" {
			who += " (started " + t.started + ")"
		}
	}
	msg := fmt.Sprintf("taken over from %s, which ended without releasing it (killed?)", who)
	switch {
	case t.moveErr != nil:
		msg += fmt.Sprintf("; moving its files into %s stopped after %d: %v", filepath.Join(d.path, t.sub), t.moved, t.moveErr)
	case t.moved > 0:
		noun := "entries"
		if t.moved == 1 {
			noun = "entry"
		}
		msg += fmt.Sprintf("; its %d %s moved to %s", t.moved, noun, filepath.Join(d.path, t.sub))
	}
	return msg
}

// moveKilledRun moves every entry of the directory but this run's
// LockFile and claims in flight into a fresh KilledRunDir named after
// the taken-over run's pid (renameat(2) through the directory's
// descriptor: links are moved, never followed), so the new run starts in
// an empty directory and the killed run's files are kept.
func (d *Dir) moveKilledRun() {
	d.mu.Lock()
	t := d.took
	d.mu.Unlock()
	if t == nil {
		return
	}
	names, err := d.ReadNames(-1)
	if err != nil {
		t.moveErr = err
		return
	}
	var move []string
	for _, n := range WithoutClaims(names) {
		if n != LockFile {
			move = append(move, n)
		}
	}
	if len(move) == 0 {
		return
	}
	base := KilledRunDir + strconv.Itoa(t.pid)
	for i := 1; i <= maxKilledRunDirs && t.sub == ""; i++ {
		sub := base
		if i > 1 {
			sub = fmt.Sprintf("%s-%d", base, i)
		}
		switch err := d.root.Mkdir(sub, 0o755); {
		case err == nil:
			t.sub = sub
		case !errors.Is(err, fs.ErrExist):
			t.sub, t.moveErr = sub, err
			return
		}
	}
	if t.sub == "" {
		t.sub, t.moveErr = base, fmt.Errorf("%s … -%d exist already", base, maxKilledRunDirs)
		return
	}
	for _, n := range move {
		if err := d.root.Rename(n, filepath.Join(t.sub, n)); err != nil {
			t.moveErr = err
			return
		}
		t.moved++
	}
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

// LockHolder says who holds the directory's LockFile, as a DirError
// reason: a run still holding its lock, or one that ended without removing
// the marker.
func (d *Dir) LockHolder() string {
	for try := 0; ; try++ {
		reason, takingOver := d.lockHolderOnce()
		if !takingOver {
			return reason
		}
		if try == takeOverPolls {
			return "is being taken over by another rtload run from " + reason + ": one run per results directory; choose another"
		}
		time.Sleep(time.Millisecond)
	}
}

// takeOverPolls bounds how many times (1 ms apart) lockHolder looks again
// at a LockFile whose run has ended but whose lock is held: another run
// taking it over holds it for microseconds, until its own marker is in
// place, which lockHolder then names.
const takeOverPolls = 50

// lockHolderOnce is lockHolder's one look: the reason, or, when the
// marker's run has ended (no process of its pid) but its lock is held
// (another run taking it over), who it was and true.
func (d *Dir) lockHolderOnce() (string, bool) {
	f, err := d.root.OpenFile(LockFile, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Sprintf("is being claimed by another rtload run (its %s cannot be read: %v): one run per results directory; choose another", LockFile, err), false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxLockFile))
	who := "another rtload run"
	pid, started := parseLock(b)
	if pid > 0 {
		who = "another rtload run (pid " + strconv.Itoa(pid)
		if started != "" {
			who += ", started " + started
		}
		who += ")"
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		if pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return strings.TrimPrefix(who, "another "), true
		}
		return fmt.Sprintf("is in use by %s: one run per results directory; choose another", who), false
	case err == nil:
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		// The marker this look opened may have been replaced since: a
		// run that took the directory over renamed its own over it and
		// then dropped the old one's lock. Look again at the new one.
		ofi, err1 := f.Stat()
		lfi, err2 := d.root.Lstat(LockFile)
		if err1 == nil && (errors.Is(err2, fs.ErrNotExist) || err2 == nil && !os.SameFile(ofi, lfi)) {
			return strings.TrimPrefix(who, "another "), true
		}
		// Only when a takeover failed part way.
		return fmt.Sprintf("holds the lock of %s that has ended without removing it (killed?), and it could not be taken over: if no run uses the directory, remove %s, or choose another",
			who, filepath.Join(d.path, LockFile)), false
	default:
		return fmt.Sprintf("is locked by %s (%v): one run per results directory; choose another", who, os.NewSyscallError("flock", err)), false
	}
}

// WithoutClaims is names less the temporary files of claims in flight
// (another run's claim makes one for an instant before linking it to
// LockFile): they do not make a directory non-empty. A killed claim's
// leftover stays harmless: LockFile itself always counts.
func WithoutClaims(names []string) []string {
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

// errKilledRun is checkEmpty's answer for a directory whose only
// obstacle is the LockFile of a run that has ended (killed): claim takes
// it over.
var errKilledRun = errors.New("results directory: a killed run's lock")

// lockHeld reports whether a live run holds the directory's LockFile
// (its flock taken; unreadable counts as held).
func (d *Dir) lockHeld() bool {
	f, err := d.root.OpenFile(LockFile, os.O_RDONLY, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
