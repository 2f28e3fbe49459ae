package rt_test

import (
	"testing"
	"testing/quick"
	"time"

	"github.com/rtload/rtload/rt"
)

const ms = int64(time.Millisecond)

func TestTickerWait(t *testing.T) {
	tk := rt.NewTicker(rt.Monotonic()+2*ms, ms, false)
	for i := uint64(0); i < 50; i++ {
		k, deadline, latency, missed, errno := tk.Wait()
		woke := rt.Monotonic()
		if errno != 0 {
			t.Fatalf("Wait %d: %v", i, errno)
		}
		if missed > 0 {
			// The test goroutine is not real-time: a preemption can skip ticks.
			t.Logf("Wait %d: %d ticks skipped (not an RT thread)", i, missed)
			i += missed
		}
		if k != i {
			t.Fatalf("Wait %d returned tick %d", i, k)
		}
		if deadline != tk.Deadline(k) {
			t.Errorf("tick %d: deadline %d, Deadline(k) %d", k, deadline, tk.Deadline(k))
		}
		if latency < 0 {
			t.Errorf("tick %d: latency %d ns < 0", k, latency)
		}
		if woke < deadline {
			t.Errorf("tick %d: woke at %d, before its deadline %d", k, woke, deadline)
		}
	}
}

func busyWait(d int64) {
	end := rt.Monotonic() + d
	for i := 0; i < 1e9 && rt.Monotonic() < end; i++ {
	}
}

func TestTickerOverrun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		catchUp bool
	}{
		{"skip: jumps over the ticks missed during a 5 ms stall", false},
		{"catch-up: runs every tick back to back", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := rt.NewTicker(rt.Monotonic()+2*ms, ms, tc.catchUp)
			// No backlog limit: the stall is 5 ms of busy wait plus however
			// long the (non-RT) goroutine is kept off its CPU meanwhile,
			// which is the machine's (161 ms once under load: more than
			// DefaultMaxBacklog's 100 ticks, so it skipped). The limit has
			// its own tests (TestTickerMissedSumsToStats, arithmetic).
			tk.SetMaxBacklog(1 << 40)
			k0, _, _, missed0, errno := tk.Wait()
			if errno != 0 {
				t.Fatal(errno)
			}
			busyWait(5 * ms)
			before := rt.Monotonic()
			k1, deadline, latency, missed, errno := tk.Wait()
			after := rt.Monotonic()
			if errno != 0 {
				t.Fatal(errno)
			}
			if !tk.Overran() {
				t.Errorf("tick %d after a 5 ms stall of a 1 ms ticker: Overran() false", k1)
			}
			// The first Wait may have overrun too, when the goroutine was
			// kept off its CPU between NewTicker and it (223 ms once).
			if st := tk.Stats(); st.Overruns < 1 || st.MissedTicks != missed0+missed {
				t.Errorf("Stats %+v: want ≥ 1 overrun and MissedTicks = the Waits' missed %d + %d", st, missed0, missed)
			}
			if tc.catchUp {
				if missed != 0 || k1 != k0+1 {
					t.Errorf("catch-up: k %d → %d, missed %d; want k+1, missed 0", k0, k1, missed)
				}
				if latency < 4*ms {
					t.Errorf("catch-up: tick %d ran %d ns late; the stall was 5 ms", k1, latency)
				}
				return
			}
			if missed < 3 || k1 != k0+1+missed {
				t.Errorf("skip: k %d → %d, missed %d; want missed ≥ 3 and k1 = k0+1+missed", k0, k1, missed)
			}
			// The tick run is the latest one due when Wait was called.
			if deadline != tk.Deadline(k1) || deadline <= before-ms || deadline > after || latency < 0 {
				t.Errorf("skip: tick %d deadline %d (Deadline(k) %d), want in (%d, %d]; latency %d ns",
					k1, deadline, tk.Deadline(k1), before-ms, after, latency)
			}
		})
	}
}

// step is one Wait of the arithmetic tests: entered at now, it returns
// tick k with deadline, missed ticks skipped before it, and whether it was
// an overrun.
type step struct {
	now, deadline int64
	k, missed     uint64
	overran       bool
}

