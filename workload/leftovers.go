package workload

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rtload/rtload/sysinfo"
)

// LeftoverPrefix starts the name of every directory and file NewFileWrite
// creates: LeftoverPrefix + "<pid>-<random>", the pid being the creating
// process's, the random part decimal (os.MkdirTemp) or hex digits.
const LeftoverPrefix = "rtload-fstime-"

// Leftover is an entry of a directory that a FileWrite of a run made, as
// ListLeftovers finds it.
type Leftover struct {
	// Path is the entry's path; PID the creating process's pid, from its
	// name.
	Path string
	PID  int
	// Stale says SweepLeftovers removes it: the entry is one NewFileWrite
	// makes (a directory or a regular file, not a link, owned by this
	// user) and its owner pid is gone.
	Stale bool
	// Why says, for a person, why it is stale or kept ("owner pid 4242 is
	// gone (no /proc/4242)", "a symbolic link, not a file rtload made").
	Why string
}

// parseLeftoverName returns the pid in a name NewFileWrite makes: the
// prefix, a decimal pid without sign or leading zero, "-", and 1–20
// lowercase hex digits. ok is false for anything else, so an older
// rtload's rtload-fstime-<random> directory (no pid) is never taken.
func parseLeftoverName(name string) (pid int, ok bool) {
	rest, ok := strings.CutPrefix(name, LeftoverPrefix)
	if !ok {
		return 0, false
	}
	digits, suffix, ok := strings.Cut(rest, "-")
	if !ok || digits == "" || digits[0] == '0' || len(digits) > 10 || suffix == "" || len(suffix) > 20 {
		return 0, false
	}
	if strings.Trim(suffix, "0123456789abcdef") != "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid > 1<<31-1 {
		return 0, false
	}
	return pid, true
}

// ListLeftovers returns the entries of dir (os.TempDir() for the
// directories of FileWrites without a Dir, or a file_write dir) whose names
// NewFileWrite makes, sorted by name; a missing dir has none. Each is
// lstat(2)ed, never followed: only a directory or regular file owned by the
// effective user can be Stale, and only when sysinfo.PIDGone says its
// owner pid is gone (this process's own never is).
func ListLeftovers(dir string) ([]Leftover, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fstime leftovers: %w", err)
	}
	var out []Leftover
	for _, de := range des {
		pid, ok := parseLeftoverName(de.Name())
		if !ok {
			continue
		}
		l := Leftover{Path: filepath.Join(dir, de.Name()), PID: pid}
		if _, why := sysinfo.OwnEntry(l.Path, true); why != "" {
			l.Why = why + ": not one rtload made"
		} else {
			gone, why := sysinfo.PIDGone(pid)
			l.Stale, l.Why = gone && pid != os.Getpid(), "owner "+why
		}
		out = append(out, l)
	}
	return out, nil
}

// SweepLeftovers removes the entries of dir that ListLeftovers reports
// Stale and returns them. Removal happens through an os.Root on dir, so it
// can never reach outside dir, and follows no link: a directory goes with
// everything in it (links inside are removed, not followed). It goes on
// after a failed removal and returns every error joined.
func SweepLeftovers(dir string) ([]Leftover, error) {
	entries, err := ListLeftovers(dir)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("fstime leftovers: %w", err)
	}
	defer root.Close()
	var (
		removed []Leftover
		errs    []error
	)
	for _, l := range entries {
		if !l.Stale {
			continue
		}
		if err := root.RemoveAll(filepath.Base(l.Path)); err != nil {
			errs = append(errs, fmt.Errorf("fstime leftover %s: %w", l.Path, err))
			continue
		}
		removed = append(removed, l)
	}
	return removed, errors.Join(errs...)
}
