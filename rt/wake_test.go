package rt_test

import (
	"runtime"
	"testing"

	"github.com/rtload/rtload/rt"
)

// TestWakeLatency checks the wake-stamp arithmetic: the TSC interval
// between the wake and the clock read is taken off, and a stamp that
// cannot be this wake's falls back to now − deadline.
func TestWakeLatency(t *testing.T) {
	for _, c := range []struct {
		name            string
		now, deadline   int64
		tscNow, tscWake uint64
		nsPerTick       float64
		want            int64
	}{
		{"5 µs between wake and clock read at 2.5 GHz", 1_000_030_000, 1_000_000_000, 112_500, 100_000, 0.4, 25_000},
		{"same instant", 1_000_030_000, 1_000_000_000, 100_000, 100_000, 0.4, 30_000},
		{"no stamp (tsc 0)", 1_000_030_000, 1_000_000_000, 112_500, 0, 0.4, 30_000},
		{"stamp after the read (another CPU's TSC behind): not this wake", 1_000_030_000, 1_000_000_000, 100_000, 100_001, 0.4, 30_000},
		{"gap beyond MaxWakeGap: not this wake", 1_000_030_000, 1_000_000_000, 100 + rt.MaxWakeGap + 1, 100, 0.4, 30_000},
		{"gap of exactly MaxWakeGap is converted", 5_000_000_000, 1_000_000_000, 100 + rt.MaxWakeGap, 100, 0.1, 4_000_000_000 - rt.MaxWakeGap/10},
		{"wraparound of the TSC difference is not a gap", 1_000_030_000, 1_000_000_000, 5, ^uint64(0) - 5, 0.4, 30_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := rt.WakeLatency(c.now, c.deadline, c.tscNow, c.tscWake, c.nsPerTick); got != c.want {
				t.Errorf("WakeLatency = %d, want %d", got, c.want)
			}
		})
	}
}

// TestTickerWaitStampsWake checks the wake stamp on a real sleep: where
// the TSC is invariant (amd64) Wait takes the wake time in the sleep's own
// assembly, so its latency is never later than a clock read right after
// Wait returns, and never before the deadline. Both reads are checked:
// RDTSCP (where CPUID offers it) and LFENCE;RDTSC;LFENCE (a VM that hides
// RDTSCP), which runs on every amd64 CPU.
func TestTickerWaitStampsWake(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		name := "rdtscp"
		if fenced {
			name = "fenced-rdtsc"
		}
		t.Run(name, func(t *testing.T) {
			tk := rt.NewTicker(rt.Monotonic()+2*ms, ms, false)
			if !tk.StampsWake() {
				if runtime.GOARCH == "amd64" {
					t.Skip("no invariant TSC here (CPUID 0x80000007, constant_tsc, nonstop_tsc): Wait reads the vDSO clock after the call")
				}
				t.Skipf("no wake stamp on %s", runtime.GOARCH)
			}
			if fenced {
				tk.ForceFenced()
			} else if tk.Fenced() {
				t.Skip("CPUID offers no RDTSCP here: the ticker reads LFENCE;RDTSC;LFENCE (the other subtest)")
			}
			for i := 0; i < 30; i++ {
				_, deadline, latency, _, errno := tk.Wait()
				after := rt.Monotonic() - deadline
				if errno != 0 {
					t.Fatalf("Wait %d: %v", i, errno)
				}
				// 50 ns allow for the rounding of two clocks read a few ns apart.
				if latency < 0 || latency > after+50 {
					t.Errorf("Wait %d: latency %d ns; want in [0, %d] (the clock read right after Wait)", i, latency, after)
				}
			}
		})
	}
}
