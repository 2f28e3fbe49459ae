package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

const timerYAML = `
name: e2e-timer
duration: 300ms
warmup: 100ms
readers: [{name: rt, endpoints: [], cpu: 1, policy: fifo, priority: 80, period: 10ms}]
`

func counter(r results.Reader, name string) (uint64, bool) {
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
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
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

// TestPerCallCountersRefusedOrMarked runs a reader with per-call counters
// on this machine: where the PMU cannot give them (no PMU here: ENOENT)
// the run is refused with the reason and the --allow-degraded hint; with
// AllowDegraded it runs, the counters are left out of the results and the
// summary is marked degraded with each one's reason. Where a PMU gives
// them, both runs record per-call counts for every call.
func TestPerCallCountersRefusedOrMarked(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	const y = `
name: e2e-counters
duration: 300ms
warmup: 100ms
endpoints: [{name: s, count: 20}]
traffic: [{endpoint: s, interval: 20ms}]
readers: [{name: rt, endpoints: [s], cpu: 1, period: 10ms, counters: [instructions, branch-misses]}]
`
	spec, trials := load(t, y)
	sum, err := Run(context.Background(), spec, trials, Options{OutDir: t.TempDir(), NoWakeupLog: true})
	if err == nil {
		// A PMU here: every measured call counted in every class.
		rx := sum.Trials[0].Readers[0]
		if len(rx.PerCallCounters) != 2 || rx.PerCallCounters[0].All.Count != rx.Calls || rx.PerCallCounters[0].All.MeanCount <= 0 {
			t.Fatalf("per-call counters %+v for %d calls", rx.PerCallCounters, rx.Calls)
		}
		return
	}
	for _, want := range []string{"reader rt", "per-call counters", "instructions", "not supported", "--allow-degraded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	spec, trials = load(t, y)
	sum, err = Run(context.Background(), spec, trials, Options{OutDir: t.TempDir(), NoWakeupLog: true, AllowDegraded: true})
	if err != nil {
		t.Fatalf("with AllowDegraded: %v", err)
	}
	rx := sum.Trials[0].Readers[0]
	if len(rx.PerCallCounters) != 0 {
		t.Errorf("counters left out, but results hold %+v", rx.PerCallCounters)
	}
	if rx.Calls == 0 || rx.PerCall.All.Total != rx.Calls {
		t.Errorf("the reader measured %d calls (histogram %d); want the run to go on without the counters", rx.Calls, rx.PerCall.All.Total)
	}
	for _, ev := range []string{"instructions", "branch-misses"} {
		marked := false
		for _, d := range sum.DegradedReasons {
			marked = marked || strings.Contains(d, "per-call counter left out: "+ev+":")
		}
		if !marked || !sum.Degraded {
			t.Errorf("degraded %v, reasons %q: want %s marked as left out", sum.Degraded, sum.DegradedReasons, ev)
		}
	}
}

// TestPerCallCountersResults checks the results conversion: each counted
// event's per-call distribution in every call class, the events left out
// absent.
func TestPerCallCountersResults(t *testing.T) {
	s := record.NewSet(record.Layout{Width: 128, Origin: 64, Overflow: 8256})
	s.AddEvents([]string{"instructions", "cache-misses"})
	for i := range 10 {
		c := record.CallData
		if i%2 == 1 {
			c = record.CallEAGAIN
		}
		s.RecordEvent(0, record.CallAll, uint64(1000+100*i))
		s.RecordEvent(0, c, uint64(1000+100*i))
	}
	s.RecordEvent(0, record.CallAll, record.EventMax+5) // clamped
	got := perCallCounters(s, []string{"instructions"})
	if len(got) != 1 || got[0].Event != "instructions" {
		t.Fatalf("perCallCounters = %+v; want instructions only (cache-misses was not counted)", got)
	}
	pc := got[0]
	if pc.All.Count != 11 || pc.Data.Count != 5 || pc.EAGAIN.Count != 5 || pc.Warm.Count != 0 || pc.Clamped != 1 {
		t.Errorf("counts all %d data %d eagain %d warm %d clamped %d; want 11 5 5 0 1", pc.All.Count, pc.Data.Count, pc.EAGAIN.Count, pc.Warm.Count, pc.Clamped)
	}
	if pc.Data.MinCount != 1000 || pc.Data.MaxCount != 1800 || pc.EAGAIN.MinCount != 1100 || pc.EAGAIN.MaxCount != 1900 || pc.Data.HDR == "" {
		t.Errorf("data [%d, %d], eagain [%d, %d]; want [1000, 1800], [1100, 1900], with an HDR", pc.Data.MinCount, pc.Data.MaxCount, pc.EAGAIN.MinCount, pc.EAGAIN.MaxCount)
	}
	if m := pc.Data.MeanCount; m < 1399 || m > 1401 {
		t.Errorf("data mean %.1f, want 1400", m)
	}
}
