package probe_test

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// TestDrainOneSamplePerCall checks the split of the measured path from
// what is derived from it: the calls of a Step only store their samples
// (nothing reaches the Set or the counts), and the flush after the tick's
// last call derives every histogram and count from them.
func TestDrainOneSamplePerCall(t *testing.T) {
	rx := &fakeRx{q: map[int][][]byte{1: {payload(0), payload(1)}}}
	d := newDrain(t, []int{1, 2, 3}, rx)
	d.Measure = true
	d.StepCalls() // socket 1: data, data, warm EAGAIN; 2 and 3: cold EAGAIN
	if d.Pending() != 5 {
		t.Fatalf("%d samples stored for 5 calls", d.Pending())
	}
	if n := lin(d, record.CallAll).Total(); n != 0 || d.Counts().Calls != 0 || d.Set().HDR(record.OneWayDelay).Count() != 0 {
		t.Fatalf("before the flush: All %d, Calls %d, delays %d; want nothing derived yet", n, d.Counts().Calls, d.Set().HDR(record.OneWayDelay).Count())
	}
	d.Flush()
	want := map[record.Class]uint64{record.CallAll: 5, record.CallData: 2, record.CallEAGAIN: 3, record.CallWarm: 1, record.CallCold: 2,
		record.CallFirst: probe.FirstCalls, record.CallRest: 5 - probe.FirstCalls}
	for c, n := range want {
		if got := lin(d, c).Total(); got != n {
			t.Errorf("%s: %d calls, want %d", c, got, n)
		}
	}
	if c := d.Counts(); c.Calls != 5 || c.Data != 2 || c.EAGAIN != 3 || d.Pending() != 0 {
		t.Errorf("Counts %+v, %d pending; want 5 calls, 2 data, 3 EAGAIN, none pending", c, d.Pending())
	}
	if n := d.Set().HDR(record.OneWayDelay).Count(); n != 2 {
		t.Errorf("one-way delays %d, want 2", n)
	}
}

// TestDrainClockSources runs the drain with each clock source: the loop
// chosen reads that clock at the call site. A fake cycles clock that
// advances 100 per read proves the cycles loop reads it (every call costs
// exactly 100 ticks), and each source's Step allocates nothing.
func TestDrainClockSources(t *testing.T) {
	var cycles uint64
	fake := rt.FakeCyclesClock(func() uint64 { cycles += 100; return cycles })
	mono, err := rt.NewClock(rt.ClockMonotonic)
	if err != nil {
		t.Fatal(err)
	}
	clocks := []*rt.Clock{fake, mono}
	if c := clock(t); c.Source() == rt.SourceTSC || c.Source() == rt.SourceTSCFenced {
		clocks = append(clocks, c)
	}
	// The fenced read (LFENCE;RDTSC;LFENCE, for VMs whose CPUID hides
	// RDTSCP) runs wherever the TSC is invariant, RDTSCP or not.
	if c, err := rt.FencedTSCClock(); err == nil {
		clocks = append(clocks, c)
	}
	for _, clk := range clocks {
		name := clk.Info().Kind
		if clk.Source() == rt.SourceTSCFenced {
			name += "-fenced"
		}
		t.Run(name, func(t *testing.T) {
			rx := &fakeRx{q: map[int][][]byte{}}
			d := probe.NewDrain(probe.DrainConfig{FDs: []int{1, 2}, Receiver: rx, Clock: clk, Set: record.NewSet(seedLayout)})
			d.Measure = true
			if a := testing.AllocsPerRun(100, d.Step); a != 0 {
				t.Errorf("Step allocs %v, want 0", a)
			}
			all := d.Set().HDR(record.CallAll)
			if all.Count() != 2*101 {
				t.Fatalf("%d calls recorded, want %d", all.Count(), 2*101)
			}
			if clk == fake && (all.Min() != 100 || all.Max() != 100) {
				t.Errorf("fake cycles: calls cost [%d, %d] ticks, want exactly 100 (one read before, one after)", all.Min(), all.Max())
			}
			if clk != fake && all.Max() > 1e9 {
				t.Errorf("%s: a call of %d ticks", clk.Info().Kind, all.Max())
			}
		})
	}
}

// TestDrainFlushWhenFull drains more calls and messages in one Step than
// the sample buffer holds: the buffer is flushed between calls, and
// nothing is lost.
func TestDrainFlushWhenFull(t *testing.T) {
	const msgs = probe.SampleBuffer + 300
	rx := &fakeRx{q: map[int][][]byte{}}
	for i := range msgs {
		rx.q[1] = append(rx.q[1], payload(uint64(i)))
	}
	d := newDrain(t, []int{1}, rx)
	d.Measure = true
	d.Step()
	if c := d.Counts(); c.Calls != msgs+1 || c.Data != msgs || c.Messages != msgs || c.Lost != 0 {
		t.Errorf("Counts %+v; want %d calls, %d data and messages, none lost", c, msgs+1, msgs)
	}
	if n := lin(d, record.CallData).Total(); n != msgs {
		t.Errorf("Data histogram %d, want %d", n, msgs)
	}
	if n := d.Set().HDR(record.OneWayDelay).Count(); n != msgs {
		t.Errorf("one-way delays %d, want %d", n, msgs)
	}
	if n := lin(d, record.CallFirst).Total(); n != probe.FirstCalls {
		t.Errorf("First %d, want %d: positions survive a flush mid-tick", n, probe.FirstCalls)
	}
}

