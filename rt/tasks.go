package rt

import (
	"fmt"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/cpulist"
)

// maxTasks bounds how many threads of this process are listed: far more
// than rtload runs (readers, senders, noise threads and the Go runtime's
// own), so a runaway spawner cannot make a pass unbounded.
const maxTasks = 1 << 14

// taskDir is where the kernel lists this process's threads (proc(5)).
const taskDir = "/proc/self/task"

// listTasks returns the TIDs of this process's threads, ascending, from
// /proc/self/task (at most maxTasks).
func listTasks() ([]int, error) {
	d, err := os.Open(taskDir) // procfs: the kernel's own directory
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var tids []int
	for len(tids) < maxTasks {
		names, err := d.Readdirnames(256)
		for _, n := range names {
			if tid, err := strconv.Atoi(n); err == nil && tid > 0 {
				tids = append(tids, tid)
			}
		}
		if err != nil || len(names) == 0 {
			break // io.EOF ends the listing
		}
	}
	if len(tids) > maxTasks {
		tids = tids[:maxTasks]
	}
	slices.Sort(tids)
	return tids, nil
}

// cpuSet is the set of cpus; an error names the first one out of range.
func cpuSet(cpus []int) (unix.CPUSet, error) {
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= len(set)*64 {
			return set, fmt.Errorf("cpu %d out of range (0–%d)", c, len(set)*64-1)
		}
		set.Set(c)
	}
	return set, nil
}

// union returns a with every CPU of b added.
func union(a, b unix.CPUSet) unix.CPUSet {
	for i := range a {
		a[i] |= b[i]
	}
	return a
}

// formatCPUs renders ascending CPUs as a kernel CPU list ("0-2,5"), as in
// /proc/<pid>/status Cpus_allowed_list; "" for none.
func formatCPUs(cpus []int) string { return cpulist.Format(cpus) }
