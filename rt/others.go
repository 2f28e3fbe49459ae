package rt

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/procstat"
	"github.com/rtload/rtload/results"
)

// pfKthread is the kernel's PF_KTHREAD task flag (/proc/PID/stat field 9).
const pfKthread = 0x00200000

// maxOtherRT bounds OtherRTWarnings' list on a machine with many RT tasks.
const maxOtherRT = 16

// ForeignThread is a real-time thread of another process:
// results.ForeignThread.
type ForeignThread = results.ForeignThread

// maxForeign bounds ForeignThreads' list on a machine with many RT tasks.
const maxForeign = 64

// ForeignThreads lists the real-time threads (SCHED_FIFO, SCHED_RR,
// SCHED_DEADLINE) of other user-space processes that may run on one of
// cpus (all CPUs when cpus is empty), each with its process's pid and
// comm, its own tid, comm, policy, priority and CPU mask, and Rtload set
// for every thread of a process that runs rtload readers (a real-time
// thread named ReaderPrefix…): another rtload run, a cyclictest, any RT
// workload. Kernel threads (PF_KTHREAD: migration/N, ksoftirqd/N, the
// irq threads) are left out: they are the kernel under test. At most
// maxForeign (64) are listed (more reports how many more there were).
// A process's threads cost one directory read and sched_getattr(2) each;
// only the real-time ones are read further (affinity, names, the kernel
// thread flag). Processes that exit while read are skipped; /proc
// unreadable is an error.
func ForeignThreads(cpus []int) (list []ForeignThread, more int, err error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, 0, fmt.Errorf("other real-time threads: %w", err)
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		tasks, err := os.ReadDir("/proc/" + e.Name() + "/task")
		if err != nil {
			continue
		}
		var found []ForeignThread
		rtload, checked := false, false
		for _, te := range tasks {
			tid, err := strconv.Atoi(te.Name())
			if err != nil {
				continue
			}
			attr, err := unix.SchedGetAttr(tid, 0)
			if err != nil {
				continue
			}
			p := Policy(attr.Policy)
			if p != FIFO && p != RR && p != Policy(unix.SCHED_DEADLINE) {
				continue
			}
			if !checked {
				if checked = true; kthread(pid) {
					break // a kernel thread: every task of it is
				}
			}
			a, err := ThreadSched(tid)
			if err != nil {
				continue
			}
			if len(cpus) > 0 && !slices.ContainsFunc(a.CPUs, func(c int) bool { return slices.Contains(cpus, c) }) {
				continue
			}
			name, _ := os.ReadFile("/proc/" + e.Name() + "/task/" + te.Name() + "/comm")
			a.Name = strings.TrimSpace(string(name))
			rtload = rtload || strings.HasPrefix(a.Name, ReaderPrefix)
			found = append(found, ForeignThread{PID: pid, Thread: a})
		}
		if len(found) == 0 {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		for _, f := range found {
			if len(list) == maxForeign {
				more++
				continue
			}
			f.Comm, f.Rtload = strings.TrimSpace(string(comm)), rtload
			list = append(list, f)
		}
	}
	return list, more, nil
}

// OtherRTWarnings returns one warning for each real-time thread
// (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE) of another user-space process
// that may run on one of cpus, e.g. "process 4321 (cyclictest) thread 4322
// (SCHED_FIFO 95) may run on reader CPU 1 (mask 1)": another rtload run, a
// cyclictest, any RT workload sharing the readers' CPUs takes their time
// at its priority. Kernel threads (PF_KTHREAD: migration/N, ksoftirqd/N,
// the irq threads) are left out: they are the kernel under test. At most
// 16 are listed, the last line saying how many more; nil when none.
// Processes that exit while read are skipped; /proc unreadable is an error.
func OtherRTWarnings(cpus []int) ([]string, error) {
	list, more, err := ForeignThreads(cpus)
	if err != nil {
		return nil, err
	}
	return OtherRTWarningsOf(list, more, cpus), nil
}

// OtherRTWarningsOf is OtherRTWarnings from a ForeignThreads listing of
// cpus (list, and more beyond it).
func OtherRTWarningsOf(list []ForeignThread, more int, cpus []int) []string {
	var out []string
	for _, f := range list {
		if len(out) == maxOtherRT {
			more++
			continue
		}
		var on []int
		for _, c := range f.CPUs {
			if slices.Contains(cpus, c) {
				on = append(on, c)
			}
		}
		out = append(out, fmt.Sprintf("process %d (%s) thread %d (%s %d) may run on reader %s (mask %s)",
			f.PID, f.Comm, f.TID, f.Policy, f.Priority, cpuPhrase(on), formatCPUs(f.CPUs)))
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("… and %d more real-time threads of other processes", more))
	}
	return out
}

// kthread reports whether pid is a kernel thread (PF_KTHREAD in its stat
// flags); a pid that cannot be read counts as one (it is skipped).
func kthread(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	var f [7]string // f[6] is field 9, flags
	if _, err := procstat.Fields(string(b), f[:], 7); err != nil {
		return true
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	return err != nil || flags&pfKthread != 0
}
