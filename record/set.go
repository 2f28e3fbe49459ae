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
// know which); the others hold ns.
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
	// NumClasses counts the classes; it is not one.
	NumClasses
)

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

// Reset clears every recorder of the set, keeping the layouts.
func (s *Set) Reset() {
	for c := range NumClasses {
		if l := s.linear[c]; l != nil {
			l.Reset()
		}
		if h := s.hdr[c]; h != nil {
			h.Reset()
		}
	}
}

// Merge adds o's samples into s, class by class, where both hold the
// recorder. It returns false when a linear layout differs (that class is
// left unchanged; the others are merged). Not for use while either set is
// being written.
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
