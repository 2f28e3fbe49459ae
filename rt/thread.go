package rt

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/results"
)

// Policy is a Linux scheduling policy.
type Policy int

// Policies, values as in sched(7).
const (
	Other Policy = unix.SCHED_NORMAL
	FIFO  Policy = unix.SCHED_FIFO
	RR    Policy = unix.SCHED_RR
)

func (p Policy) String() string {
	switch p {
	case FIFO:
		return "SCHED_FIFO"
	case RR:
		return "SCHED_RR"
	case Other:
		return "SCHED_OTHER"
	case unix.SCHED_BATCH:
		return "SCHED_BATCH"
	case unix.SCHED_IDLE:
		return "SCHED_IDLE"
	case unix.SCHED_DEADLINE:
		return "SCHED_DEADLINE"
	}
	return fmt.Sprintf("policy(%d)", int(p))
}

// Sched is what a thread asks of the kernel. The zero value is an unpinned
// SCHED_OTHER thread at nice 0 with no memory locking, keeping the name
// the Go runtime gave it ("rtload", the executable's).
type Sched struct {
	// Name is the thread's name (prctl(2) PR_SET_NAME), shown by ps -L,
	// top -H, perf and ftrace and in /proc/<pid>/task/<tid>/comm. Longer
	// than CommLen bytes, it is shortened by Comm. Build it with
	// ReaderName, SenderName, NoiseName or WriterName. "" leaves the name.
	Name string
	// Exempt, when set, exempts the thread from that housekeeping
	// confinement: it is registered before its affinity is applied, so
	// the watcher never overrides it, and with no CPUs below it gets the
	// mask the process had before confinement instead of the one it may
	// have inherited. Readers, senders and noise threads set it; rtload's
	// own machinery (the writer) does not.
	Exempt *Housekeeping
	// CPUs to pin to (sched_setaffinity); empty = leave affinity alone.
	CPUs []int
	// Policy and Priority (1–99 for FIFO/RR, 0 for Other).
	Policy   Policy
	Priority int
	// Nice for SCHED_OTHER, -20–19.
	Nice int
	// Mlock calls mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT) (process-wide; see mlockFlags).
	Mlock bool
	// AllowDegraded: when a privilege is missing, carry on at SCHED_OTHER
	// (or without mlock / affinity) and say so in Applied.Degraded instead
	// of failing with a *PrivilegeError.
	AllowDegraded bool
	// TimerSlackNs sets PR_SET_TIMERSLACK for the thread; 0 leaves the
	// default (50 µs for SCHED_OTHER; RT threads have none).
	TimerSlackNs int
}

// Applied is the thread's state as read back from the kernel after Start:
// results.Applied, the record summary.json keeps. Its Name is the
// thread's name as the kernel keeps it (PR_GET_NAME): Comm(Sched.Name), or
// the inherited one when Sched.Name was ""; Degraded lists what was asked
// but not applied, and why.
type Applied = results.Applied

// Thread is a goroutine locked to its own OS thread with Sched applied.
type Thread struct {
	done chan struct{}
}

// Wait blocks until the thread's body returned.
func (t *Thread) Wait() { <-t.done }

// Start runs body on a new goroutine locked to a new OS thread, after
// applying s to that thread, reading it back and running setup there
// (nil: none): what needs the thread pinned and at its policy before the
// caller goes on (binding its cycles clock, opening its per-thread
// counters). It returns once both are done, with what the kernel applied:
// the one start-and-wait handshake of every thread rtload starts. body
// runs next, only when both succeeded. When s could not be applied the
// error is a *PrivilegeError (errors.Is ErrNoPrivilege) for EPERM, else
// the syscall error; when setup failed it is setup's, with the Applied.
// Either way the thread has exited and the *Thread is nil. The thread is
// never unlocked: its kernel state changed, so it exits with the
// goroutine.
func Start(s Sched, setup func(Applied) error, body func(Applied)) (*Thread, Applied, error) {
	t := &Thread{done: make(chan struct{})}
	type result struct {
		a   Applied
		err error
	}
	ready := make(chan result, 1)
	go func() {
		defer close(t.done)
		runtime.LockOSThread()
		// No UnlockOSThread: the thread's affinity/policy changed; it exits with this goroutine.
		a, err := apply(s)
		if err == nil && setup != nil {
			err = setup(a)
		}
		ready <- result{a, err}
		if err != nil {
			return
		}
		body(a)
	}()
	r := <-ready
	if r.err != nil {
		<-t.done
		return nil, r.a, r.err
	}
	return t, r.a, nil
}

