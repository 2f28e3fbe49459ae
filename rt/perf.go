package rt

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PerfEvent names one perf_event_open(2) counter.
type PerfEvent struct {
	Name   string
	Type   uint32
	Config uint64
}

// Counters perf_event_open can count on a thread. Software events work on
// any kernel with perf events; hardware ones need a PMU the CPU (or the
// VM) exposes. CounterEvents are the hardware events a reader can count
// per call (OpenCounters), by the names perf(1) gives them.
var (
	PerfCycles   = PerfEvent{"cycles", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES}
	PerfSoftware = []PerfEvent{
		{"context-switches", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CONTEXT_SWITCHES},
		{"cpu-migrations", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_MIGRATIONS},
		{"page-faults", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_PAGE_FAULTS},
		{"task-clock", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK},
	}
	PerfHardware  = []PerfEvent{PerfCycles, {"instructions", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS}}
	CounterEvents = []PerfEvent{
		{"instructions", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS},
		{"cache-references", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_REFERENCES},
		{"cache-misses", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_MISSES},
		{"branches", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
		{"branch-misses", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_MISSES},
	}
)

// PerfError is a perf_event_open(2) failure with its reason. It matches
// ErrNotSupported when the CPU, VM or kernel lacks the event, and
// ErrNoPrivilege when kernel.perf_event_paranoid (or a missing
// CAP_PERFMON) forbids it.
type PerfError struct {
	Event string
	Errno unix.Errno
	// Paranoid is kernel.perf_event_paranoid when it was read, else -1.
	Paranoid int
}

// Error is the reason alone; callers name the event ("cycles: …").
func (e *PerfError) Error() string { return PerfReason(e.Errno, e.Paranoid) }

// Is matches ErrNotSupported or ErrNoPrivilege by errno.
func (e *PerfError) Is(target error) bool {
	switch e.Errno {
	case unix.ENOENT, unix.EOPNOTSUPP, unix.ENODEV, unix.ENOSYS:
		return target == ErrNotSupported
	case unix.EACCES, unix.EPERM:
		return target == ErrNoPrivilege
	}
	return false
}

// Unwrap returns the errno.
func (e *PerfError) Unwrap() error { return e.Errno }

// ParanoidPath is where the kernel.perf_event_paranoid sysctl lives.
const ParanoidPath = "/proc/sys/kernel/perf_event_paranoid"

// PerfReason explains a perf_event_open errno and says what to change;
// paranoid is kernel.perf_event_paranoid (-1 if unknown). Source:
// perf_event_open(2), ERRORS; Documentation/admin-guide/perf-security.rst.
func PerfReason(errno unix.Errno, paranoid int) string {
	name := unix.ErrnoName(errno)
	if name == "" {
		name = errno.Error()
	}
	switch errno {
	case unix.ENOENT:
		return "not supported by this CPU/VM: perf_event_open returned " + name +
			" (no hardware PMU is exposed here, or it lacks this event: run on bare metal, or give the VM a virtual PMU, e.g. QEMU/KVM -cpu host,pmu=on)"
	case unix.EOPNOTSUPP, unix.ENODEV:
		return "not supported by this CPU/VM: perf_event_open returned " + name + " (the PMU cannot count this event as asked)"
	case unix.ENOSYS:
		return "not supported by this kernel (no perf events): perf_event_open returned " + name
	case unix.EACCES, unix.EPERM:
		s := "not permitted: perf_event_open returned " + name
		if paranoid >= 0 {
			s += fmt.Sprintf("; kernel.perf_event_paranoid is %d", paranoid)
		}
		return s + " (counting a thread's kernel time needs kernel.perf_event_paranoid ≤ 1, or CAP_PERFMON)" +
			"; set it with sysctl -w kernel.perf_event_paranoid=1 (" + ParanoidPath + "), or grant CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8)"
	case unix.ESRCH:
		return "the thread is gone: perf_event_open returned " + name
	}
	return "perf_event_open returned " + name
}

// PerfParanoid reads kernel.perf_event_paranoid, or returns -1.
func PerfParanoid() int {
	b, err := os.ReadFile(ParanoidPath)
	if err != nil {
		return -1
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return v
}

// OpenPerfEvent wraps perf_event_open(2): counter ev on thread tid (0 =
// the calling thread) on any CPU, user and kernel time, enabled at once,
// close-on-exec. Its fd reads (read(2), ReadPerfEvent) the count with the
// times enabled and running. Errors are *PerfError.
func OpenPerfEvent(ev PerfEvent, tid int) (int, error) {
	return perfEventOpen(ev, tid, -1, false)
}

// perfEventOpen wraps perf_event_open(2) for a counting event on thread
// tid (0 = the calling thread), any CPU, kernel and user counted
// (exclude_kernel 0: never user-only), exclude_hv, enabled at open,
// read_format TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING. group is the group
// leader's fd or -1; pinned keeps the event (a leader) on the PMU or puts
// it in error state, never multiplexed. Errors are *PerfError.
func perfEventOpen(ev PerfEvent, tid, group int, pinned bool) (int, error) {
	attr := unix.PerfEventAttr{Type: ev.Type, Config: ev.Config,
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING}
	attr.Size = uint32(unsafe.Sizeof(attr))
	attr.Bits = unix.PerfBitExcludeHv
	if pinned {
		attr.Bits |= unix.PerfBitPinned
	}
	fd, err := unix.PerfEventOpen(&attr, tid, -1, group, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.EINVAL
		}
		return -1, &PerfError{Event: ev.Name, Errno: errno, Paranoid: PerfParanoid()}
	}
	return fd, nil
}

// ReadPerfEvent reads an OpenPerfEvent fd: the count scaled to the time
// enabled when the counter was multiplexed (running < enabled).
func ReadPerfEvent(fd int) (uint64, error) {
	v, enabled, running, err := readPerfTimes(fd)
	if err != nil {
		return 0, err
	}
	if running > 0 && running < enabled {
		v = uint64(float64(v) * float64(enabled) / float64(running))
	}
	return v, nil
}

// errPerfEOF is read(2) of a perf event returning 0 bytes: a pinned event
// that could not be put on the PMU is in error state (perf_event_open(2),
// "pinned").
var errPerfEOF = errors.New("read perf event: end of file (pinned event in error state: it could not be put on the PMU)")

// readPerfTimes wraps read(2) of a counting perf event opened with
// TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING: the raw count, and the ns the
// event was enabled and running.
func readPerfTimes(fd int) (value, enabled, running uint64, err error) {
	var buf [3]uint64 // value, time enabled, time running
	n, _, errno := unix.Syscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), unsafe.Sizeof(buf))
	switch {
	case errno != 0:
		return 0, 0, 0, os.NewSyscallError("read perf event", errno)
	case n == 0:
		return 0, 0, 0, errPerfEOF
	case n != unsafe.Sizeof(buf):
		return 0, 0, 0, fmt.Errorf("read perf event: %d bytes, want %d", n, unsafe.Sizeof(buf))
	}
	return buf[0], buf[1], buf[2], nil
}