func TestTickerArithmetic(t *testing.T) {
	// Period 10, tick 0 due at 0; each row is a sequence of Waits.
	for _, tc := range []struct {
		name       string
		catchUp    bool
		maxBacklog uint64
		steps      []step
		want       rt.TickerStats
	}{
		{"skip: on time, late by less than a period, then overruns", false, 0, []step{
			{now: 0, k: 0, deadline: 0},
			{now: 5, k: 1, deadline: 10},                                // early: sleeps
			{now: 29, k: 2, deadline: 20},                               // 9 late: not an overrun
			{now: 40, k: 4, deadline: 40, missed: 1, overran: true},     // tick 3 (due 30) entered 10 late: skipped
			{now: 41, k: 5, deadline: 50},                               // back on time
			{now: 100, k: 10, deadline: 100, missed: 4, overran: true},  // ticks 6–9 skipped
			{now: 219, k: 21, deadline: 210, missed: 10, overran: true}, // 11–20 skipped: 21 is the latest deadline due
		}, rt.TickerStats{Ticks: 7, Overruns: 3, MissedTicks: 15, PeakBacklog: 10}},
		{"catch-up: late ticks run back to back, each an overrun", true, 3, []step{
			{now: 0, k: 0, deadline: 0},
			{now: 35, k: 1, deadline: 10, overran: true}, // 2 further ticks due: caught up
			{now: 36, k: 2, deadline: 20, overran: true},
			{now: 37, k: 3, deadline: 30},                // 7 late: not an overrun
			{now: 70, k: 4, deadline: 40, overran: true}, // exactly MaxBacklog (3) further due: caught up
			{now: 71, k: 5, deadline: 50, overran: true},
			{now: 72, k: 6, deadline: 60, overran: true},
			{now: 73, k: 7, deadline: 70},
		}, rt.TickerStats{Ticks: 8, Overruns: 5, PeakBacklog: 3}},
		{"catch-up: a backlog over the limit is skipped, counted", true, 3, []step{
			{now: 0, k: 0, deadline: 0},
			{now: 55, k: 5, deadline: 50, missed: 4, overran: true}, // 4 further due > 3: skip
			{now: 56, k: 6, deadline: 60},
			{now: 95, k: 7, deadline: 70, overran: true}, // 2 due: caught up
			{now: 96, k: 8, deadline: 80, overran: true},
			{now: 97, k: 9, deadline: 90},
		}, rt.TickerStats{Ticks: 6, Overruns: 3, MissedTicks: 4, BacklogSkips: 1, PeakBacklog: 4}},
		{"catch-up with MaxBacklog 0 is skip mode", true, 0, []step{
			{now: 0, k: 0, deadline: 0},
			{now: 25, k: 2, deadline: 20, missed: 1, overran: true},
		}, rt.TickerStats{Ticks: 2, Overruns: 1, MissedTicks: 1, BacklogSkips: 1, PeakBacklog: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := rt.NewTicker(0, 10, tc.catchUp)
			tk.SetMaxBacklog(tc.maxBacklog)
			var sum uint64
			for i, s := range tc.steps {
				k, deadline, missed := tk.Advance(s.now)
				got := step{now: s.now, k: k, deadline: deadline, missed: missed, overran: tk.Overran()}
				if got != s {
					t.Errorf("Wait %d at %d = %+v, want %+v", i, s.now, got, s)
				}
				sum += missed
			}
			st := tk.Stats()
			if st != tc.want {
				t.Errorf("Stats() = %+v, want %+v", st, tc.want)
			}
			if sum != st.MissedTicks {
				t.Errorf("per-Wait missed sum to %d, MissedTicks %d", sum, st.MissedTicks)
			}
		})
	}
}

func TestTickerArithmeticProperties(t *testing.T) {
	// Random entry times (non-decreasing, jumps up to 50 periods), both
	// modes, any backlog limit: every deadline passed is run or missed,
	// once; missed sums to MissedTicks; Overran is counted in Overruns;
	// in skip mode the tick run is less than a period late.
	f := func(seed int64, catchUp bool, limit uint8) bool {
		const period = 1000
		tk := rt.NewTicker(0, period, catchUp)
		tk.SetMaxBacklog(uint64(limit % 8))
		now, r := int64(0), uint64(seed)
		var sum, overruns uint64
		next := uint64(0)
		for i := 0; i < 200; i++ {
			r = r*6364136223846793005 + 1442695040888963407
			now += int64(r>>33) % (50 * period)
			k, deadline, missed := tk.Advance(now)
			if k != next+missed || deadline != tk.Deadline(k) {
				return false
			}
			if tk.Overran() {
				overruns++
			}
			if !catchUp && now-deadline >= period { // skip mode runs the latest due tick
				return false
			}
			sum += missed
			next = k + 1
			if deadline > now {
				now = deadline // the sleep
			}
		}
		st := tk.Stats()
		return st.MissedTicks == sum && st.Ticks == 200 && st.Ticks+st.MissedTicks == next && st.Overruns == overruns
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500}); err != nil {
		t.Error(err)
	}
}

