package sysinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// RSS returns this process's resident set size in bytes: the second field
// of /proc/self/statm (pages) times the page size. See proc_pid_statm(5).
// A writer sampling it often uses a ProcReader instead.
func RSS() (int64, error) { return NewProcReader().RSS() }

// parseStatmRSS reads the resident field of a /proc/<pid>/statm text, in
// bytes for pages of pageSize bytes.
func parseStatmRSS(statm string, pageSize int) (int64, error) {
	return parseStatm([]byte(statm), int64(pageSize))
}

// OpenFDs counts this process's open file descriptors: the entries of
// /proc/self/fd (the directory's own fd, open while it is read, included).
// A writer sampling it often uses a ProcReader instead.
func OpenFDs() (int, error) { return NewProcReader().OpenFDs() }

// PIDGone reports whether process pid is known to be gone, read from
// /proc/<pid>/status (proc_pid_status(5)): gone when the file is missing
// (no process has the pid), when the process is a zombie or dead (it
// exited and holds nothing), or when the pid now names a thread of another
// process (Tgid ≠ pid). why gives the evidence either way, for a person
// ("pid 4242 is gone (no /proc/4242)", "pid 17 (sshd) is running (state
// S (sleeping))"). Whatever cannot be read counts as not gone. Neither the
// program's name nor its start time decides: a pid the kernel has given to
// an unrelated process counts as running until that process exits.
func PIDGone(pid int) (gone bool, why string) {
	if pid <= 0 {
		return false, fmt.Sprintf("pid %d is not a process id: counted as running", pid)
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH):
		return true, fmt.Sprintf("pid %d is gone (no /proc/%d)", pid, pid)
	case err != nil:
		return false, fmt.Sprintf("pid %d: %v: counted as running", pid, err)
	}
	return parsePIDStatus(pid, string(status))
}

// parsePIDStatus applies PIDGone's rule to a /proc/<pid>/status text.
func parsePIDStatus(pid int, status string) (gone bool, why string) {
	field := func(key string) string {
		for line := range strings.Lines(status) {
			if v, ok := strings.CutPrefix(line, key); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	name, tgid, state := field("Name:"), field("Tgid:"), field("State:")
	who := fmt.Sprintf("pid %d (%s)", pid, name)
	switch {
	case tgid != "" && tgid != strconv.Itoa(pid):
		return true, fmt.Sprintf("%s is now a thread of process %s", who, tgid)
	case strings.HasPrefix(state, "Z") || strings.HasPrefix(state, "X"):
		return true, fmt.Sprintf("%s has exited (state %s)", who, state)
	}
	return false, fmt.Sprintf("%s is running (state %s)", who, state)
}
