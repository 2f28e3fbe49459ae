package record

import (
	"slices"
	"testing"
)

// TestSetEvents checks per-call events: an HDR per event and per-call
// class, RecordEvent reaching exactly one of them, out-of-range indices
// dropped, Reset clearing them and Merge adding them by name.
func TestSetEvents(t *testing.T) {
	s := NewSet(seed)
	if len(s.Events()) != 0 || s.EventHDR(0, CallAll) != nil {
		t.Fatal("a new set has events")
	}
	s.AddEvents([]string{"instructions", "cache-misses"})
	if got := s.Events(); !slices.Equal(got, []string{"instructions", "cache-misses"}) {
		t.Fatalf("Events %v", got)
	}
	s.RecordEvent(0, CallData, 4000)
	s.RecordEvent(1, CallWarm, 2)
	s.RecordEvent(2, CallAll, 1)          // no event 2: dropped
	s.RecordEvent(-1, CallAll, 1)         // dropped
	s.RecordEvent(0, OneWayDelay, 1)      // not a per-call class: dropped
	s.RecordEvent(0, CallAll, EventMax+1) // clamped
	for e := range 2 {
		for c := range NumCallClasses {
			want := int64(0)
			switch {
			case e == 0 && c == CallData, e == 1 && c == CallWarm, e == 0 && c == CallAll:
				want = 1
			}
			if n := s.EventHDR(e, c).Count(); n != want {
				t.Errorf("event %d %s: %d samples, want %d", e, c, n, want)
			}
		}
	}
	if s.EventHDR(0, CallAll).Clamped() != 1 || s.EventHDR(0, CallAll).Max() != EventMax {
		t.Errorf("count above EventMax: clamped %d, max %d", s.EventHDR(0, CallAll).Clamped(), s.EventHDR(0, CallAll).Max())
	}
	if s.EventHDR(0, NumCallClasses) != nil || s.EventHDR(2, CallAll) != nil {
		t.Error("EventHDR out of range returned a recorder")
	}

	o := NewSet(seed)
	o.AddEvents([]string{"instructions", "cache-misses"})
	o.RecordEvent(0, CallData, 5000)
	if !s.Merge(o) || s.EventHDR(0, CallData).Count() != 2 {
		t.Errorf("Merge of matching events: data count %d, want 2", s.EventHDR(0, CallData).Count())
	}
	other := NewSet(seed)
	other.AddEvents([]string{"branch-misses"})
	other.RecordEvent(0, CallData, 9)
	if s.Merge(other) || s.EventHDR(0, CallData).Count() != 2 {
		t.Error("Merge of a set with another event: merged, or reported ok")
	}
	s.Reset()
	if s.EventHDR(0, CallData).Count() != 0 || len(s.Events()) != 2 {
		t.Errorf("after Reset: %d samples, events %v", s.EventHDR(0, CallData).Count(), s.Events())
	}
	if a := testing.AllocsPerRun(1000, func() { s.RecordEvent(1, CallRest, 17) }); a != 0 {
		t.Errorf("RecordEvent allocs %v, want 0", a)
	}
}