func TestTickerMissedSumsToStats(t *testing.T) {
	// A real 1 ms ticker stalled 4 ms on every 8th tick: each stall is an
	// overrun (the next deadline is ≥ 3 periods past on entry). Skip mode
	// misses ≥ 3 ticks per stall; catch-up with a backlog limit of 2 must
	// skip them too, counted as backlog skips. The wakeup log's missed
	// column (here: what each Wait returned) sums to MissedTicks.
	for _, catchUp := range []bool{false, true} {
		t.Run(map[bool]string{false: "skip", true: "catchup"}[catchUp], func(t *testing.T) {
			tk := rt.NewTicker(rt.Monotonic()+2*ms, ms, catchUp)
			tk.SetMaxBacklog(2)
			const waits, every = 40, 8
			var sum, lastK uint64
			for i := 0; i < waits; i++ {
				k, _, _, missed, errno := tk.Wait()
				if errno != 0 {
					t.Fatal(errno)
				}
				sum += missed
				lastK = k
				if i%every == every-1 {
					busyWait(4 * ms)
				}
			}
			st := tk.Stats()
			stalls := uint64((waits - 1) / every)
			if st.MissedTicks != sum {
				t.Errorf("wakeups' missed sum to %d, Stats().MissedTicks %d", sum, st.MissedTicks)
			}
			if st.Ticks != waits || st.Ticks+st.MissedTicks != lastK+1 {
				t.Errorf("Stats %+v: want %d ticks and ticks + missed = last tick + 1 = %d", st, waits, lastK+1)
			}
			if st.Overruns < stalls || st.MissedTicks < 3*stalls {
				t.Errorf("Stats %+v after %d stalls of 4 periods: want ≥ %d overruns, ≥ %d missed", st, stalls, stalls, 3*stalls)
			}
			if catchUp && st.BacklogSkips < stalls || !catchUp && st.BacklogSkips != 0 {
				t.Errorf("Stats %+v: backlog skips %d after %d stalls (catch-up %v)", st, st.BacklogSkips, stalls, catchUp)
			}
		})
	}
}

func TestTickerWaitAllocs(t *testing.T) {
	tk := rt.NewTicker(rt.Monotonic(), int64(time.Microsecond), false)
	if a := testing.AllocsPerRun(100, func() { tk.Wait() }); a != 0 {
		t.Errorf("Ticker.Wait allocs %v, want 0", a)
	}
	tk.ForceFenced() // the wake stamp where CPUID hides RDTSCP
	if a := testing.AllocsPerRun(100, func() { tk.Wait() }); a != 0 {
		t.Errorf("Ticker.Wait (fenced TSC) allocs %v, want 0", a)
	}
}

func TestClockNowAllocs(t *testing.T) {
	auto, err := autoClock()
	if err != nil {
		t.Fatal(err)
	}
	mono, err := rt.NewClock(rt.ClockMonotonic)
	if err != nil {
		t.Fatal(err)
	}
	clocks := []*rt.Clock{auto, mono}
	if f, err := rt.FencedTSCClock(); err == nil {
		clocks = append(clocks, f)
	}
	var sink rt.Ticks
	for _, c := range clocks {
		if a := testing.AllocsPerRun(100, func() { sink += c.Now() }); a != 0 {
			t.Errorf("%s Clock.Now allocs %v, want 0", c.Info().Kind, a)
		}
		if a := testing.AllocsPerRun(100, func() { sink += rt.Ticks(rt.Monotonic()) }); a != 0 {
			t.Errorf("Monotonic allocs %v, want 0", a)
		}
	}
	_ = sink
}

// BenchmarkClock is the cost of one clock read: half of the fixed overhead
// each timed recv call carries.
func BenchmarkClock(b *testing.B) {
	for _, kind := range []rt.ClockKind{rt.ClockTSC, rt.ClockMonotonic} {
		b.Run(kind.String(), func(b *testing.B) {
			var c *rt.Clock
			var err error
			if kind == rt.ClockTSC {
				c, err = autoClock()
				if err == nil && c.Info().Kind != "tsc" {
					b.Skipf("no usable TSC: %v", c.Info().Fallbacks)
				}
			} else {
				c, err = rt.NewClock(kind)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var sink rt.Ticks
			for b.Loop() {
				sink += c.Now()
			}
			_ = sink
		})
	}
}
