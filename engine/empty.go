package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/results"
)

// markEmpty marks the trial invalid when a reader measured nothing
// (emptyReader), with each such reader's cause, and says so on the log:
// compare then leaves every verdict touching the trial undecided and
// check cannot judge it (125), as for a trial the kernel changed.
func (t *trial) markEmpty() {
	var marks []string
	for i, r := range t.readers {
		if i >= len(t.res.Readers) {
			break
		}
		rr := t.res.Readers[i]
		if why := emptyReader(rr, r.loop, t.win, time.Duration(t.res.DurationNs), t.stopped, stolen(t.res.StealNs, rr.Applied.CPUs)); why != "" {
			marks = append(marks, "reader "+rr.Name+" "+why)
		}
	}
	if len(marks) == 0 {
		return
	}
	mark := strings.Join(marks, "; ")
	if t.res.Invalid == "" {
		t.res.Invalid = "invalid: " + mark
	} else {
		t.res.Invalid += "; " + mark
	}
	fmt.Fprintf(t.run.opt.Log, "warning: trial %d: %s\n", t.tr.Index+1, mark)
}

// emptyReader says why reader rr measured nothing in window w (dur long),
// "" when it
// did measure: no wakeup in the window, no recv call on its sockets, or
// every wakeup record dropped. The cause is read from what the loop l
// counted and the kernel's counts: stopped (the trial ended early),
// starved (runnable but kept off its CPU: rr.Starved), or not scheduled
// (neither running nor runnable: asleep off its CPU, when its first tick
// came, and how many ran before and after the window), then the
// hypervisor's steal on its CPU (steal, from stolen) when there was some.
func emptyReader(rr results.Reader, l *probe.Loop, w window, dur time.Duration, stopped bool, steal string) string {
	var why string
	switch {
	case rr.Wakeups == 0 || rr.Sockets > 0 && rr.Calls == 0:
		why = fmt.Sprintf("measured nothing: %d wakeups and %d recv calls over %d sockets in the %s window", rr.Wakeups, rr.Calls, rr.Sockets, dur)
		why += ": " + emptyCause(rr, l, w, stopped)
	case rr.RingDropped >= rr.Wakeups:
		why = fmt.Sprintf("measured nothing: all %d wakeup records dropped (the writer did not drain the ring in time)", rr.Wakeups)
	default:
		return ""
	}
	if steal != "" {
		why += "; " + steal
	}
	return why
}

// emptyCause names why a reader's loop l ran no measured tick in w.
func emptyCause(rr results.Reader, l *probe.Loop, w window, stopped bool) string {
	at := func(ns int64) string { return "+" + time.Duration(ns-w.t0).Round(time.Millisecond).String() }
	switch {
	case stopped && l.EndNs < w.until:
		return fmt.Sprintf("stopped: the trial ended at %s, the window would have at %s", at(l.EndNs), at(w.until))
	case rr.Starved != "":
		return "starved: " + rr.Starved
	case l.Ticks == 0:
		return fmt.Sprintf("not scheduled: its thread ran no tick at all, asleep off its CPU (not runnable) until it stopped at %s", at(l.EndNs))
	case l.FirstTickNs >= w.until:
		return fmt.Sprintf("not scheduled: its first tick ran at %s, after the window's end at %s (%d deadlines missed)", at(l.FirstTickNs), at(w.until), rr.MissedTicks)
	case rr.Wakeups == 0:
		return fmt.Sprintf("not scheduled: asleep off its CPU (not runnable) through the window: %d ticks before it, %d after, %d of its deadlines missed",
			l.WarmupTicks, l.TailTicks, rr.MissedTicks)
	}
	return fmt.Sprintf("its %d wakeups made no recv call", rr.Wakeups)
}
