// Package wakesplit splits each wakeup of a timer-driven thread into the
// kernel's own steps, read from an ftrace text trace (tracefs `trace`,
// record-tgid and irq-info on) of one CPU:
//
//	deadline ─▶ timer fire ─▶ waking ─▶ on CPU ─▶ back in user space
//	 (hrtimer_start        (hrtimer_expire_   (sched_     (sched_switch   (raw_syscalls:sys_exit
//	  softexpires)          entry: now, ts)    waking)     in, ts)         of clock_nanosleep)
//
// The deadline → fire step is in the kernel's CLOCK_MONOTONIC ns (the
// expire event's now minus the timer's softexpires); the others are
// differences of trace timestamps, in whatever trace_clock the trace used
// (x86-tsc counts are converted to ns with a rate fitted from the same
// expire events' now). Besides the steps it counts, per wakeup, what the
// measured thread did and suffered while awake (page faults, system calls,
// preemptions) and which other threads of its process ran on its CPU
// while it slept. Pure: it reads text, never the kernel.
package wakesplit

import (
	"fmt"
	"strconv"
	"strings"
)

// Event is one parsed trace line. TS is the raw trace timestamp (ns for
// ns clocks, counter ticks for x86-tsc/counter). Fields that an event does
// not carry are zero.
type Event struct {
	Comm  string
	TID   int
	TGID  int // -1 when the trace has no record-tgid column or shows "-------"
	CPU   int
	TS    uint64
	Name  string // event name without its system: "sched_switch", "sys_exit", …
	Timer string // hrtimer_*: the hrtimer pointer (hashed or not; only compared)
	Func  string // hrtimer_*: the callback, e.g. hrtimer_wakeup
	Now   int64  // hrtimer_expire_entry: the clock base's now, ns
	Soft  int64  // hrtimer_start: softexpires, ns
	Pid   int    // sched_waking: pid woken; sched_switch: next_pid
	Prio  int    // sched_waking: prio; sched_switch: next_prio
	Prev  int    // sched_switch: prev_pid
	State string // sched_switch: prev_state
	NR    int    // sys_enter/sys_exit: system call number
}

// ParseLine parses one line of tracefs `trace` text. Comment lines ("#")
// and blank lines return ok=false and no error; a line that looks like an
// event but does not parse is an error naming it.
//
// Line shape (record-tgid and irq-info on; either may be off):
//
//	cyclictest-21984   (  21983) [001] d.h1. 1903131595755: sys_exit: NR 230 = 0
func ParseLine(line string) (e Event, ok bool, err error) {
	s := strings.TrimSpace(line)
	if s == "" || s[0] == '#' {
		return e, false, nil
	}
	bad := func(what string) (Event, bool, error) {
		return Event{}, false, fmt.Errorf("trace line %q: %s", line, what)
	}
	// The CPU column "[NNN]" follows the task (and tgid) columns; comm may
	// contain spaces, dashes and brackets, so search from the task's pid.
	lb := strings.Index(s, ") [")
	if lb < 0 {
		lb = strings.Index(s, " [")
	} else {
		lb++
	}
	if lb < 0 {
		return bad("no [cpu] column")
	}
	task, rest := strings.TrimSpace(s[:lb]), s[lb+1:]
	e.TGID = -1
	if i := strings.LastIndexByte(task, '('); i >= 0 && strings.HasSuffix(task, ")") {
		if g, err := strconv.Atoi(strings.TrimSpace(task[i+1 : len(task)-1])); err == nil {
			e.TGID = g
		}
		task = strings.TrimSpace(task[:i])
	}
	dash := strings.LastIndexByte(task, '-')
	if dash < 0 {
		return bad("no comm-pid")
	}
	e.Comm = task[:dash]
	if e.TID, err = strconv.Atoi(task[dash+1:]); err != nil {
		return bad("pid not a number")
	}
	rb := strings.IndexByte(rest, ']')
	if rb < 0 || rest[0] != '[' {
		return bad("no [cpu] column")
	}
	if e.CPU, err = strconv.Atoi(rest[1:rb]); err != nil {
		return bad("cpu not a number")
	}
	f := strings.Fields(rest[rb+1:])
	// Optional irq-info flags ("d.h1."), then "TS:", then "name:".
	i := 0
	if len(f) > 0 && !strings.HasSuffix(f[0], ":") {
		i = 1
	}
	if len(f) < i+2 {
		return bad("no timestamp and event")
	}
	if e.TS, err = parseTS(strings.TrimSuffix(f[i], ":")); err != nil {
		return bad(err.Error())
	}
	e.Name = strings.TrimSuffix(f[i+1], ":")
	if j := strings.IndexByte(e.Name, ':'); j >= 0 { // perf-style "sched:sched_switch"
		e.Name = e.Name[j+1:]
	}
	if err := e.fields(f[i+2:]); err != nil {
		return bad(err.Error())
	}
	return e, true, nil
}

