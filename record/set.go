package record

import (
	"strconv"
	"time"
)

// Class names one measured quantity of a Set. A class has a Linear
// recorder in the set's Layout, an HDR recorder, or both (see the classes
// table, the one list of them); Set.Record writes a sample into each.
type Class uint8

// The classes of a reader's Set. Per-call classes hold the cost of one recv
// call in clock ticks (rt.Ticks, TSC or CLOCK_MONOTONIC ns; the set does not
// know which), the two drift controls the cost of one control call in the
// same ticks; the others hold ns.
const (
	// CallAll is every measured recv call: linear (the seed's table) and
	// HDR (percentiles).
	CallAll Class = iota
	// CallData is the calls that returned a message (linear).
	CallData
	// CallEAGAIN is the calls that found the socket empty (linear).
	CallEAGAIN
	// CallWarm is the EAGAIN calls on a socket that had returned data
	// earlier in the same drain (linear).
	CallWarm
	// CallCold is the EAGAIN calls on a socket that had nothing this tick
	// (linear).
	CallCold
	// CallFirst is the first calls of each tick, right after the wakeup
	// (linear; the drain decides how many).
	CallFirst
	// CallRest is the later calls of each tick (linear).
	CallRest
	// OneWayDelay is each message's send → receive delay in ns (HDR).
	OneWayDelay
	// WakeupLatency is each tick's wakeup latency in ns (HDR).
	WakeupLatency
	// DrainTime is each tick's drain time in ns (HDR).
	DrainTime
	// NullSyscall is each drift-control null system call (getppid(2),
	// timed after the tick's drain like a recv call) in clock ticks (HDR).
	NullSyscall
	// UserLoop is each run of the drift control's fixed user-space loop
	// (probe.UserLoopIters dependent multiply-adds) in clock ticks (HDR).
	UserLoop
	// CacheLine is each drift-control read of a cache line another CPU
	// wrote since the last (probe.PingLines) in clock ticks (HDR).
	CacheLine
	// MemChase is each drift-control run of probe.ChaseSteps dependent
	// loads over a buffer larger than the L2 cache, in clock ticks (HDR).
	MemChase
	// RecvData is each recv drift-control call that read the datagram the
	// reader had just sent to its own socket (probe's xcontrols.go), in
	// clock ticks (HDR); RecvEAGAIN each one that found that socket empty.
	RecvData
	RecvEAGAIN
	// NumClasses counts the classes; it is not one.
	NumClasses
)

// NumCallClasses counts the per-call classes, CallAll through CallRest:
// the classes a per-call event count (AddEvents) is recorded in.
const NumCallClasses = CallRest + 1

// EventMax is the largest per-call event count an event's HDRs hold (16.7
// million, say instructions in one recv call: some ms of work); larger
// counts are recorded as EventMax and counted in HDR.Clamped.
const EventMax = 1 << 24

// classes is the one list of the classes and their recorders. Adding a
// class is a constant above and a row here.
var classes = [NumClasses]struct {
	name   string
	linear bool  // a Linear in the set's Layout
	hdrMax int64 // > 0: an HDR for values in [0, hdrMax]
}{
	CallAll:       {"call_all", true, 1 << 40},
	CallData:      {"call_data", true, 0},
	CallEAGAIN:    {"call_eagain", true, 0},
	CallWarm:      {"call_warm", true, 0},
	CallCold:      {"call_cold", true, 0},
	CallFirst:     {"call_first", true, 0},
	CallRest:      {"call_rest", true, 0},
	OneWayDelay:   {"one_way_delay", false, int64(10 * time.Second)},
	WakeupLatency: {"wakeup_latency", false, int64(10 * time.Second)},
	DrainTime:     {"drain_time", false, int64(10 * time.Second)},
	NullSyscall:   {"null_syscall", false, 1 << 40},
	UserLoop:      {"user_loop", false, 1 << 40},
	CacheLine:     {"cache_line", false, 1 << 40},
	MemChase:      {"mem_chase", false, 1 << 40},
	RecvData:      {"recv_data", false, 1 << 40},
	RecvEAGAIN:    {"recv_eagain", false, 1 << 40},
}

// String returns the class's name in snake case ("call_eagain"), or
// "class(N)" for a number that is not a class.
func (c Class) String() string {
	if c >= NumClasses {
		return "class(" + strconv.Itoa(int(c)) + ")"
	}
	return classes[c].name
}

// Layout is the bucket layout of a set's Linear recorders: Width-wide
// buckets from Origin, with every value ≥ Overflow in the overflow bucket
// (see NewLinear).
type Layout struct {
	Width, Origin, Overflow uint64
}

// Set is the recorders of one reader, indexed by Class: what the drain and
// the loop of one real-time thread record into, and what the writer
// resets, merges and snapshots. Single writer, no lock; Record allocates
// nothing and has no preemption point. A class left out of the set (see
// NewSetOf) is not recorded.
type Set struct {
	linear [NumClasses]*Linear
	hdr    [NumClasses]*HDR
	events []eventRecorders // AddEvents
}

