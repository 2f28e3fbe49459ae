package results_test

import (
	"math"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// costsOf is a TickStats (with HDR) of n calls at v ticks and n at 2v.
func costsOf(n int, v uint64) results.TickStats {
	h := record.NewHDR(1 << 20)
	for range n {
		h.Record(v)
		h.Record(2 * v)
	}
	return results.TickStatsOf(h, true)
}

// TestProfilerCosts: the profiler's cost of a (variant, reader) merges
// its timed rounds and its profiled rounds apart; a variant without
// profiled trials has none.
func TestProfilerCosts(t *testing.T) {
	s := testutil.SeedSummary()
	for i := range s.Trials {
		s.Trials[i].Readers[0].PerCallTicks = costsOf(100, 1000)
	}
	for _, tr := range s.Trials {
		if tr.Variant != "recvmsg" {
			continue
		}
		tr.Profiled = true
		tr.Readers = []results.Reader{tr.Readers[0]}
		tr.Readers[0].PerCallTicks = costsOf(100, 1100)
		s.ProfiledTrials = append(s.ProfiledTrials, tr)
	}
	costs := results.ProfilerCosts(s)
	if len(costs) != 1 || costs[0].Variant != "recvmsg" || costs[0].Reader != "drain" {
		t.Fatalf("costs = %+v, want one for recvmsg/drain", costs)
	}
	c := costs[0]
	if c.Timed.Count != 400 || c.Profiled.Count != 400 || !c.TimedExact || !c.ProfiledExact {
		t.Errorf("counts %d timed, %d profiled (exact %v %v), want 400 each, exact", c.Timed.Count, c.Profiled.Count, c.TimedExact, c.ProfiledExact)
	}
	// p50 is the lower value (1000 vs 1100, within HDR's precision).
	if got := c.P50Change(); math.Abs(got-0.1) > 0.002 {
		t.Errorf("p50 change %.4f, want 0.1 (p50 %v timed, %v profiled)", got, c.Timed.P50Ticks, c.Profiled.P50Ticks)
	}
}
