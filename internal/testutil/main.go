package testutil

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Main runs the tests of a package (call it from TestMain) and exits with
// their status, or with 1 when /proc/self/fd holds descriptors after the
// run that were not there before it. The Go runtime's own descriptors,
// opened lazily by the first socket or timer that needs them (the
// netpoller's epoll instance and its eventfd/pipe wakeup, pidfds), are not
// counted: they live as long as the process.
func Main(m *testing.M) {
	before, err := OpenFDs()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testutil: fd leak check off: %v\n", err)
		os.Exit(m.Run())
	}
	code := m.Run()
	// Give finalizers (os.File, net.Conn) a bounded chance to close what
	// the tests dropped without closing: up to 10 GC rounds, 10 ms apart.
	var leaks []string
	for i := 0; i < 10; i++ {
		runtime.GC()
		after, err := OpenFDs()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testutil: fd leak check: %v\n", err)
			os.Exit(1)
		}
		if leaks = Leaked(before, after); len(leaks) == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "testutil: %d file descriptor(s) leaked by the tests:\n\t%s\n", len(leaks), strings.Join(leaks, "\n\t"))
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// OpenFDs returns this process's open descriptors and what each points to
// (the readlink of /proc/self/fd/N, e.g. "socket:[1234]", "/dev/null").
// The descriptor used to read the directory is not included.
func OpenFDs() (map[int]string, error) {
	d, err := os.Open("/proc/self/fd") // procfs: the kernel's own directory
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	self := int(d.Fd())
	fds := make(map[int]string, len(names))
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd == self {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + n)
		if err != nil {
			continue // closed between Readdirnames and Readlink
		}
		fds[fd] = target
	}
	return fds, nil
}

// runtimeOwned reports whether target is a descriptor the Go runtime or
// standard library opens once and keeps for the life of the process.
func runtimeOwned(target string) bool {
	switch target {
	case "anon_inode:[eventpoll]", // netpoller (epoll_create1)
		"anon_inode:[eventfd]", // netpoller wakeup (Go ≥ 1.21)
		"anon_inode:[pidfd]":   // os/exec and os.StartProcess pidfd probes
		return true
	}
	// The netpoller's wakeup pipe on kernels or Go versions without eventfd.
	return strings.HasPrefix(target, "pipe:[")
}

// Leaked lists, as "fd N -> target" sorted by fd, the descriptors in after
// that are not in before (same number and target) and are not the runtime's.
func Leaked(before, after map[int]string) []string {
	var fds []int
	for fd, target := range after {
		if before[fd] == target || runtimeOwned(target) {
			continue
		}
		fds = append(fds, fd)
	}
	sort.Ints(fds)
	out := make([]string, len(fds))
	for i, fd := range fds {
		out[i] = fmt.Sprintf("fd %d -> %s", fd, after[fd])
	}
	return out
}
