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
	// One allocation of the final size: a soak's writer builds this every
	// interval (a literal of 7 then append(8th) reallocated, ~530 B).
	c := append(make([]results.Counter, 0, 8),
		results.Counter{Name: "context-switches", Value: s.VoluntarySwitches + s.InvoluntarySwitches},
		results.Counter{Name: "context-switches-voluntary", Value: s.VoluntarySwitches},
		results.Counter{Name: "context-switches-involuntary", Value: s.InvoluntarySwitches},
		results.Counter{Name: "page-faults", Value: s.MinorFaults + s.MajorFaults},
		results.Counter{Name: "major-faults", Value: s.MajorFaults},
		results.Counter{Name: "task-clock", Value: s.RunNs},
		results.Counter{Name: "runqueue-wait", Value: s.WaitNs},
	)
	if s.HasMigrations {
		c = append(c, results.Counter{Name: "cpu-migrations", Value: s.Migrations})
	}
	return c
}
