package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/rtload/rtload/report"
)

const timerYAML = `
name: e2e-timer
duration: 300ms
warmup: 100ms
readers: [{name: rt, endpoints: [], cpu: 1, policy: fifo, priority: 80, period: 10ms}]
`

func counter(r report.Reader, name string) (uint64, bool) {
	for _, c := range r.Counters {
		if c.Name == name {
			return c.Value, true
		}
	}
	return 0, false
}

// TestReaderCountersSource checks where a reader's thread counters come
// from: by default procfs, read by the writer, with nothing attached to the
// thread; with TaskPerfCounters the task-bound perf events, marked so in
// the results. Either way every wakeup is one voluntary context switch of
// the reader (it sleeps in clock_nanosleep each tick).
func TestReaderCountersSource(t *testing.T) {
	requireRT(t)
	for _, perf := range []bool{false, true} {
		spec, trials := load(t, timerYAML)
		sum, err := Run(context.Background(), spec, trials, Options{OutDir: t.TempDir(), NoWakeupLog: true, TaskPerfCounters: perf})
		if err != nil {
			t.Fatal(err)
		}
		rx := sum.Trials[0].Readers[0]
		cs, ok := counter(rx, "context-switches")
		if !ok || cs < rx.Wakeups {
			t.Errorf("perf %v: context-switches %d (present %v) for %d wakeups; want ≥ wakeups (counters %v, skipped %v)", perf, cs, ok, rx.Wakeups, rx.Counters, rx.CountersSkipped)
		}
		if tc, ok := counter(rx, "task-clock"); !ok || tc == 0 {
			t.Errorf("perf %v: task-clock %d ns (present %v); want > 0", perf, tc, ok)
		}
		if !perf {
			if rx.CountersSource != CountersProcfs {
				t.Errorf("counters_source %q, want %q", rx.CountersSource, CountersProcfs)
			}
			vol, _ := counter(rx, "context-switches-voluntary")
			invol, _ := counter(rx, "context-switches-involuntary")
			if vol+invol != cs || vol < rx.Wakeups {
				t.Errorf("voluntary %d + involuntary %d vs context-switches %d, wakeups %d", vol, invol, cs, rx.Wakeups)
			}
			continue
		}
		if !strings.HasPrefix(rx.CountersSource, "perf_event") {
			t.Errorf("counters_source %q with TaskPerfCounters, want perf_event…", rx.CountersSource)
		}
	}
}
