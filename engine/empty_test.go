package engine

import (
	"testing"
	"time"

	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/results"
)

// TestEmptyReader: a reader that ran no tick in the window, made no recv
// call on its sockets, or lost every wakeup record is named with its
// cause, read from the loop's counts; one that measured is not.
func TestEmptyReader(t *testing.T) {
	ms := int64(time.Millisecond)
	w := window{t0: 1000 * ms, from: 1200 * ms, until: 3200 * ms}
	dur := 2 * time.Second
	starved := "runnable but off CPU 1 for 1.98s (99.0% of the 2s window; schedstat run-queue wait): RT throttling or a thread at or above SCHED_FIFO 80 there"
	steal := "CPU 1 lost 100ms to the hypervisor during the trial (/proc/stat steal): the machine's share"
	for _, tc := range []struct {
		name    string
		rr      results.Reader
		l       probe.Loop
		stopped bool
		steal   string
		want    string
	}{
		{"measured", results.Reader{Sockets: 450, Wakeups: 200, Calls: 90000}, probe.Loop{Ticks: 220}, false, "", ""},
		{"timer only: no sockets, no calls", results.Reader{Wakeups: 200}, probe.Loop{Ticks: 220}, false, "", ""},
		{"starved", results.Reader{Sockets: 450, MissedTicks: 200, Starved: starved}, probe.Loop{Ticks: 3, WarmupTicks: 2, TailTicks: 1}, false, "",
			"measured nothing: 0 wakeups and 0 recv calls over 450 sockets in the 2s window: starved: " + starved},
		{"stopped before the window ended", results.Reader{Sockets: 450}, probe.Loop{Ticks: 10, WarmupTicks: 10, EndNs: 1150 * ms}, true, "",
			"measured nothing: 0 wakeups and 0 recv calls over 450 sockets in the 2s window: stopped: the trial ended at +150ms, the window would have at +2.2s"},
		{"never ran a tick", results.Reader{Sockets: 450}, probe.Loop{EndNs: 3300 * ms}, false, "",
			"measured nothing: 0 wakeups and 0 recv calls over 450 sockets in the 2s window: not scheduled: its thread ran no tick at all, asleep off its CPU (not runnable) until it stopped at +2.3s"},
		{"first tick after the window", results.Reader{Sockets: 450, MissedTicks: 200}, probe.Loop{Ticks: 4, TailTicks: 4, FirstTickNs: 3250 * ms}, false, steal,
			"measured nothing: 0 wakeups and 0 recv calls over 450 sockets in the 2s window: not scheduled: its first tick ran at +2.25s, after the window's end at +2.2s (200 deadlines missed); " + steal},
		{"asleep through the window", results.Reader{Sockets: 450, MissedTicks: 200}, probe.Loop{Ticks: 25, WarmupTicks: 20, TailTicks: 5, FirstTickNs: 1000 * ms}, false, "",
			"measured nothing: 0 wakeups and 0 recv calls over 450 sockets in the 2s window: not scheduled: asleep off its CPU (not runnable) through the window: 20 ticks before it, 5 after, 200 of its deadlines missed"},
		{"every record dropped", results.Reader{Sockets: 450, Wakeups: 200, Calls: 90000, RingDropped: 200}, probe.Loop{Ticks: 220}, false, "",
			"measured nothing: all 200 wakeup records dropped (the writer did not drain the ring in time)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := emptyReader(tc.rr, &tc.l, w, dur, tc.stopped, tc.steal); got != tc.want {
				t.Errorf("emptyReader:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