func apply(s Sched) (Applied, error) {
	var a Applied
	a.TID = unix.Gettid()
	if s.Exempt != nil {
		if err := s.Exempt.exemptSelf(a.TID, len(s.CPUs) == 0); err != nil {
			return a, err
		}
	}
	if s.Name != "" {
		if err := setName(s.Name); err != nil {
			return a, err
		}
	}
	if s.TimerSlackNs > 0 {
		if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(s.TimerSlackNs), 0, 0, 0); err != nil {
			a.Degraded = append(a.Degraded, "timer slack: "+err.Error())
		}
	}
	if len(s.CPUs) > 0 {
		var set unix.CPUSet
		for _, c := range s.CPUs {
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			if !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) || !s.AllowDegraded {
				if errors.Is(err, unix.EPERM) {
					return a, &PrivilegeError{Op: fmt.Sprintf("sched_setaffinity(cpus %v)", s.CPUs), Cap: "CAP_SYS_NICE",
						Degraded: "run unpinned and mark results degraded", Err: err}
				}
				return a, fmt.Errorf("sched_setaffinity(cpus %v): %w (the CPU may be offline or outside this process's cpuset)", s.CPUs, os.NewSyscallError("sched_setaffinity", err))
			}
			a.Degraded = append(a.Degraded, fmt.Sprintf("affinity cpus %v not applied: %v", s.CPUs, err))
		}
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: uint32(s.Policy)}
	if s.Policy == FIFO || s.Policy == RR {
		attr.Priority = uint32(s.Priority)
	} else {
		attr.Nice = int32(s.Nice)
	}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		op := fmt.Sprintf("sched_setattr(%s %d)", s.Policy, s.Priority)
		if s.Policy == Other {
			op = fmt.Sprintf("sched_setattr(SCHED_OTHER nice %d)", s.Nice)
		}
		if !errors.Is(err, unix.EPERM) {
			return a, fmt.Errorf("%s: %w", op, os.NewSyscallError("sched_setattr", err))
		}
		if !s.AllowDegraded {
			return a, &PrivilegeError{Op: op, Cap: "CAP_SYS_NICE",
				Degraded: "run at SCHED_OTHER and mark results degraded", Err: err}
		}
		a.Degraded = append(a.Degraded, op+": not permitted (needs CAP_SYS_NICE): ran at SCHED_OTHER")
	}
	if s.Mlock {
		if err := unix.Mlockall(mlockFlags()); err != nil {
			if !s.AllowDegraded {
				if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM) {
					return a, &PrivilegeError{Op: "mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT)", Cap: "CAP_IPC_LOCK",
						Degraded: "run with memory unlocked (page faults may show as latency) and mark results degraded", Err: err}
				}
				return a, os.NewSyscallError("mlockall", err)
			}
			a.Degraded = append(a.Degraded, "mlockall: "+err.Error()+" (needs CAP_IPC_LOCK or RLIMIT_MEMLOCK): memory not locked")
		} else {
			a.Mlocked = true
		}
	}
	return readBack(a)
}

// setName sets the calling thread's name to Comm(name) with prctl(2)
// PR_SET_NAME.
func setName(name string) error {
	var buf [CommLen + 1]byte
	copy(buf[:CommLen], Comm(name))
	// A raw call with the pointer converted in its argument list, so the
	// buffer stays put for the call (unsafe.Pointer rule 4).
	if _, _, errno := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_NAME, uintptr(unsafe.Pointer(&buf[0])), 0); errno != 0 {
		return fmt.Errorf("thread name %q: %w", name, os.NewSyscallError("prctl PR_SET_NAME", errno))
	}
	return nil
}

// threadName returns the calling thread's name (prctl(2) PR_GET_NAME).
func threadName() (string, error) {
	var buf [CommLen + 1]byte
	if _, _, errno := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_GET_NAME, uintptr(unsafe.Pointer(&buf[0])), 0); errno != 0 {
		return "", os.NewSyscallError("prctl PR_GET_NAME", errno)
	}
	n := bytes.IndexByte(buf[:], 0)
	if n < 0 {
		n = CommLen
	}
	return string(buf[:n]), nil
}

// readBack fills a from what the kernel reports for the calling thread.
func readBack(a Applied) (Applied, error) {
	name, err := threadName()
	if err != nil {
		return a, err
	}
	a.Name = name
	got, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return a, os.NewSyscallError("sched_getattr", err)
	}
	a.Policy = Policy(got.Policy).String()
	a.Priority = int(got.Priority)
	a.Nice = int(got.Nice)
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return a, os.NewSyscallError("sched_getaffinity", err)
	}
	a.CPUs = cpuList(&set)
	if a.Mlocked {
		a.Mlocked = vmLocked()
	}
	return a, nil
}

func cpuList(set *unix.CPUSet) []int {
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// vmLocked reports whether /proc/self/status shows locked memory (VmLck > 0).
func vmLocked() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmLck:") {
			f := strings.Fields(l)
			return len(f) >= 2 && f[1] != "0"
		}
	}
	return false
}

// Munlockall undoes Mlock (process-wide). Call after every RT thread ended.
func Munlockall() error { return os.NewSyscallError("munlockall", unix.Munlockall()) }

// ThreadSched reads the scheduling policy, priority and affinity of any
// thread by TID from the kernel (for tests and reports); Name is left "".
func ThreadSched(tid int) (results.Thread, error) {
	a := results.Thread{TID: tid}
	got, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return a, os.NewSyscallError("sched_getattr", err)
	}
	a.Policy, a.Priority, a.Nice = Policy(got.Policy).String(), int(got.Priority), int(got.Nice)
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		return a, os.NewSyscallError("sched_getaffinity", err)
	}
	a.CPUs = cpuList(&set)
	return a, nil
}

// mlockFlags is MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT unless RTLOAD_MLOCK
// says otherwise (for experiments). MCL_ONFAULT (Linux 4.4) locks pages as
// they are touched instead of populating every mapping up front: the Go
// runtime reserves large address ranges, and populating each new heap arena
// under the mm lock (plain MCL_FUTURE) stalled every thread of the process,
// the real-time reader included, for hundreds of milliseconds in our tests.
func mlockFlags() int {
	switch os.Getenv("RTLOAD_MLOCK") {
	case "future":
		return unix.MCL_CURRENT | unix.MCL_FUTURE
	case "current":
		return unix.MCL_CURRENT
	}
	return unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT
}
