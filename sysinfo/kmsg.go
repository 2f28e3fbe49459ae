package sysinfo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// KernelEventKind says what a kernel event means for a run.
type KernelEventKind string

// Kernel events a KernelWatch reports. Each one makes the measured run
// something other than the run asked for.
const (
	// ClocksourceSwitch: the kernel changed its clocksource ("clocksource:
	// Switched to clocksource X", kernel/time/clocksource.c), or
	// current_clocksource changed between two polls.
	ClocksourceSwitch KernelEventKind = "clocksource_switch"
	// ClocksourceUnstable: the clocksource watchdog marked a clocksource
	// unstable ("clocksource: timekeeping watchdog on CPU3: Marking
	// clocksource 'tsc' as unstable because the skew is too large:";
	// before 4.x "Clocksource tsc unstable (delta = … ns)").
	ClocksourceUnstable KernelEventKind = "clocksource_unstable"
	// TSCUnstable: x86 gave up on the TSC ("tsc: Marking TSC unstable due
	// to clocksource watchdog", "TSC found unstable after boot, …",
	// arch/x86/kernel/tsc.c).
	TSCUnstable KernelEventKind = "tsc_unstable"
	// RTThrottled: RT throttling stopped real-time threads ("sched: RT
	// throttling activated", kernel/sched/rt.c). The kernel prints it
	// once per boot (printk_deferred_once): a later throttling in the same
	// boot is not logged.
	RTThrottled KernelEventKind = "rt_throttling"
)

// KernelEvent is one kernel event seen during a watch.
type KernelEvent struct {
	Kind KernelEventKind `json:"kind"`
	// At is when it happened, from the watch start (KernelWatchConfig.Start):
	// the kernel log record's timestamp (local_clock, 0.4 ms behind
	// CLOCK_MONOTONIC on this project's machine), kept within the window
	// in which the record must have been logged (after the previous poll
	// found the log empty, before this poll read it; never before 0), for
	// local_clock drifts from CLOCK_MONOTONIC over a long uptime. A switch
	// seen only in sysfs is timed by the poll that saw it.
	At time.Duration `json:"at_ns"`
	// From and To are the clocksources before and after a switch (From ""
	// when unknown); Clocksource names the one marked unstable.
	From        string `json:"from,omitempty"`
	To          string `json:"to,omitempty"`
	Clocksource string `json:"clocksource,omitempty"`
	// Source is "kmsg" (the kernel log) or "sysfs" (a change of
	// current_clocksource seen by polling it, with no log record).
	Source string `json:"source"`
	// Msg is the kernel's log message (or what the poll saw).
	Msg string `json:"msg"`
}

// kmsgRecord is one /dev/kmsg record (Documentation/ABI/testing/dev-kmsg):
// "<prio>,<seq>,<usec>,<flags>[,<more>];<message>\n" then optional
// " KEY=value\n" continuation lines.
type kmsgRecord struct {
	Facility, Level int
	Seq             uint64
	Usec            int64 // local_clock at printk, µs since boot
	Msg             string
}

// parseKmsg parses one /dev/kmsg record. The message is unescaped (the
// kernel writes bytes outside printable ASCII as \xNN); continuation lines
// are dropped.
func parseKmsg(b []byte) (kmsgRecord, error) {
	var r kmsgRecord
	s := string(b)
	head, msg, ok := strings.Cut(s, ";")
	if !ok {
		return r, errors.New("kmsg record without ';'")
	}
	f := strings.Split(head, ",")
	if len(f) < 4 {
		return r, fmt.Errorf("kmsg record prefix %q: want prio,seq,usec,flags", head)
	}
	prio, err1 := strconv.Atoi(f[0])
	seq, err2 := strconv.ParseUint(f[1], 10, 64)
	usec, err3 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil || prio < 0 || usec < 0 {
		return r, fmt.Errorf("kmsg record prefix %q: %v", head, err)
	}
	msg, _, _ = strings.Cut(msg, "\n")
	r.Facility, r.Level, r.Seq, r.Usec, r.Msg = prio>>3, prio&7, seq, usec, unescapeKmsg(msg)
	return r, nil
}