// parseTS reads "1903131595755" (counter) or "652.502802" (sec.usec or
// sec.nsec): the result is ns for the dotted forms.
func parseTS(s string) (uint64, error) {
	sec, frac, dotted := strings.Cut(s, ".")
	v, err := strconv.ParseUint(sec, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q", s)
	}
	if !dotted {
		return v, nil
	}
	if len(frac) > 9 {
		return 0, fmt.Errorf("timestamp %q", s)
	}
	fv, err := strconv.ParseUint(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q", s)
	}
	return v*1e9 + fv, nil
}

// fields fills the event-specific fields from the payload words.
func (e *Event) fields(w []string) error {
	kv := func(key string) string {
		for _, x := range w {
			if v, ok := strings.CutPrefix(x, key+"="); ok {
				return v
			}
		}
		return ""
	}
	num := func(key string) (int64, error) {
		v, err := strconv.ParseInt(kv(key), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %s=%q", e.Name, key, kv(key))
		}
		return v, nil
	}
	var err error
	switch e.Name {
	case "hrtimer_start":
		e.Timer, e.Func = kv("hrtimer"), kv("function")
		e.Soft, err = num("softexpires")
	case "hrtimer_expire_entry":
		e.Timer, e.Func = kv("hrtimer"), kv("function")
		e.Now, err = num("now")
	case "sched_waking", "sched_wakeup":
		var p, pr int64
		if p, err = num("pid"); err == nil {
			pr, err = num("prio")
		}
		e.Pid, e.Prio = int(p), int(pr)
	case "sched_switch":
		err = e.switchFields(w)
	case "sys_enter", "sys_exit":
		if len(w) < 2 || w[0] != "NR" {
			return fmt.Errorf("%s: no NR", e.Name)
		}
		e.NR, err = strconv.Atoi(w[1])
	}
	return err
}

// switchFields parses "prev_comm=… prev_pid=N prev_prio=N prev_state=S ==>
// next_comm=… next_pid=N next_prio=N"; comms may hold spaces, so the
// numeric fields are found by key after the arrow's split.
func (e *Event) switchFields(w []string) error {
	s := strings.Join(w, " ")
	prev, next, ok := strings.Cut(s, " ==> ")
	if !ok {
		return fmt.Errorf("sched_switch: no ==>")
	}
	get := func(part, key string) (int, error) {
		i := strings.LastIndex(part, " "+key+"=")
		if i < 0 {
			return 0, fmt.Errorf("sched_switch: no %s", key)
		}
		v := part[i+len(key)+2:]
		if j := strings.IndexByte(v, ' '); j >= 0 {
			v = v[:j]
		}
		return strconv.Atoi(v)
	}
	var err error
	if e.Prev, err = get(prev, "prev_pid"); err != nil {
		return err
	}
	if e.Pid, err = get(" "+next, "next_pid"); err != nil {
		return err
	}
	if e.Prio, err = get(" "+next, "next_prio"); err != nil {
		return err
	}
	if i := strings.LastIndex(prev, " prev_state="); i >= 0 {
		e.State = prev[i+len(" prev_state="):]
	}
	return nil
}