// countingRx wraps fakeRx and plays a PMU: each data call adds 5000
// "instructions" and 3 "cache-misses", each EAGAIN 800 and 1, and a cold
// EAGAIN (nothing received on that socket this tick) 200 more
// instructions. The fake counters read those totals, so the drain's
// before/after reads bracket exactly one call's counts.
type countingRx struct {
	fakeRx
	gotData bool
	ev      [2]uint64
}

func (c *countingRx) Recv(fd int) (int, int, unix.Errno) {
	n, b, e := c.fakeRx.Recv(fd)
	switch {
	case e == 0:
		c.ev[0] += 5000
		c.ev[1] += 3
		c.gotData = true
	case !c.gotData:
		c.ev[0] += 1000
		c.ev[1]++
	default:
		c.ev[0] += 800
		c.ev[1]++
		c.gotData = false
	}
	return n, b, e
}

// TestDrainPerCallCounters checks the per-call counter recording with a
// fake counter source (this machine has no PMU): each call's counts land
// in its classes, events are mapped by name, an event left out stays
// empty, and Step with counters allocates nothing.
func TestDrainPerCallCounters(t *testing.T) {
	rx := &countingRx{fakeRx: fakeRx{q: map[int][][]byte{}}}
	// Open gave two of the three configured events (say branch-misses was
	// left out with --allow-degraded), in configuration order.
	ctr := rt.FakeCounters([]string{"instructions", "cache-misses"}, func(e int) uint64 { return rx.ev[e] })
	set := record.NewSet(seedLayout)
	set.AddEvents([]string{"instructions", "branch-misses", "cache-misses"})
	d := probe.NewDrain(probe.DrainConfig{FDs: []int{1, 2}, Receiver: rx, Clock: clock(t), Set: set, Counters: ctr})
	if err := d.OpenCounters(); err != nil {
		t.Fatal(err)
	}
	if got := d.CountedEvents(); len(got) != 2 || got[0] != "instructions" || got[1] != "cache-misses" {
		t.Fatalf("CountedEvents %v", got)
	}
	d.Measure = true
	const steps = 50
	for i := range steps {
		rx.q[1] = append(rx.q[1], payload(uint64(i))) // socket 1: data then warm EAGAIN; socket 2: cold EAGAIN
		d.Step()
	}
	for _, c := range []struct {
		event       int
		class       record.Class
		count       uint64
		min, max    uint64
		whatItMeans string
	}{
		{0, record.CallAll, 3 * steps, 800, 5000, "every call"},
		{0, record.CallData, steps, 5000, 5000, "data calls: 5000 instructions each"},
		{0, record.CallEAGAIN, 2 * steps, 800, 1000, "EAGAIN calls: warm 800, cold 1000"},
		{0, record.CallWarm, steps, 800, 800, "warm EAGAIN"},
		{0, record.CallCold, steps, 1000, 1000, "cold EAGAIN"},
		{0, record.CallFirst, 3 * steps, 800, 5000, "the 3 calls of each tick are its first"},
		{0, record.CallRest, 0, 0, 0, "no fourth call"},
		{2, record.CallData, steps, 3, 3, "cache-misses of a data call"},
		{2, record.CallEAGAIN, 2 * steps, 1, 1, "cache-misses of an EAGAIN"},
		{1, record.CallAll, 0, 0, 0, "branch-misses was left out: empty"},
	} {
		h := set.EventHDR(c.event, c.class)
		if uint64(h.Count()) != c.count || h.Min() != c.min || h.Max() != c.max {
			t.Errorf("%s, %s (%s): %d calls in [%d, %d]; want %d in [%d, %d]", set.Events()[c.event], c.class, c.whatItMeans,
				h.Count(), h.Min(), h.Max(), c.count, c.min, c.max)
		}
	}
	if a := testing.AllocsPerRun(100, d.Step); a != 0 {
		t.Errorf("Step with counters allocs %v, want 0", a)
	}
}

// TestDrainCountersNotInSet refuses counters whose events the set lacks.
func TestDrainCountersNotInSet(t *testing.T) {
	ctr := rt.FakeCounters([]string{"instructions"}, func(int) uint64 { return 0 })
	d := probe.NewDrain(probe.DrainConfig{FDs: []int{1}, Receiver: &fakeRx{}, Clock: clock(t), Set: record.NewSet(seedLayout), Counters: ctr})
	if err := d.OpenCounters(); err == nil || !strings.Contains(err.Error(), "instructions") {
		t.Errorf("OpenCounters = %v; want an error naming instructions", err)
	}
	if d.CountedEvents() != nil {
		t.Errorf("CountedEvents %v after a refusal", d.CountedEvents())
	}
}