// RdpmcSysfs is the x86 core PMU's switch for user-space rdpmc: 0 off, 1
// while the process has a perf event mapped (the default), 2 always.
// Hybrid CPUs have one per core type (cpu_core, cpu_atom).
const RdpmcSysfs = "/sys/bus/event_source/devices/cpu/rdpmc"

// rdpmcSetting reads RdpmcSysfs (or a hybrid CPU's cpu_core/rdpmc) and
// describes it for a refusal: "/sys/…/rdpmc is 0", or why it cannot be read.
func rdpmcSetting() string {
	for _, p := range []string{RdpmcSysfs, "/sys/bus/event_source/devices/cpu_core/rdpmc"} {
		if b, err := os.ReadFile(p); err == nil {
			return p + " is " + strings.TrimSpace(string(b))
		}
	}
	return RdpmcSysfs + " is absent (no x86 core PMU driver)"
}

// PerfStatus is one per-thread counter's state at the end of a measured
// window, for the results: the trial is marked when Reason is not empty.
type PerfStatus struct {
	// Event is the counter's name ("cycles", "instructions").
	Event string
	// Enabled and Running are the kernel's time_enabled and time_running
	// (read(2) with PERF_FORMAT_TOTAL_TIME_*): Running < Enabled means the
	// counter was off the PMU (multiplexed, or in error state) some of
	// the time it should have counted.
	Enabled, Running time.Duration
	// NotLive counts reads that found the counter off the PMU (user page
	// index 0) and returned its last saved count: such a call counted 0.
	NotLive uint64
	// Torn counts reads that gave up after the user page's seqlock moved
	// on every one of maxSeqRetries tries.
	Torn uint64
	// Unbound counts reads of a cycles Clock whose Bind was never called
	// on its thread (each returned 0).
	Unbound uint64
	// Reason says why the counts cannot be trusted; "" when they can.
	Reason string
}

