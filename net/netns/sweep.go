package netns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Entry is one rtload namespace found in Dir.
type Entry struct {
	// Name is the file name in Dir, e.g. "rtl4242-0badc0de".
	Name string
	// PID and RunID are what ParseName read from Name.
	PID   int
	RunID string
	// Alive says the run that created the namespace may still be running
	// (see List for the rule). Sweep deletes only entries where it is false.
	Alive bool
}

// List returns rtload's namespaces: the entries of Dir whose names
// ParseName accepts, sorted by name. Other entries, including names that
// start with Prefix but do not parse, are never listed. A missing Dir
// means there are none.
//
// Alive is true unless the owner is known to be gone: no process has the
// pid (/proc/<pid> is missing), or it is a zombie (exited, holding
// nothing), or the pid is a thread of another process. Whatever cannot be
// read counts as alive. Neither the program's name nor its start time is
// checked: a renamed binary, a debugger's build or a wall clock stepped
// forward must never make a live run look dead to another run's Sweep. The
// price is that a leftover whose pid the kernel has since given to an
// unrelated process waits for that process to exit before Sweep takes it.
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
		out = append(out, Entry{Name: de.Name(), PID: pid, RunID: runID, Alive: alive(pid)})
	}
	return out, nil
}

// Sweep deletes the namespaces that List reports with Alive false (runs
// that died without Close) and returns their names. It never touches a
// namespace whose owner may be alive, nor any name ParseName rejects. It
// goes on after a failed deletion and returns every error joined.
func Sweep() ([]string, error) {
	entries, err := List()
	if err != nil {
		return nil, err
	}
	var (
		removed []string
		errs    []error
	)
	for _, e := range entries {
		if e.Alive {
			continue
		}
		if err := removeNamed(Dir + "/" + e.Name); err != nil {
			errs = append(errs, fmt.Errorf("netns %s: sweep: %w", e.Name, err))
			continue
		}
		removed = append(removed, e.Name)
	}
	return removed, errors.Join(errs...)
}

// alive reports whether pid may still be the run that created a namespace
// (the rule is in List's doc).
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	proc := "/proc/" + strconv.Itoa(pid)
	status, err := os.ReadFile(proc + "/status")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
		return false
	}
	if err != nil {
		return true
	}
	tgid, state := statusField(string(status), "Tgid:"), statusField(string(status), "State:")
	if tgid != "" && tgid != strconv.Itoa(pid) {
		return false // a thread of another process, not a process
	}
	if strings.HasPrefix(state, "Z") || strings.HasPrefix(state, "X") {
		return false // exited, not yet reaped: it holds nothing
	}
	return true
}

// statusField returns the value of key (e.g. "Tgid:") in a
// /proc/<pid>/status text, or "".
func statusField(status, key string) string {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// RemoveOwned deletes every rtload namespace whose name carries pid (this
// process's, on a forced exit that cannot wait for Close) and returns their
// names. Names that ParseName rejects are never touched.
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
		if e.PID != pid {
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
