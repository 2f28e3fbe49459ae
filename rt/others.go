package rt

import (
	"fmt"
	"github.com/rtload/rtload/internal/procstat"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pfKthread is the kernel's PF_KTHREAD task flag (/proc/PID/stat field 9).
const pfKthread = 0x00200000

// maxOtherRT bounds OtherRTWarnings' list on a machine with many RT tasks.
const maxOtherRT = 16

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
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("other real-time threads: %w", err)
	}
	self := os.Getpid()
	var out []string
	more := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || kthread(pid) {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		tasks, err := os.ReadDir("/proc/" + e.Name() + "/task")
		if err != nil {
			continue
		}
		for _, te := range tasks {
			tid, err := strconv.Atoi(te.Name())
			if err != nil {
				continue
			}
			a, err := ThreadSched(tid)
			if err != nil || (!a.RealTime() && a.Policy != Policy(unix.SCHED_DEADLINE).String()) {
				continue
			}
			var on []int
			for _, c := range a.CPUs {
				if slices.Contains(cpus, c) {
					on = append(on, c)
				}
			}
			if len(on) == 0 {
				continue
			}
			if len(out) == maxOtherRT {
				more++
				continue
			}
			out = append(out, fmt.Sprintf("process %d (%s) thread %d (%s %d) may run on reader %s (mask %s)",
				pid, strings.TrimSpace(string(comm)), tid, a.Policy, a.Priority, cpuPhrase(on), formatCPUs(a.CPUs)))
		}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("… and %d more real-time threads of other processes", more))
	}
	return out, nil
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
