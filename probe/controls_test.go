package probe_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// controlDrain is a drain of no sockets with k controls per tick, timed
// with clk.
func controlDrain(clk *rt.Clock, k int) *probe.Drain {
	return probe.NewDrain(probe.DrainConfig{Receiver: &fakeRx{q: map[int][][]byte{}}, Clock: clk, Set: record.NewSet(seedLayout), Controls: k})
}

// TestControlsRecorded checks what one tick's controls record, with each
// clock source: K calls of each control into its class and the counts
// (their sums equal to the histograms' sums), nothing when not measured,
// and no allocation. The fake cycles clock advances 100 per read, so each
// control call costs exactly 100 ticks: one read before, one after.
func TestControlsRecorded(t *testing.T) {
	var cycles uint64
	fake := rt.FakeCyclesClock(func() uint64 { cycles += 100; return cycles })
	mono, err := rt.NewClock(rt.ClockMonotonic)
	if err != nil {
		t.Fatal(err)
	}
	clocks := []*rt.Clock{fake, mono}
	if c := clock(t); c.Source() == rt.SourceTSC {
		clocks = append(clocks, c)
	}
	const k = 16
	for _, clk := range clocks {
		t.Run(clk.Info().Kind, func(t *testing.T) {
			d := controlDrain(clk, k)
			if d.Controls() != k {
				t.Fatalf("Controls() = %d, want %d", d.Controls(), k)
			}
			far := rt.Monotonic() + 3600e9
			d.ControlTick(rt.Monotonic(), far) // not measured: runs, records nothing
			if c := d.Counts(); c.NullCalls != 0 || c.LoopCalls != 0 || d.Set().HDR(record.NullSyscall).Count() != 0 {
				t.Fatalf("unmeasured tick recorded: %+v", c)
			}
			d.Measure = true
			if a := testing.AllocsPerRun(100, func() { d.ControlTick(rt.Monotonic(), far) }); a != 0 {
				t.Errorf("ControlTick allocs %v, want 0", a)
			}
			const want = 101 * k
			c := d.Counts()
			null, loop := d.Set().HDR(record.NullSyscall), d.Set().HDR(record.UserLoop)
			if c.NullCalls != want || c.LoopCalls != want || null.Count() != want || loop.Count() != want || c.ControlSkips != 0 {
				t.Fatalf("counts %+v, HDR %d and %d; want %d of each, no skip", c, null.Count(), loop.Count(), want)
			}
			if got := null.Mean() * want; math.Abs(got-float64(c.NullSumTicks)) > 0.5 {
				t.Errorf("null syscall sum %d, HDR's %v", c.NullSumTicks, got)
			}
			if got := loop.Mean() * want; math.Abs(got-float64(c.LoopSumTicks)) > 0.5 {
				t.Errorf("user loop sum %d, HDR's %v", c.LoopSumTicks, got)
			}
			if clk == fake && (null.Min() != 100 || null.Max() != 100 || loop.Min() != 100 || loop.Max() != 100) {
				t.Errorf("fake cycles: null [%d, %d], loop [%d, %d] ticks; want exactly 100", null.Min(), null.Max(), loop.Min(), loop.Max())
			}
			if clk != fake && (null.Min() == 0 && loop.Min() == 0 || null.Max() > 1e12 || loop.Max() > 1e12) {
				t.Errorf("%s: null [%d, %d], loop [%d, %d] ticks", clk.Info().Kind, null.Min(), null.Max(), loop.Min(), loop.Max())
			}
			for cl := range record.NumClasses {
				if cl == record.NullSyscall || cl == record.UserLoop {
					continue
				}
				if h := d.Set().HDR(cl); h != nil && h.Count() != 0 {
					t.Errorf("%s got %d samples from the controls", cl, h.Count())
				}
			}
		})
	}
}

// TestControlsSkipNearDeadline checks the deadline rule: a tick whose next
// deadline has passed runs no controls and counts a skip (when measured);
// one whose next deadline is nearer than twice the last controls' time
// skips too, and the skip forgets that time, so the next tick runs them.
func TestControlsSkipNearDeadline(t *testing.T) {
	mono, err := rt.NewClock(rt.ClockMonotonic)
	if err != nil {
		t.Fatal(err)
	}
	d := controlDrain(mono, 8)
	d.Measure = true
	now := rt.Monotonic()
	d.ControlTick(now, now) // the next deadline is now: passed
	d.ControlTick(now, now-1)
	if c := d.Counts(); c.ControlSkips != 2 || c.NullCalls != 0 {
		t.Fatalf("after two ticks past their next deadline: %+v; want 2 skips, no calls", c)
	}
	d.ControlTick(rt.Monotonic(), rt.Monotonic()+3600e9) // runs: sets the last time
	now = rt.Monotonic()
	d.ControlTick(now, now+1) // nearer than twice the last time (> 0 ns)
	if c := d.Counts(); c.ControlSkips != 3 || c.NullCalls != 8 {
		t.Fatalf("counts %+v; want 3 skips, 8 null calls", c)
	}
	now = rt.Monotonic()
	d.ControlTick(now, now+1e9) // the skip forgot the last time: runs
	if c := d.Counts(); c.ControlSkips != 3 || c.NullCalls != 16 || c.LoopCalls != 16 {
		t.Fatalf("counts %+v; want 3 skips, 16 calls of each", c)
	}
	d.Measure = false
	d.ControlTick(now, now)
	if c := d.Counts(); c.ControlSkips != 3 {
		t.Errorf("an unmeasured tick counted a skip: %+v", c)
	}
}

