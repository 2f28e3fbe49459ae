package rt

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/results"
)

// ThreadInfo is one thread of this process as the kernel holds it, for
// summary.json's thread lists (read at the start and end of each trial):
// results.Thread. Name is its comm (/proc/self/task/<tid>/comm, at most
// CommLen bytes).
type ThreadInfo = results.Thread

// Threads lists every thread of this process, by TID ascending: its name
// from /proc/self/task/<tid>/comm and its policy, priority, nice and CPU
// mask from sched_getattr(2) and sched_getaffinity(2). A thread that exits
// while it is read is left out. Errors: /proc/self/task unreadable, or a
// syscall failing with anything but ESRCH.
func Threads() ([]ThreadInfo, error) {
	tids, err := listTasks()
	if err != nil {
		return nil, fmt.Errorf("threads: %w", err)
	}
	out := make([]ThreadInfo, 0, len(tids))
	for _, tid := range tids {
		ti, err := threadInfo(tid)
		if errors.Is(err, unix.ESRCH) || errors.Is(err, os.ErrNotExist) {
			continue // exited since the listing
		}
		if err != nil {
			return out, fmt.Errorf("thread %d: %w", tid, err)
		}
		out = append(out, ti)
	}
	return out, nil
}

func threadInfo(tid int) (ThreadInfo, error) {
	ti := ThreadInfo{TID: tid}
	b, err := os.ReadFile(taskDir + "/" + strconv.Itoa(tid) + "/comm")
	if err != nil {
		return ti, err
	}
	ti.Name = strings.TrimSuffix(string(b), "\n")
	a, err := ThreadSched(tid)
	if err != nil {
		return ti, err
	}
	a.Name = ti.Name
	return a, nil
}

// ReaderCPUWarnings returns one warning for each thread of threads that is
// not one of readers (by TID) yet may run on a CPU a reader is pinned to
// (readers' Applied.CPUs), e.g. "thread rtload (tid 1234, SCHED_OTHER)
// may run on reader CPU 1 (mask 0-1)". Noise placed on a reader's CPU on
// purpose is listed too: its name (NoisePrefix) tells it apart. Nil when
// no thread can.
func ReaderCPUWarnings(threads []ThreadInfo, readers []Applied) []string {
	var readerCPUs []int
	isReader := map[int]bool{}
	for _, r := range readers {
		isReader[r.TID] = true
		for _, c := range r.CPUs {
			if !slices.Contains(readerCPUs, c) {
				readerCPUs = append(readerCPUs, c)
			}
		}
	}
	slices.Sort(readerCPUs)
	var warnings []string
	for _, t := range threads {
		if isReader[t.TID] {
			continue
		}
		var on []int
		for _, c := range t.CPUs {
			if slices.Contains(readerCPUs, c) {
				on = append(on, c)
			}
		}
		if len(on) == 0 {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("thread %s (tid %d, %s) may run on reader %s (mask %s)",
			t.Name, t.TID, t.Policy, cpuPhrase(on), formatCPUs(t.CPUs)))
	}
	return warnings
}

// cpuPhrase is "CPU 1" or "CPUs 0-1" for a warning.
func cpuPhrase(on []int) string {
	if len(on) > 1 {
		return "CPUs " + formatCPUs(on)
	}
	return "CPU " + formatCPUs(on)
}