// unescapeKmsg turns the kernel's \xNN escapes back into bytes.
func unescapeKmsg(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// classifyKmsg maps a kernel message to an event (ok false: not one of
// ours). Only the kernel's own records (facility 0) count: user space can
// write to /dev/kmsg too.
func classifyKmsg(r kmsgRecord) (e KernelEvent, ok bool) {
	if r.Facility != 0 {
		return e, false
	}
	m := r.Msg
	e = KernelEvent{Source: "kmsg", Msg: m}
	switch {
	case strings.Contains(m, "Switched to clocksource "):
		_, e.To, _ = strings.Cut(m, "Switched to clocksource ")
		e.Kind = ClocksourceSwitch
	case strings.Contains(m, "Switching to clocksource "): // before 2.6.34
		_, e.To, _ = strings.Cut(m, "Switching to clocksource ")
		e.Kind = ClocksourceSwitch
	case strings.Contains(m, "Marking clocksource '") && strings.Contains(m, "' as unstable"):
		_, rest, _ := strings.Cut(m, "Marking clocksource '")
		e.Clocksource, _, _ = strings.Cut(rest, "'")
		e.Kind = ClocksourceUnstable
	case strings.HasPrefix(m, "Clocksource ") && strings.Contains(m, " unstable ("): // before 4.x
		e.Clocksource, _, _ = strings.Cut(strings.TrimPrefix(m, "Clocksource "), " ")
		e.Kind = ClocksourceUnstable
	case strings.Contains(m, "Marking TSC unstable"), strings.HasPrefix(m, "TSC found unstable"):
		e.Kind, e.Clocksource = TSCUnstable, "tsc"
	case strings.Contains(m, "RT throttling activated"):
		e.Kind = RTThrottled
	default:
		return e, false
	}
	e.To = strings.TrimSpace(e.To)
	return e, true
}

// kernelTracker turns kmsg records and current_clocksource polls into
// events; times are CLOCK_MONOTONIC ns, start is the watch's zero.
type kernelTracker struct {
	start   int64
	cur     string // current clocksource as last known
	floor   int64  // when a kmsg read last found nothing new: later records were logged after it
	events  []KernelEvent
	records int // kmsg records read
	lost    int // read errors EPIPE: records overwritten before they were read
}

// maxKernelEvents bounds the events kept (a flapping clocksource).
const maxKernelEvents = 1000

func (t *kernelTracker) add(e KernelEvent) {
	if len(t.events) < maxKernelEvents {
		t.events = append(t.events, e)
	}
}

// at converts a kernel timestamp (µs) to a watch time. The record was
// logged after floor (when a read found the log empty) and before seen
// (when it was read), so the timestamp is kept within that window: local_clock
// is not NTP-slewed and drifts from CLOCK_MONOTONIC over a long uptime.
func (t *kernelTracker) at(usec, seen int64) time.Duration {
	at := min(max(usec*1000, t.floor), seen)
	return time.Duration(max(at-t.start, 0))
}

// kmsg handles one record read at seen.
func (t *kernelTracker) kmsg(r kmsgRecord, seen int64) {
	t.records++
	e, ok := classifyKmsg(r)
	if !ok {
		return
	}
	e.At = t.at(r.Usec, seen)
	if e.Kind == ClocksourceSwitch {
		if e.To == t.cur {
			// Seen by a poll first: the log record has the better time.
			for i := len(t.events) - 1; i >= 0; i-- {
				if p := &t.events[i]; p.Kind == ClocksourceSwitch && p.Source == "sysfs" && p.To == e.To {
					p.At, p.Source, p.Msg = e.At, e.Source, e.Msg
					return
				}
			}
		}
		e.From, t.cur = t.cur, e.To
	}
	t.add(e)
}

// sysfs handles a current_clocksource read at seen.
func (t *kernelTracker) sysfs(cur string, seen int64) {
	if cur == "" || cur == t.cur {
		return
	}
	t.add(KernelEvent{Kind: ClocksourceSwitch, At: time.Duration(max(seen-t.start, 0)), From: t.cur, To: cur,
		Source: "sysfs", Msg: "current_clocksource is " + cur})
	t.cur = cur
}

// InvalidReason turns events into the reason a trial is not the one asked
// for, "" when there are none: "invalid: clocksource changed (tsc → hpet
// at 12.3 s); TSC marked unstable at 12.3 s; RT throttling activated at
// 40.0 s". Times are from the watch start, one decimal of a second.
func InvalidReason(events []KernelEvent) string {
	var switches, rest []string
	for _, e := range events {
		at := fmt.Sprintf("%.1f s", e.At.Seconds())
		switch e.Kind {
		case ClocksourceSwitch:
			from := e.From
			if from == "" {
				from = "?"
			}
			switches = append(switches, fmt.Sprintf("%s → %s at %s", from, e.To, at))
		case ClocksourceUnstable:
			rest = append(rest, fmt.Sprintf("clocksource %s marked unstable at %s", e.Clocksource, at))
		case TSCUnstable:
			rest = append(rest, "TSC marked unstable at "+at)
		case RTThrottled:
			rest = append(rest, "RT throttling activated at "+at)
		}
	}
	if len(switches) > 0 {
		rest = append([]string{"clocksource changed (" + strings.Join(switches, ", ") + ")"}, rest...)
	}
	if len(rest) == 0 {
		return ""
	}
	return "invalid: " + strings.Join(rest, "; ")
}