// eventRecorders are one per-call event's HDRs, by per-call class.
type eventRecorders struct {
	name string
	hdr  [NumCallClasses]*HDR
}

// AddEvents gives the set, for each named per-call event (a hardware
// counter read around every recv call: "instructions", "cache-misses", …),
// an HDR of the event's count per call (0 to EventMax) for each per-call
// class, event i recorded with RecordEvent(i, …). It replaces the events
// added before. Allocates (about 120 KiB per event and class, every page
// written once): call it before the set is recorded into.
func (s *Set) AddEvents(names []string) {
	s.events = make([]eventRecorders, len(names))
	for i, n := range names {
		s.events[i].name = n
		for c := range NumCallClasses {
			s.events[i].hdr[c] = NewHDR(EventMax)
		}
	}
}

// Events names the set's per-call events, in RecordEvent order.
func (s *Set) Events() []string {
	n := make([]string, len(s.events))
	for i, e := range s.events {
		n[i] = e.name
	}
	return n
}

// RecordEvent adds count v of event e (an index into Events) to per-call
// class c's HDR. An e or c out of range is dropped. No allocation, no lock,
// no preemption point.
//
//go:nosplit
func (s *Set) RecordEvent(e int, c Class, v uint64) {
	if e < 0 || e >= len(s.events) || c >= NumCallClasses {
		return
	}
	s.events[e].hdr[c].Record(v)
}

// EventHDR returns event e's HDR of per-call class c, nil when there is
// none.
func (s *Set) EventHDR(e int, c Class) *HDR {
	if e < 0 || e >= len(s.events) || c >= NumCallClasses {
		return nil
	}
	return s.events[e].hdr[c]
}

// NewSet returns a set holding every class, its linear recorders in
// layout l.
func NewSet(l Layout) *Set {
	s := &Set{}
	for c := range NumClasses {
		s.add(c, l)
	}
	return s
}

// NewSetOf returns a set holding only the classes listed (each in layout
// l); samples of the other classes are dropped by Record and those classes'
// accessors return nil. Classes ≥ NumClasses are ignored.
func NewSetOf(l Layout, cs []Class) *Set {
	s := &Set{}
	for _, c := range cs {
		if c < NumClasses {
			s.add(c, l)
		}
	}
	return s
}

func (s *Set) add(c Class, l Layout) {
	if classes[c].linear {
		s.linear[c] = NewLinear(l.Width, l.Origin, l.Overflow)
	}
	if m := classes[c].hdrMax; m > 0 {
		s.hdr[c] = NewHDR(m)
	}
}

// Record adds sample v to class c's recorders. No allocation, no lock, no
// preemption point.
//
//go:nosplit
func (s *Set) Record(c Class, v uint64) {
	if l := s.linear[c]; l != nil {
		l.Record(v)
	}
	if h := s.hdr[c]; h != nil {
		h.Record(v)
	}
}

// RecordSigned adds v to class c's recorders, clamping negatives to 0.
//
//go:nosplit
func (s *Set) RecordSigned(c Class, v int64) {
	if v < 0 {
		v = 0
	}
	s.Record(c, uint64(v))
}

// Linear returns class c's linear recorder, nil when it has none.
func (s *Set) Linear(c Class) *Linear {
	if c >= NumClasses {
		return nil
	}
	return s.linear[c]
}

// HDR returns class c's HDR recorder, nil when it has none.
func (s *Set) HDR(c Class) *HDR {
	if c >= NumClasses {
		return nil
	}
	return s.hdr[c]
}

// Reset clears every recorder of the set, keeping the layouts and events.
func (s *Set) Reset() {
	for c := range NumClasses {
		if l := s.linear[c]; l != nil {
			l.Reset()
		}
		if h := s.hdr[c]; h != nil {
			h.Reset()
		}
	}
	for i := range s.events {
		for _, h := range s.events[i].hdr {
			h.Reset()
		}
	}
}

// Merge adds o's samples into s, class by class, where both hold the
// recorder, and event by event where both have an event of that name at
// the same index. It returns false when a linear layout differs or o has
// an event s lacks (those are left unchanged; the others are merged). Not
// for use while either set is being written.
func (s *Set) Merge(o *Set) bool {
	ok := true
	for c := range NumClasses {
		if l, ol := s.linear[c], o.linear[c]; l != nil && ol != nil {
			ok = l.Merge(ol) && ok
		}
		if h, oh := s.hdr[c], o.hdr[c]; h != nil && oh != nil {
			h.Merge(oh)
		}
	}
	for i := range o.events {
		if i >= len(s.events) || s.events[i].name != o.events[i].name {
			ok = false
			continue
		}
		for c, h := range s.events[i].hdr {
			h.Merge(o.events[i].hdr[c])
		}
	}
	return ok
}

// Snapshot copies class c's linear recorder into a Snapshot whose unit is
// unit; a class without one gives the zero Snapshot (no counts). It
// allocates: call it off the real-time thread.
func (s *Set) Snapshot(c Class, unit string) Snapshot {
	l := s.Linear(c)
	if l == nil {
		return Snapshot{}
	}
	return l.Snapshot(unit)
}