// TestControlsOff checks that a drain without controls does nothing in
// ControlTick.
func TestControlsOff(t *testing.T) {
	d := controlDrain(clock(t), 0)
	d.Measure = true
	d.ControlTick(rt.Monotonic(), rt.Monotonic()+1e9)
	if c := d.Counts(); c.NullCalls != 0 || c.ControlSkips != 0 || d.Controls() != 0 {
		t.Errorf("no controls: %+v", c)
	}
	if d := controlDrain(clock(t), probe.MaxControls+5); d.Controls() != probe.MaxControls {
		t.Errorf("Controls() = %d, want the cap %d", d.Controls(), probe.MaxControls)
	}
}

// BenchmarkControls reports what the drift controls cost with the
// scenario's default of 64 each per tick, by median over ticks (so that
// preemptions on a loaded machine do not move it):
//
//	tick-us        the whole ControlTick (64 null syscalls, 64 user loops,
//	               the clock reads, the recording)
//	share-10ms-%   tick-us as a share of a 10 ms tick
//	null-ns, loop-ns  one null syscall, one user-loop run (median of the
//	               ticks' means, the clock's ticks converted with its Hz)
func BenchmarkControls(b *testing.B) {
	const k = 64
	clk := clock(b)
	d := controlDrain(clk, k)
	d.Measure = true
	nsPerTick := 1e9 / clk.Info().Hz
	var ticks, nulls, loops []float64
	far := rt.Monotonic() + 3600e9
	b.ReportAllocs()
	for b.Loop() {
		c0 := d.Counts()
		t0 := rt.Monotonic()
		d.ControlTick(t0, far)
		t1 := rt.Monotonic()
		c1 := d.Counts()
		if len(ticks) < 1<<16 {
			ticks = append(ticks, float64(t1-t0))
			nulls = append(nulls, float64(c1.NullSumTicks-c0.NullSumTicks)/k*nsPerTick)
			loops = append(loops, float64(c1.LoopSumTicks-c0.LoopSumTicks)/k*nsPerTick)
		}
	}
	med := func(x []float64) float64 {
		s := slices.Clone(x)
		slices.Sort(s)
		return s[len(s)/2]
	}
	tick := med(ticks)
	b.ReportMetric(tick/1e3, "tick-us")
	b.ReportMetric(100*tick/10e6, "share-10ms-%")
	b.ReportMetric(med(nulls), "null-ns")
	b.ReportMetric(med(loops), "loop-ns")
}

// TestLoopControls runs a loop whose drain stalls 4 ms every 8th tick on a
// 1 ms catch-up ticker: the stalled tick (its next deadline passed during
// the drain) runs no controls and counts a skip, and every other measured
// tick runs K of each, so MeasuredTicks = ControlSkips + NullCalls / K
// exactly, however the goroutine was scheduled.
func TestLoopControls(t *testing.T) {
	const k = 4
	ms := int64(time.Millisecond)
	rx := &countRx{stallEvery: 24, stall: 4 * ms} // 3 calls a tick: every 8th tick
	rec := probe.NewRecorders(seedLayout)
	d := probe.NewDrain(probe.DrainConfig{FDs: []int{1, 2, 3}, Receiver: rx, Clock: clock(t), Set: rec.Set, Controls: k})
	tk := rt.NewTicker(rt.Monotonic()+2*ms, ms, true)
	tk.SetMaxBacklog(1 << 40)
	l := &probe.Loop{Ticker: tk, Probe: d, Drain: d, Rec: rec,
		MeasureFrom: tk.Deadline(4), MeasureUntil: tk.Deadline(84), HardStop: tk.Deadline(88),
		Wakeups: record.NewRing[record.Wakeup](128)}
	runBoundedLoop(t, l)
	c := d.Counts()
	if c.NullCalls%k != 0 || c.LoopCalls != c.NullCalls || l.MeasuredTicks != c.ControlSkips+c.NullCalls/k {
		t.Errorf("%d measured ticks, %d skipped controls, %d null calls, %d loop runs; want ticks = skips + calls/%d", l.MeasuredTicks, c.ControlSkips, c.NullCalls, c.LoopCalls, k)
	}
	if c.ControlSkips == 0 {
		t.Errorf("no tick skipped its controls; the stalls (%d calls) make ticks run past their next deadline", rx.calls)
	}
	if n := uint64(rec.Set.HDR(record.NullSyscall).Count()); n != c.NullCalls {
		t.Errorf("%d null calls recorded, counted %d", n, c.NullCalls)
	}
}
