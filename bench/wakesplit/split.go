package wakesplit

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
)

// SysClockNanosleep is clock_nanosleep's system call number on x86-64.
const SysClockNanosleep = 230

// Wakeup is one traced wakeup of the measured thread, steps in ns.
type Wakeup struct {
	DeadlineNs int64   // the timer's softexpires (CLOCK_MONOTONIC ns)
	ToFire     float64 // deadline → hrtimer_expire_entry (its now − softexpires)
	ToWaking   float64 // expire_entry → sched_waking of the thread
	ToOnCPU    float64 // sched_waking → sched_switch in; see FromIdle
	ToUser     float64 // on CPU → sys_exit of clock_nanosleep
	// FromIdle: the timer fired in the idle task. This kernel traces no
	// sched_switch out of idle, so ToOnCPU then ends at the timer
	// interrupt's local_timer_exit (after which the idle loop switches)
	// and ToUser includes the switch.
	FromIdle bool
	Prev     string // comm of the task the timer interrupted ("<idle>" from idle)
	// Class of the interrupted task: ClassIdle, ClassSelf (the thread
	// itself: it started the sleep after its deadline), ClassOwn (another
	// thread of its process) or ClassOther.
	Class string
	// Own is the program's own measured latency of this wakeup (ns) when
	// known (HasOwn, see MatchOwn); Own − Total is the time from the
	// kernel's sys_exit to the program's clock read after the sleep.
	Own    float64
	HasOwn bool
	// Counted over the thread's awake span after this wakeup (sys_exit of
	// clock_nanosleep to the next sys_enter of it): page faults taken by
	// the thread, its other system calls, and its preemptions.
	Faults, Syscalls, Preempted int
	// Counted over the sleep before this wakeup, on the thread's CPU:
	// switches to other threads of its process, and to any other task.
	SiblingRuns, OtherRuns int
}

// Classes of the task a timer interrupted.
const (
	ClassIdle  = "idle"
	ClassSelf  = "itself (slept past its deadline)"
	ClassOwn   = "own process"
	ClassOther = "other process"
)

// Total is the deadline → back in user space latency, ns.
func (w Wakeup) Total() float64 { return w.ToFire + w.ToWaking + w.ToOnCPU + w.ToUser }

// Own is one latency a program measured itself: its deadline
// (CLOCK_MONOTONIC ns; 0 when the program does not report it) and the
// latency, ns.
type Own struct {
	DeadlineNs int64
	LatencyNs  float64
}

// MatchOwn attaches the program's own latencies to ws: by deadline when
// every Own has one, else in order from the first wakeup (a program that
// reports no deadlines, like cyclictest -v, must have had every sleep
// traced from its first), and then only when own is not longer than ws
// and at most 1% + 5 shorter (cyclictest -v may leave its last few
// samples unprinted). It returns how many wakeups were matched.
func MatchOwn(ws []Wakeup, own []Own) int {
	byDeadline := len(own) > 0
	for _, o := range own {
		byDeadline = byDeadline && o.DeadlineNs != 0
	}
	n := 0
	if byDeadline {
		m := make(map[int64]float64, len(own))
		for _, o := range own {
			m[o.DeadlineNs] = o.LatencyNs
		}
		for i := range ws {
			if v, ok := m[ws[i].DeadlineNs]; ok {
				ws[i].Own, ws[i].HasOwn = v, true
				n++
			}
		}
		return n
	}
	if len(own) > len(ws) || len(ws)-len(own) > len(ws)/100+5 {
		return 0
	}
	for i := range own {
		ws[i].Own, ws[i].HasOwn = own[i].LatencyNs, true
	}
	return len(own)
}

// Options select the measured thread. TID 0 picks, among the threads of
// TGID (any process if TGID is 0), the one woken most often by its own
// hrtimer_wakeup timer with a real-time priority (prio < 100 in
// sched_waking). CPU < 0 takes every CPU in the trace. NR is the sleep's
// system call number (0 = SysClockNanosleep).
type Options struct {
	CPU       int
	TID, TGID int
	NR        int
}

// Trace is a parsed trace.
type Trace struct {
	Events []Event
	// HzPerNs converts trace timestamps to ns: ns = ticks / HzPerNs (1 for
	// ns clocks), fitted from hrtimer_expire_entry's now against its
	// timestamps.
	HzPerNs float64
}

// Read parses every event line of r; lines that fail to parse are an error
// with their line number.
func Read(r io.Reader) (*Trace, error) {
	t := &Trace{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		e, ok, err := ParseLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if ok {
			t.Events = append(t.Events, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// ftrace prints each CPU's buffer merged by timestamp; keep that order
	// stable in case of equal stamps.
	sort.SliceStable(t.Events, func(i, j int) bool { return t.Events[i].TS < t.Events[j].TS })
	t.HzPerNs = t.fitRate()
	return t, nil
}

// fitRate is the least-squares slope of timestamp against now over the
// expire events, rounded to 1 for a trace already in ns.
func (t *Trace) fitRate() float64 {
	var n, sx, sy, sxx, sxy float64
	var x0, y0 float64
	first := true
	for _, e := range t.Events {
		if e.Name != "hrtimer_expire_entry" {
			continue
		}
		if first {
			x0, y0, first = float64(e.Now), float64(e.TS), false
		}
		x, y := float64(e.Now)-x0, float64(e.TS)-y0
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	if n < 2 || n*sxx-sx*sx == 0 {
		return 1
	}
	k := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	if math.Abs(k-1) < 1e-3 {
		return 1
	}
	return k
}

// MeasuredThread applies Options' choice rule and returns the TID (0 when
// no thread qualifies).
func (t *Trace) MeasuredThread(o Options) int {
	if o.TID != 0 {
		return o.TID
	}
	owner := map[string]int{} // hrtimer → TID that started it
	tgid := map[int]int{}
	rtPrio := map[int]bool{}
	woken := map[int]int{}
	for _, e := range t.Events {
		if e.TGID >= 0 {
			tgid[e.TID] = e.TGID
		}
		switch {
		case e.Name == "hrtimer_start" && e.Func == "hrtimer_wakeup":
			owner[e.Timer] = e.TID
		case e.Name == "hrtimer_expire_entry" && e.Func == "hrtimer_wakeup" && (o.CPU < 0 || e.CPU == o.CPU):
			if tid, ok := owner[e.Timer]; ok {
				woken[tid]++
			}
		case e.Name == "sched_waking" && e.Prio < 100:
			rtPrio[e.Pid] = true
		}
	}
	best, bestN := 0, 0
	for tid, n := range woken {
		if !rtPrio[tid] || (o.TGID != 0 && tgid[tid] != o.TGID) {
			continue
		}
		if n > bestN || (n == bestN && tid < best) {
			best, bestN = tid, n
		}
	}
	return best
}

// Stats counts what Split saw besides complete wakeups.
type Stats struct {
	TID, TGID int
	// Sleeps is the number of sys_exit of the sleep call; Complete those
	// with the whole chain (start, fire, waking, exit); the rest returned
	// without the thread's timer firing in the trace (deadline already
	// past, a signal, or the trace began mid-sleep).
	Sleeps, Complete int
}
