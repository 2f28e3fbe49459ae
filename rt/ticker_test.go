package rt_test

import (
	"testing"
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
			k0, _, _, _, errno := tk.Wait()
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

func TestTickerWaitAllocs(t *testing.T) {
	tk := rt.NewTicker(rt.Monotonic(), int64(time.Microsecond), false)
	if a := testing.AllocsPerRun(100, func() { tk.Wait() }); a != 0 {
		t.Errorf("Ticker.Wait allocs %v, want 0", a)
	}
}

func TestClockNowAllocs(t *testing.T) {
	auto, err := autoClock()
	if err != nil {
		t.Fatal(err)
	}
	mono, err := rt.NewClock("monotonic")
	if err != nil {
		t.Fatal(err)
	}
	var sink rt.Ticks
	for _, c := range []*rt.Clock{auto, mono} {
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
	for _, kind := range []string{"tsc", "monotonic"} {
		b.Run(kind, func(b *testing.B) {
			var c *rt.Clock
			var err error
			if kind == "tsc" {
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
