package seccomp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Install loads prog on the calling thread: prctl(2)
// PR_SET_NO_NEW_PRIVS, then seccomp(2) SECCOMP_SET_MODE_FILTER with no
// flag (no SECCOMP_FILTER_FLAG_TSYNC: the other threads are not filtered;
// no SPEC_ALLOW: the kernel applies its speculation mitigation policy for
// seccomp threads, as for a container's). The caller's goroutine must be
// locked to its thread (runtime.LockOSThread) and stay locked until it
// exits: a filter cannot be removed, and a thread handed back to the Go
// runtime's pool would filter whatever goroutine it runs next. An empty
// prog installs nothing. Errors name the call; EINVAL from seccomp(2)
// means a kernel without CONFIG_SECCOMP_FILTER or a program it refused.
func Install(prog []bpf.RawInstruction) error {
	if len(prog) == 0 {
		return nil
	}
	if len(prog) > MaxInstructions {
		return fmt.Errorf("seccomp: %d instructions, more than the kernel's %d", len(prog), MaxInstructions)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl PR_SET_NO_NEW_PRIVS", err)
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, ins := range prog {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// A raw call with the pointer converted in its argument list, so the
	// program stays put for the call (unsafe.Pointer rule 4); the
	// kernel copies it.
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		err := os.NewSyscallError("seccomp SECCOMP_SET_MODE_FILTER", errno)
		if errno == unix.EINVAL {
			return fmt.Errorf("%w (a kernel without CONFIG_SECCOMP_FILTER, or a program it refused)", err)
		}
		return err
	}
	return nil
}

// Status is a thread's seccomp state as /proc/<pid>/task/<tid>/status
// gives it (proc(5)).
type Status struct {
	// Mode is the Seccomp line: 0 off, 1 strict, 2 filter; -1 when the
	// kernel shows none (no CONFIG_SECCOMP).
	Mode int
	// Filters is Seccomp_filters (Linux 5.9+): the filters attached to the
	// thread, its own and those it inherited; -1 when the kernel shows
	// none.
	Filters int
	// NoNewPrivs is the NoNewPrivs line (Linux 4.10+).
	NoNewPrivs bool
}

// ReadStatus reads the seccomp state of thread tid of this process.
func ReadStatus(tid int) (Status, error) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return Status{}, fmt.Errorf("seccomp status of thread %d: %w", tid, err)
	}
	return parseStatus(b)
}

// parseStatus reads the Seccomp, Seccomp_filters and NoNewPrivs lines of
// a status file.
func parseStatus(b []byte) (Status, error) {
	st := Status{Mode: -1, Filters: -1}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int
		switch string(key) {
		case "Seccomp":
			dst = &st.Mode
		case "Seccomp_filters":
			dst = &st.Filters
		case "NoNewPrivs":
			st.NoNewPrivs = string(bytes.TrimSpace(val)) == "1"
			continue
		default:
			continue
		}
		n, err := strconv.Atoi(string(bytes.TrimSpace(val)))
		if err != nil || n < 0 {
			return st, fmt.Errorf("seccomp status: %s: %q is not a count", key, bytes.TrimSpace(val))
		}
		*dst = n
	}
	if err := sc.Err(); err != nil {
		return st, fmt.Errorf("seccomp status: %w", err)
	}
	if st.Mode < 0 {
		return st, errors.New("seccomp status: no Seccomp line (a kernel without CONFIG_SECCOMP)")
	}
	return st, nil
}
