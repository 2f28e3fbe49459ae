package sysinfo

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// AddressSpace is what bounds this process's virtual address space and
// what it maps now: RLIMIT_AS (`ulimit -v`) against VmSize.
type AddressSpace struct {
	// Limit is the soft RLIMIT_AS in bytes; 0 means unlimited.
	Limit uint64
	// VMSize is the process's virtual size now (VmSize in
	// /proc/self/status), bytes; Threads its thread count there.
	VMSize  uint64
	Threads int
	// Glibc is true when glibc is mapped (a cgo build): every thread is
	// then made by pthread_create(3), whose stack is reserved at the
	// default size (StackBytes: RLIMIT_STACK, or 2 MiB when that is
	// unlimited, as glibc does on x86-64), and threads that malloc get
	// arenas of their own (up to ArenaMax, 64 MiB each on 64-bit).
	Glibc      bool
	StackBytes uint64
	ArenaMax   int
}

// GlibcArenaBytes is the address space one glibc malloc arena reserves on
// a 64-bit system (HEAP_MAX_SIZE, 2 × DEFAULT_MMAP_THRESHOLD_MAX).
const GlibcArenaBytes = 64 << 20

// glibcDefaultStack is glibc's thread stack when RLIMIT_STACK is
// unlimited (ARCH_STACK_DEFAULT_SIZE on x86-64).
const glibcDefaultStack = 2 << 20

// ReadAddressSpace reads RLIMIT_AS and RLIMIT_STACK (getrlimit(2)),
// VmSize and Threads (/proc/self/status, proc_pid_status(5)) and whether
// glibc is mapped (/proc/self/maps); ArenaMax is glibc's default, 8 arenas
// per online CPU, or MALLOC_ARENA_MAX / glibc.malloc.arena_max in
// GLIBC_TUNABLES when set. What cannot be read is left zero.
func ReadAddressSpace() AddressSpace {
	var a AddressSpace
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		a.Limit = rl.Cur
	}
	a.StackBytes = glibcDefaultStack
	if unix.Getrlimit(unix.RLIMIT_STACK, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		a.StackBytes = rl.Cur
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		a.VMSize, a.Threads = parseStatusVM(b)
	}
	if f, err := os.Open("/proc/self/maps"); err == nil {
		a.Glibc = mapsGlibc(f)
		f.Close()
	}
	a.ArenaMax = arenaMax(os.Getenv("MALLOC_ARENA_MAX"), os.Getenv("GLIBC_TUNABLES"), onlineCPUs())
	return a
}

// parseStatusVM reads VmSize (kB, returned in bytes) and Threads from a
// /proc/<pid>/status text.
func parseStatusVM(b []byte) (vm uint64, threads int) {
	for line := range bytes.Lines(b) {
		f := strings.Fields(string(line))
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmSize:":
			if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				vm = kb << 10
			}
		case "Threads:":
			threads, _ = strconv.Atoi(f[1])
		}
	}
	return vm, threads
}

// mapsGlibc reports whether a /proc/<pid>/maps listing maps glibc.
func mapsGlibc(f *os.File) bool {
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); strings.HasSuffix(l, "/libc.so.6") || strings.Contains(l, "/libc-2.") {
			return true
		}
	}
	return false
}

// arenaMax is glibc's malloc arena cap: the environment's setting, else
// 8 per CPU (64-bit).
func arenaMax(env, tunables string, cpus int) int {
	if n, err := strconv.Atoi(env); err == nil && n > 0 {
		return n
	}
	for _, t := range strings.FieldsFunc(tunables, func(r rune) bool { return r == ':' }) {
		if v, ok := strings.CutPrefix(t, "glibc.malloc.arena_max="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	return 8 * max(cpus, 1)
}

// onlineCPUs counts the online CPUs (/sys/devices/system/cpu/online), as
// glibc's sysconf(_SC_NPROCESSORS_ONLN) does; 1 when unreadable.
func onlineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 1
	}
	cpus, _ := parseCPUList(strings.TrimSpace(string(b)))
	return max(len(cpus), 1)
}