// statusReason says why a counter's per-call counts are not trustworthy,
// or "" when it counted every call: not running for part of the window,
// reads that found it off the PMU, torn or unbound reads, or a failed
// read(2).
func statusReason(s PerfStatus, readErr error) string {
	var why []string
	if readErr != nil {
		why = append(why, readErr.Error())
	} else if s.Running < s.Enabled {
		why = append(why, fmt.Sprintf("ran %s of the %s it was enabled (%.1f%%): multiplexed with other perf events or off the PMU; per-call counts miss the rest",
			s.Running, s.Enabled, 100*float64(s.Running)/float64(max(s.Enabled, 1))))
	}
	if s.NotLive > 0 {
		why = append(why, fmt.Sprintf("%d reads found it off the PMU (user page index 0) and counted nothing", s.NotLive))
	}
	if s.Torn > 0 {
		why = append(why, fmt.Sprintf("%d reads gave up after the user page's seqlock moved %d times", s.Torn, maxSeqRetries))
	}
	if s.Unbound > 0 {
		why = append(why, fmt.Sprintf("%d reads on a thread that never called Bind returned 0", s.Unbound))
	}
	if len(why) == 0 {
		return ""
	}
	return s.Event + ": " + strings.Join(why, "; ")
}

// perfCounter is one counting perf event on the calling thread with its
// user page (struct perf_event_mmap_page) mapped read-only, read with
// rdpmc through r.
type perfCounter struct {
	ev  PerfEvent
	fd  int
	mem []byte // the mapped user page
	r   pmcReader
}

// openPerfCounter opens ev on the calling thread (perfEventOpen), maps its
// user page and checks that rdpmc can read it (rdpmcRefusal). Nothing stays
// open on error. The thread must stay locked (runtime.LockOSThread): the
// counter counts it, and only it can read the counter.
func openPerfCounter(ev PerfEvent, group int, pinned bool) (*perfCounter, error) {
	fd, err := perfEventOpen(ev, 0, group, pinned)
	if err != nil {
		return nil, err
	}
	p := &perfCounter{ev: ev, fd: fd}
	mem, err := unix.Mmap(fd, 0, os.Getpagesize(), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		p.close()
		return nil, os.NewSyscallError("mmap perf event user page", err)
	}
	p.mem = mem
	p.r.pg = (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))
	if err := p.r.usable(ev); err != nil {
		// The page is rewritten when the event is next scheduled in: give
		// the scheduler one chance before refusing.
		unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		if err := p.r.usable(ev); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// status reads the counter's times with read(2) and explains them.
func (p *perfCounter) status() PerfStatus {
	s := PerfStatus{Event: p.ev.Name, NotLive: p.r.notLive, Torn: p.r.torn}
	_, enabled, running, err := readPerfTimes(p.fd)
	s.Enabled, s.Running = time.Duration(enabled), time.Duration(running)
	s.Reason = statusReason(s, err)
	return s
}

// close unmaps the page and closes the fd; idempotent. The reader must
// not be used after it (callers point their reader elsewhere first).
func (p *perfCounter) close() error {
	var errs []error
	if p.mem != nil {
		p.r.pg = nil
		if err := unix.Munmap(p.mem); err != nil {
			errs = append(errs, os.NewSyscallError("munmap perf event user page", err))
		}
		p.mem = nil
	}
	if p.fd >= 0 {
		if err := unix.Close(p.fd); err != nil {
			errs = append(errs, os.NewSyscallError("close perf event", err))
		}
		p.fd = -1
	}
	return errors.Join(errs...)
}
