package engine

import (
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/sysinfo"
)

// Where a reader's counters (results counters, counters_source) come from.
const (
	// CountersProcfs: read by the writer from /proc/self/task/TID (the default).
	CountersProcfs = "procfs"
	// CountersPerfEvent: task-bound perf events on the reader thread
	// (Options.TaskPerfCounters), which add to every wakeup latency.
	CountersPerfEvent = "perf_event (task-bound, opt-in: perf_event_task_sched_in runs inside every wakeup latency)"
)

// taskCounters names a reader thread's procfs counts as results counters:
// perf(1)'s names where perf has the same event (context-switches,
// cpu-migrations, page-faults, major-faults, task-clock in ns), so results
// read alike whichever the source; cpu-migrations only where the kernel
// shows se.nr_migrations.
func taskCounters(s sysinfo.TaskStats) []results.Counter {
	c := []results.Counter{
		{Name: "context-switches", Value: s.VoluntarySwitches + s.InvoluntarySwitches},
		{Name: "context-switches-voluntary", Value: s.VoluntarySwitches},
		{Name: "context-switches-involuntary", Value: s.InvoluntarySwitches},
		{Name: "page-faults", Value: s.MinorFaults + s.MajorFaults},
		{Name: "major-faults", Value: s.MajorFaults},
		{Name: "task-clock", Value: s.RunNs},
		{Name: "runqueue-wait", Value: s.WaitNs},
	}
	if s.HasMigrations {
		c = append(c, results.Counter{Name: "cpu-migrations", Value: s.Migrations})
	}
	return c
}
