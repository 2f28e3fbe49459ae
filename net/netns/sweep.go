package netns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rtload/rtload/sysinfo"
)

// Entry is one rtload namespace found in Dir.
type Entry struct {
	// Name is the file name in Dir, e.g. "rtl4242-0badc0de".
	Name string
	// PID and RunID are what ParseName read from Name.
	PID   int
	RunID string
	// Alive says the run that created the namespace may still be running
	// (see List for the rule).
	Alive bool
	// Foreign says the file, though named like rtload's, is not one rtload
	// makes: a symbolic link, a directory, a file with contents, or a file
	// another user owns. It is never touched.
	Foreign bool
	// Why says, for a person, why the entry is alive, foreign or stale
	// ("owner pid 4242 is gone (no /proc/4242)").
	Why string
}

// Stale reports whether Sweep deletes e: its owner is gone and the file is
// one rtload makes.
func (e Entry) Stale() bool { return !e.Alive && !e.Foreign }

// List returns rtload's namespaces: the entries of Dir whose names
// ParseName accepts, sorted by name. Other entries, including names that
// start with Prefix but do not parse, are never listed. A missing Dir
// means there are none.
//
// An entry is Foreign unless lstat(2) shows what New leaves in Dir: an
// empty regular file (the bind mount of the namespace, or the file of a run
// that died before mounting it) owned by the effective user. Links are
// never followed.
//
// Alive is true unless the owner is known to be gone (sysinfo.PIDGone): no
// process has the pid, or it is a zombie (exited, holding nothing), or the
// pid is a thread of another process. Whatever cannot be read counts as
// alive. Neither the program's name nor its start time is checked: a
// renamed binary, a debugger's build or a wall clock stepped forward must
// never make a live run look dead to another run's Sweep. The price is
// that a leftover whose pid the kernel has since given to an unrelated
// process waits for that process to exit before Sweep takes it.
func List() ([]Entry, error) {
	des, err := os.ReadDir(Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("netns: list: %w", err)
	}
	var out []Entry
	for _, de := range des {
		pid, runID, ok := ParseName(de.Name())
		if !ok {
			continue
		}
		e := Entry{Name: de.Name(), PID: pid, RunID: runID}
		if why := foreign(filepath.Join(Dir, de.Name())); why != "" {
			e.Alive, e.Foreign, e.Why = true, true, why
		} else {
			gone, why := sysinfo.PIDGone(pid)
			e.Alive, e.Why = !gone || pid == os.Getpid(), "owner "+why
		}
		out = append(out, e)
	}
	return out, nil
}

// foreign returns why path is not a namespace file rtload made, or "".
func foreign(path string) string {
	fi, why := sysinfo.OwnEntry(path, false)
	if why == "" && fi.Size() != 0 {
		why = fmt.Sprintf("a file of %d bytes", fi.Size())
	}
	if why != "" {
		why += ": not a namespace rtload made"
	}
	return why
}

// Sweep deletes the namespaces that List reports Stale (runs that died
// without Close) and returns them, each with its Why. It never touches a
// namespace whose owner may be alive, a Foreign entry, nor any name
// ParseName rejects. It goes on after a failed deletion and returns every
// error joined.
func Sweep() ([]Entry, error) {
	entries, err := List()
	if err != nil {
		return nil, err
	}
	var (
		removed []Entry
		errs    []error
	)
	for _, e := range entries {
		if !e.Stale() {
			continue
		}
		if err := removeNamed(Dir + "/" + e.Name); err != nil {
			errs = append(errs, fmt.Errorf("netns %s: sweep: %w", e.Name, err))
			continue
		}
		removed = append(removed, e)
	}
	return removed, errors.Join(errs...)
}

// RemoveOwned deletes every rtload namespace whose name carries pid (this
// process's, on a forced exit that cannot wait for Close) and returns their
// names. Names that ParseName rejects and Foreign entries are never
// touched.
func RemoveOwned(pid int) ([]string, error) {
	entries, err := List()
	if err != nil {
		return nil, err
	}
	var (
		removed []string
		errs    []error
	)
	for _, e := range entries {
		if e.PID != pid || e.Foreign {
			continue
		}
		if err := removeNamed(Dir + "/" + e.Name); err != nil {
			errs = append(errs, fmt.Errorf("netns %s: %w", e.Name, err))
			continue
		}
		removed = append(removed, e.Name)
	}
	return removed, errors.Join(errs...)
}
