package sysinfo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/results"
)

// KernelEventKind and KernelEvent are the results types a KernelWatch
// reports (results.KernelEventKind, results.KernelEvent): the kernel's
// clocksource switches, unstable clocksource or TSC, RT throttling.
type (
	KernelEventKind = results.KernelEventKind
	KernelEvent     = results.KernelEvent
)

// The kinds of kernel events, as results names them.
const (
	ClocksourceSwitch   = results.ClocksourceSwitch
	ClocksourceUnstable = results.ClocksourceUnstable
	TSCUnstable         = results.TSCUnstable
	RTThrottled         = results.RTThrottled
)

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
