package wakesplit

// chain follows the measured thread through the trace, one handler per
// kernel event (rtla timerlat_aa's shape).
type chain struct {
	t     *Trace
	tid   int
	tgid  int
	cpu   int
	nr    int
	timer string // the thread's armed hrtimer_wakeup timer
	soft  int64  // its softexpires

	// the wakeup in progress
	fired                  bool
	fire, waking, oncpu    uint64
	irqExit                uint64
	now                    int64
	fromIdle               bool
	prev                   string
	prevTID                int
	awake                  bool // between sys_exit and the next sys_enter of the sleep
	cur                    *Wakeup
	siblingRuns, otherRuns int
	tgidOf                 map[int]int // TID → TGID over the whole trace

	out   []Wakeup
	stats Stats
}

// Split returns every complete wakeup of the measured thread (chosen by
// o, see Options) in trace order, and what it counted.
func (t *Trace) Split(o Options) ([]Wakeup, Stats) {
	c := &chain{t: t, tid: t.MeasuredThread(o), cpu: o.CPU, nr: o.NR}
	if c.nr == 0 {
		c.nr = SysClockNanosleep
	}
	c.stats.TID = c.tid
	c.tgidOf = map[int]int{}
	for _, e := range t.Events {
		if e.TGID >= 0 {
			c.tgidOf[e.TID] = e.TGID
		}
	}
	c.tgid = c.tgidOf[c.tid]
	c.stats.TGID = c.tgid
	if c.tid == 0 {
		return nil, c.stats
	}
	for i := range t.Events {
		c.event(&t.Events[i])
	}
	return c.out, c.stats
}

func (c *chain) ns(ticks uint64) float64 { return float64(ticks) / c.t.HzPerNs }

func (c *chain) event(e *Event) {
	if c.cpu >= 0 && e.CPU != c.cpu && e.TID != c.tid {
		return
	}
	switch e.Name {
	case "hrtimer_start":
		c.hrtimerStart(e)
	case "hrtimer_expire_entry":
		c.expire(e)
	case "sched_waking":
		if e.Pid == c.tid && c.fired && c.waking == 0 {
			c.waking = e.TS
		}
	case "local_timer_exit":
		if c.waking != 0 && c.oncpu == 0 && c.irqExit == 0 {
			c.irqExit = e.TS
		}
	case "sched_switch":
		c.switched(e)
	case "sys_enter":
		if e.TID != c.tid {
			return
		}
		if e.NR == c.nr {
			c.awake, c.cur = false, nil
			c.siblingRuns, c.otherRuns = 0, 0
		} else if c.cur != nil {
			c.cur.Syscalls++
		}
	case "sys_exit":
		if e.TID == c.tid && e.NR == c.nr {
			c.sleepExit(e)
		}
	case "page_fault_user", "page_fault_kernel":
		if e.TID == c.tid && c.cur != nil {
			c.cur.Faults++
		}
	}
}

func (c *chain) hrtimerStart(e *Event) {
	if e.TID == c.tid && e.Func == "hrtimer_wakeup" {
		c.timer, c.soft = e.Timer, e.Soft
	}
}

func (c *chain) expire(e *Event) {
	if e.Timer != c.timer || e.Func != "hrtimer_wakeup" || c.timer == "" {
		return
	}
	c.fired, c.fire, c.now = true, e.TS, e.Now
	c.waking, c.oncpu, c.irqExit = 0, 0, 0
	c.fromIdle = e.TID == 0
	c.prev, c.prevTID = e.Comm, e.TID
	c.timer = ""
}

func (c *chain) switched(e *Event) {
	if e.Pid == c.tid {
		if c.waking != 0 && c.oncpu == 0 {
			c.oncpu = e.TS
		}
		return
	}
	if e.Prev == c.tid && c.cur != nil && (e.State == "R" || e.State == "R+") {
		c.cur.Preempted++
	}
	if !c.awake && e.Pid != 0 {
		// Someone else runs on the thread's CPU while it sleeps.
		if c.tgid > 0 && c.sameProcess(e.Pid) {
			c.siblingRuns++
		} else {
			c.otherRuns++
		}
	}
}

// sameProcess reports whether tid belongs to the measured thread's
// process, from the tgid column of tid's own events.
func (c *chain) sameProcess(tid int) bool {
	return c.tgidOf[tid] == c.tgid
}

func (c *chain) sleepExit(e *Event) {
	c.stats.Sleeps++
	c.awake = true
	c.cur = nil
	if !c.fired || c.waking == 0 {
		c.fired = false
		return
	}
	w := Wakeup{DeadlineNs: c.soft, ToFire: float64(c.now - c.soft), ToWaking: c.ns(c.waking - c.fire),
		FromIdle: c.fromIdle, Prev: c.prev, SiblingRuns: c.siblingRuns, OtherRuns: c.otherRuns}
	on := c.oncpu
	if on == 0 {
		on = c.irqExit
	}
	if on == 0 || on > e.TS {
		on = e.TS
	}
	w.ToOnCPU, w.ToUser = c.ns(on-c.waking), c.ns(e.TS-on)
	switch {
	case c.fromIdle:
		w.Prev, w.Class = "<idle>", ClassIdle
	case c.prevTID == c.tid:
		w.Class = ClassSelf
	case c.sameProcess(c.prevTID):
		w.Class = ClassOwn
	default:
		w.Class = ClassOther
	}
	c.out = append(c.out, w)
	c.cur = &c.out[len(c.out)-1]
	c.stats.Complete++
	c.fired = false
}
