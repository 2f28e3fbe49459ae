package sysinfo

import (
	"errors"
	"fmt"
	"github.com/rtload/rtload/internal/procstat"
	"io"
	"os"
	"strconv"
	"strings"
)

// TaskStats are one thread's context switches, page faults, time on CPU
// and migrations as procfs keeps them: rtload's non-real-time writer reads
// a reader thread's at interval and trial boundaries instead of attaching
// task-bound perf events to it (those run perf_event_task_sched_in on every
// switch onto the reader, inside every wakeup latency: +4–6 µs at p50,
// bench/GAPS.md). The kernel counts all of these anyway; reading them costs
// the reader nothing. Counts are since the thread started.
type TaskStats struct {
	// VoluntarySwitches and InvoluntarySwitches are voluntary_ctxt_switches
	// and nonvoluntary_ctxt_switches of /proc/self/task/TID/status
	// (proc_pid_status(5)).
	VoluntarySwitches, InvoluntarySwitches uint64
	// MinorFaults and MajorFaults are fields 10 (minflt) and 12 (majflt)
	// of /proc/self/task/TID/stat (proc_pid_stat(5)).
	MinorFaults, MajorFaults uint64
	// RunNs, WaitNs and Timeslices are the three fields of
	// /proc/self/task/TID/schedstat: ns on the CPU, ns runnable but
	// waiting for it, and times run (Documentation/scheduler/sched-stats.rst).
	RunNs, WaitNs, Timeslices uint64
	// Migrations is se.nr_migrations of /proc/self/task/TID/sched, which
	// exists only with CONFIG_SCHED_DEBUG; HasMigrations says whether it
	// was there. (A reader pinned to one CPU never migrates after pinning.)
	Migrations    uint64
	HasMigrations bool
}

// maxTaskFile bounds each procfs file ReadTaskStats reads (the sched file,
// the largest, is about 3 KiB).
const maxTaskFile = 64 << 10

// ReadTaskStats reads thread tid's TaskStats from /proc/self/task/tid
// (status, stat, schedstat and, where present, sched). tid must be a
// thread of this process that has not exited. It allocates: call it off
// the real-time thread, or on it outside its measured loop.
func ReadTaskStats(tid int) (TaskStats, error) {
	return readTaskStats(fmt.Sprintf("/proc/self/task/%d/", tid))
}

func readTaskStats(dir string) (TaskStats, error) {
	var s TaskStats
	status, err := readBounded(dir + "status")
	if err != nil {
		return s, err
	}
	stat, err := readBounded(dir + "stat")
	if err != nil {
		return s, err
	}
	schedstat, err := readBounded(dir + "schedstat")
	if err != nil {
		return s, err
	}
	if s.VoluntarySwitches, s.InvoluntarySwitches, err = parseTaskStatus(status); err != nil {
		return s, fmt.Errorf("%sstatus: %w", dir, err)
	}
	if s.MinorFaults, s.MajorFaults, err = parseTaskStatFaults(stat); err != nil {
		return s, fmt.Errorf("%sstat: %w", dir, err)
	}
	if s.RunNs, s.WaitNs, s.Timeslices, err = parseSchedstat(schedstat); err != nil {
		return s, fmt.Errorf("%sschedstat: %w", dir, err)
	}
	if sched, err := readBounded(dir + "sched"); err == nil {
		s.Migrations, s.HasMigrations = parseSchedMigrations(sched)
	}
	return s, nil
}

// Sub returns s − o field by field (the counts between two reads of one
// thread); HasMigrations is s's and o's both.
func (s TaskStats) Sub(o TaskStats) TaskStats {
	return TaskStats{
		VoluntarySwitches: s.VoluntarySwitches - o.VoluntarySwitches, InvoluntarySwitches: s.InvoluntarySwitches - o.InvoluntarySwitches,
		MinorFaults: s.MinorFaults - o.MinorFaults, MajorFaults: s.MajorFaults - o.MajorFaults,
		RunNs: s.RunNs - o.RunNs, WaitNs: s.WaitNs - o.WaitNs, Timeslices: s.Timeslices - o.Timeslices,
		Migrations: s.Migrations - o.Migrations, HasMigrations: s.HasMigrations && o.HasMigrations,
	}
}

// readBounded reads at most maxTaskFile bytes of a procfs file.
func readBounded(path string) (string, error) {
	f, err := os.Open(path) // procfs: the kernel's own file
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTaskFile))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return string(b), nil
}

// parseTaskStatus reads voluntary_ctxt_switches and
// nonvoluntary_ctxt_switches from a /proc/…/status text.
func parseTaskStatus(s string) (vol, invol uint64, err error) {
	var haveVol, haveInvol bool
	for rest := s; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "voluntary_ctxt_switches":
			vol, err = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			haveVol = err == nil
		case "nonvoluntary_ctxt_switches":
			invol, err = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			haveInvol = err == nil
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", k, err)
		}
	}
	if !haveVol || !haveInvol {
		return 0, 0, errors.New("no voluntary_ctxt_switches and nonvoluntary_ctxt_switches lines")
	}
	return vol, invol, nil
}

// parseTaskStatFaults reads fields 10 (minflt) and 12 (majflt) of a
// /proc/…/stat line. Field 2, the command in parentheses, may hold spaces
// and parentheses itself: the fields after it are counted from its last ')'.
func parseTaskStatFaults(s string) (minflt, majflt uint64, err error) {
	var f [10]string // f[0] is field 3 (state)
	if _, err := procstat.Fields(s, f[:], 10); err != nil {
		return 0, 0, err
	}
	if minflt, err = strconv.ParseUint(f[10-3], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("minflt: %w", err)
	}
	if majflt, err = strconv.ParseUint(f[12-3], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("majflt: %w", err)
	}
	return minflt, majflt, nil
}

// parseSchedstat reads the three fields of /proc/…/schedstat.
func parseSchedstat(s string) (run, wait, slices uint64, err error) {
	var f [3]string
	n, rest := 0, s
	for n < len(f) {
		var w string
		if w, rest = nextFieldString(rest); w == "" {
			break
		}
		f[n] = w
		n++
	}
	if n < 3 {
		return 0, 0, 0, fmt.Errorf("%d fields, want 3", n)
	}
	var v [3]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i], 10, 64); err != nil {
			return 0, 0, 0, fmt.Errorf("field %d: %w", i+1, err)
		}
	}
	return v[0], v[1], v[2], nil
}

// parseSchedMigrations reads se.nr_migrations from a /proc/…/sched text.
func parseSchedMigrations(s string) (uint64, bool) {
	for rest := s; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != "se.nr_migrations" {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// nextFieldString is nextField for a string: the first field of s
// separated by ASCII white space ("" when none is left) and the rest.
func nextFieldString(s string) (f, rest string) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	return s[i:j], s[j:]
}
