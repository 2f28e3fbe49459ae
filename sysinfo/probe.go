package sysinfo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// uname wraps uname(2): nodename, release, version, machine; "" on error.
func uname() (host, release, version, machine string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", "", "", ""
	}
	return unix.ByteSliceToString(u.Nodename[:]), unix.ByteSliceToString(u.Release[:]),
		unix.ByteSliceToString(u.Version[:]), unix.ByteSliceToString(u.Machine[:])
}

// allowedCPUs wraps sched_getaffinity(2) for this thread (all threads of a
// Go process share the mask unless something re-pinned one); nil on error.
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	cpus := []int{}
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

func uids() (uid, euid int) { return unix.Getuid(), unix.Geteuid() }

// rlimits wraps getrlimit(2) for RLIMIT_RTPRIO and RLIMIT_MEMLOCK (soft
// limits); 0 on error.
func rlimits() (rtprio, memlock uint64) {
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_RTPRIO, &r) == nil {
		rtprio = r.Cur
	}
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &r) == nil {
		memlock = r.Cur
	}
	return rtprio, memlock
}

// probeCounters checks each clock and counter rtload can time with.
func probeCounters(tscFlags []string, paranoid int) []Counter {
	return []Counter{
		probePerf("perf cycles", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES, paranoid),
		probePerf("perf task-clock", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK, paranoid),
		tscCounter(tscFlags, runtime.GOARCH),
		probeMonotonic(),
	}
}

// probePerf opens a counting perf event on this thread (pid 0, cpu -1,
// user and kernel counted, enabled at open) with perf_event_open(2), makes
// 200 getppid(2) calls, reads the count and closes the fd. It works when
// the open succeeds and the count moved: some VMs accept
// PERF_TYPE_HARDWARE and count nothing. When perf_event_paranoid refuses,
// the note says whether an exclude_kernel event would open.
func probePerf(name string, typ uint32, config uint64, paranoid int) Counter {
	c := Counter{Name: name}
	attr := unix.PerfEventAttr{Type: typ, Config: config}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		c.Note = perfErrNote(err, paranoid)
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			// Say whether user-space-only counting (what paranoid 2 allows) would do.
			attr.Bits = unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
			if ufd, uerr := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC); uerr == nil {
				unix.Close(ufd)
				c.Note += "; user-space-only counting opens"
			}
		}
		return c
	}
	defer unix.Close(fd)
	for range 200 { // work the compiler cannot drop, in user and kernel mode
		unix.Getppid()
	}
	var buf [8]byte
	n, err := unix.Read(fd, buf[:])
	switch {
	case err != nil:
		c.Note = "read: " + errnoText(err)
	case n != len(buf):
		c.Note = fmt.Sprintf("read: %d bytes, want 8", n)
	case binary.NativeEndian.Uint64(buf[:]) == 0:
		c.Note = "opened but counted 0 (counter not backed by hardware in this VM?)"
	default:
		c.Works, c.Note = true, "ok"
	}
	return c
}

// perfErrNote renders a perf_event_open(2) failure with its errno name and
// the likely cause, e.g. "perf_event_open: no such file or directory
// (ENOENT): not supported by this CPU/VM".
func perfErrNote(err error, paranoid int) string {
	s := "perf_event_open: " + errnoText(err)
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return s
	}
	switch errno {
	case unix.ENOENT, unix.EOPNOTSUPP:
		s += ": not supported by this CPU/VM"
	case unix.ENODEV:
		s += ": no such PMU on this CPU/VM"
	case unix.EACCES, unix.EPERM:
		s += fmt.Sprintf(": perf_event_paranoid=%d; counting the kernel too needs paranoid ≤ 1 or CAP_PERFMON (or seccomp blocks perf_event_open)", paranoid)
	case unix.ENOSYS:
		s += ": no perf events (CONFIG_PERF_EVENTS off, or seccomp)"
	case unix.EINVAL:
		s += ": attribute rejected by this kernel"
	}
	return s
}

// errnoText is "no such file or directory (ENOENT)" for an errno, else
// err.Error().
func errnoText(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		if n := unix.ErrnoName(errno); n != "" {
			return fmt.Sprintf("%s (%s)", errno.Error(), n)
		}
	}
	return err.Error()
}

// tscCounter reports the TSC from cpuinfo flags: rt reads it with rdtscp,
// so it works when rdtscp is present; the note says whether it is
// invariant (constant_tsc and nonstop_tsc: same rate in every P- and
// C-state, so ticks convert to time).
func tscCounter(flags []string, goarch string) Counter {
	c := Counter{Name: "tsc"}
	if goarch != "amd64" && goarch != "386" {
		c.Note = "no TSC on " + goarch
		return c
	}
	if !slices.Contains(flags, "rdtscp") {
		c.Note = "no rdtscp flag"
		return c
	}
	c.Works = true
	c.Note = "not invariant"
	if slices.Contains(flags, "constant_tsc") && slices.Contains(flags, "nonstop_tsc") {
		c.Note = "invariant"
	}
	return c
}

// probeMonotonic calls clock_gettime(2) and clock_getres(2) on
// CLOCK_MONOTONIC; the note gives the resolution.
func probeMonotonic() Counter {
	c := Counter{Name: "clock_monotonic"}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		c.Note = "clock_gettime: " + errnoText(err)
		return c
	}
	c.Works = true
	if err := unix.ClockGetres(unix.CLOCK_MONOTONIC, &ts); err != nil {
		c.Note = "clock_getres: " + errnoText(err)
		return c
	}
	res := time.Duration(ts.Nano())
	c.Note = "resolution " + res.String()
	if res > time.Microsecond {
		c.Note += " (no high-resolution timers: sleeps round to ticks)"
	}
	return c
}
