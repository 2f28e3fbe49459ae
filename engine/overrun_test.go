package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
)

// overloadedYAML is a reader that cannot keep up: 2000 sockets to drain
// (EAGAIN each, about 1 µs a call here: 2 ms a tick and more) every 250 µs,
// for 1 s, in 250 ms intervals. Every tick overruns, so the thread never
// sleeps: at SCHED_FIFO 1 any other real-time thread on CPU 1 (another
// test's reader, another run's) still gets the CPU, where at the default
// 80 this reader would starve every reader of 80 and below for the whole
// second. Being preempted is what the identity below must survive anyway.
const overloadedYAML = `
name: overload
duration: 1s
interval: 250ms
endpoints: [{name: s, count: 2000}]
readers: [{name: rt, endpoints: [s], cpu: 1, priority: 1, period: 250us}]
`

// TestOverrunsCounted overloads a reader in both overrun modes and checks
// that overrun events and missed ticks are counted apart and right: every
// one of the window's 4000 deadlines is run or missed, exactly (wakeups +
// missed ticks = deadlines, however long the thread is kept off its CPU
// and wherever: a skip across the window's end counts the window's
// deadlines in it, missed at the end); the wakeup log's missed column
// sums to the summary's missed ticks less those; intervals.jsonl's
// counts sum to the trial's. In skip mode every overrun skips. In
// catch-up mode a backlog limit of 0 makes every overrun a backlog skip;
// without a limit it never skips, falls behind for good (the deadlines
// still due when it stops are missed at the end), and every tick it
// catches up late is an overrun. (How many ticks are due at each overrun
// depends on the drain's speed, 3 here and 9 under the race detector, so
// no limit in between is tested.)
func TestOverrunsCounted(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	for _, tc := range []struct {
		name string
		sets []string
	}{
		{"skip", []string{"readers[0].overrun=skip"}},
		{"catchup, backlog limit 0", []string{"readers[0].overrun=catchup", "readers[0].max_backlog=0"}},
		{"catchup, no backlog limit", []string{"readers[0].overrun=catchup", "readers[0].max_backlog=1000000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, trials := load(t, overloadedYAML, tc.sets...)
			dir := t.TempDir()
			sum, err := Run(context.Background(), spec, trials, Options{OutDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			rx := sum.Trials[0].Readers[0]
			if rx.RingDropped != 0 || rx.WakeupLogDropped != 0 {
				t.Fatalf("wakeup log incomplete: %d ring drops, %d rows deleted", rx.RingDropped, rx.WakeupLogDropped)
			}
			wk, _, err := wakelog.ReaderWakeups(dir, rx)
			if err != nil {
				t.Fatal(err)
			}
			var missed, late uint64
			for _, w := range wk {
				missed += uint64(w.Missed)
				if w.LatencyNs >= int64(spec.Readers[0].Period) {
					late++
				}
			}
			t.Logf("%s: %d wakeups, %d overruns, %d missed ticks (%d at the end), %d backlog skips; log: %d rows, missed %d, %d a period late",
				tc.name, rx.Wakeups, rx.Overruns, rx.MissedTicks, rx.MissedAtEnd, rx.BacklogSkips, len(wk), missed, late)
			if uint64(len(wk)) != rx.Wakeups {
				t.Errorf("wakeup log has %d rows, summary %d wakeups", len(wk), rx.Wakeups)
			}
			if missed+rx.MissedAtEnd != rx.MissedTicks {
				t.Errorf("wakeup log's missed column sums to %d, + %d missed at the end; summary's missed_ticks is %d", missed, rx.MissedAtEnd, rx.MissedTicks)
			}
			if rx.Overruns == 0 {
				t.Errorf("an overloaded reader with no overruns")
			}
			// 1 s of 250 µs deadlines: each one run or missed.
			if n := rx.Wakeups + rx.MissedTicks; n != 4000 {
				t.Errorf("wakeups + missed ticks = %d, want the window's 4000 deadlines", n)
			}
			ivs, _, err := store.ReadJSONL[results.Interval](filepath.Join(dir, results.IntervalsFile))
			if err != nil {
				t.Fatal(err)
			}
			var ivOver, ivMissed, ivSkips uint64
			for _, iv := range ivs {
				ivOver, ivMissed, ivSkips = ivOver+iv.Overruns, ivMissed+iv.MissedTicks, ivSkips+iv.BacklogSkips
			}
			if ivOver != rx.Overruns || ivMissed != rx.MissedTicks || ivSkips != rx.BacklogSkips {
				t.Errorf("%d intervals sum to %d overruns, %d missed ticks, %d backlog skips; the trial has %d, %d, %d",
					len(ivs), ivOver, ivMissed, ivSkips, rx.Overruns, rx.MissedTicks, rx.BacklogSkips)
			}
			switch tc.name {
			case "skip":
				if rx.OverrunMode != "skip" || rx.BacklogSkips != 0 || rx.MissedTicks == 0 {
					t.Errorf("skip mode: overrun_mode %q, %d backlog skips", rx.OverrunMode, rx.BacklogSkips)
				}
				// In skip mode every overrun skips: as many skips as
				// log rows with missed > 0.
				var skips uint64
				for _, w := range wk {
					if w.Missed > 0 {
						skips++
					}
				}
				if skips != rx.Overruns {
					t.Errorf("skip mode: %d rows with missed > 0, %d overruns", skips, rx.Overruns)
				}
			case "catchup, backlog limit 0":
				if rx.OverrunMode != "catchup" || rx.MaxBacklog != 0 || rx.BacklogSkips != rx.Overruns || rx.MissedTicks == 0 {
					t.Errorf("catchup, limit 0: overrun_mode %q, max_backlog %d, %d backlog skips of %d overruns, %d missed",
						rx.OverrunMode, rx.MaxBacklog, rx.BacklogSkips, rx.Overruns, rx.MissedTicks)
				}
			case "catchup, no backlog limit":
				if rx.MaxBacklog != 1000000 || rx.BacklogSkips != 0 || missed != 0 || rx.MissedAtEnd == 0 {
					t.Errorf("catchup, no limit: max_backlog %d, %d backlog skips, %d missed ticks in the log, %d at the end; want none skipped, the backlog left at the end",
						rx.MaxBacklog, rx.BacklogSkips, missed, rx.MissedAtEnd)
				}
				// Caught-up ticks are overruns: all but the first few.
				if rx.Overruns+5 < rx.Wakeups || late+5 < rx.Wakeups {
					t.Errorf("catchup, no limit: %d overruns, %d late of %d wakeups: the ticks caught up late are not counted", rx.Overruns, late, rx.Wakeups)
				}
			}
		})
	}
}
