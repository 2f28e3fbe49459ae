package record

import (
	"fmt"
	"testing"
)

var seed = Layout{Width: 128, Origin: 64, Overflow: 8256}

// TestSetClasses checks the class table: per-call classes are linear
// (CallAll also HDR), the per-message, per-tick and drift-control ones HDR only, and every
// class has a distinct name.
func TestSetClasses(t *testing.T) {
	s := NewSet(seed)
	names := map[string]Class{}
	for c := range NumClasses {
		name := c.String()
		if prev, dup := names[name]; dup || name == "" {
			t.Errorf("class %d named %q (also class %d)", c, name, prev)
		}
		names[name] = c
		perCall := c <= CallRest
		if (s.Linear(c) != nil) != perCall {
			t.Errorf("%s: linear %v, want %v", c, s.Linear(c) != nil, perCall)
		}
		if wantHDR := !perCall || c == CallAll; (s.HDR(c) != nil) != wantHDR {
			t.Errorf("%s: HDR %v, want %v", c, s.HDR(c) != nil, wantHDR)
		}
	}
	if got := NumClasses.String(); got != fmt.Sprintf("class(%d)", NumClasses) {
		t.Errorf("NumClasses.String() = %q", got)
	}
	if s.Linear(NumClasses) != nil || s.HDR(NumClasses+3) != nil {
		t.Error("accessor past the table returned a recorder")
	}
}

// TestSetRecord checks that one Record reaches every recorder of its class
// and no other class, and RecordSigned clamps negatives.
func TestSetRecord(t *testing.T) {
	s := NewSet(seed)
	s.Record(CallAll, 1500)
	s.Record(CallAll, 9000)
	s.RecordSigned(WakeupLatency, -5)
	s.RecordSigned(WakeupLatency, 2500)
	if l := s.Linear(CallAll).Snapshot("ticks"); l.Total != 2 || l.OverflowCount != 1 || l.Max != 9000 {
		t.Errorf("CallAll linear %+v; want 2 samples, 1 overflow, max 9000", l)
	}
	if h := s.HDR(CallAll); h.Count() != 2 || h.Max() != 9000 {
		t.Errorf("CallAll HDR count %d max %d; want 2, 9000", h.Count(), h.Max())
	}
	if h := s.HDR(WakeupLatency); h.Count() != 2 || h.Min() != 0 || h.Max() != 2500 {
		t.Errorf("WakeupLatency count %d min %d max %d; want 2, 0, 2500", h.Count(), h.Min(), h.Max())
	}
	for c := range NumClasses {
		if c == CallAll || c == WakeupLatency {
			continue
		}
		if l := s.Linear(c); l != nil && l.Total() != 0 {
			t.Errorf("%s linear got %d samples", c, l.Total())
		}
		if h := s.HDR(c); h != nil && h.Count() != 0 {
			t.Errorf("%s HDR got %d samples", c, h.Count())
		}
	}
}

// TestSetOf checks a partial set: the classes left out are dropped, not
// recorded elsewhere.
func TestSetOf(t *testing.T) {
	s := NewSetOf(seed, []Class{CallData, NumClasses + 1})
	s.Record(CallData, 100)
	s.Record(CallWarm, 100)
	s.Record(DrainTime, 100)
	if s.Linear(CallData).Total() != 1 {
		t.Errorf("CallData %d samples, want 1", s.Linear(CallData).Total())
	}
	if s.Linear(CallWarm) != nil || s.HDR(DrainTime) != nil || s.HDR(CallData) != nil {
		t.Error("classes not asked for were allocated")
	}
	if got := s.Snapshot(CallWarm, "ticks"); got.Total != 0 || got.Counts != nil {
		t.Errorf("Snapshot of a missing class = %+v, want zero", got)
	}
}

// TestSetResetMerge checks Merge adds class by class and Reset empties
// every recorder, keeping the layouts.
func TestSetResetMerge(t *testing.T) {
	a, b := NewSet(seed), NewSet(seed)
	a.Record(CallEAGAIN, 1000)
	b.Record(CallEAGAIN, 2000)
	b.Record(OneWayDelay, 7)
	if !a.Merge(b) {
		t.Fatal("same layout refused")
	}
	if got := a.Snapshot(CallEAGAIN, "ticks"); got.Total != 2 || got.Sum != 3000 || got.Min != 1000 || got.Max != 2000 {
		t.Errorf("merged CallEAGAIN %+v", got)
	}
	if a.HDR(OneWayDelay).Count() != 1 || b.HDR(OneWayDelay).Count() != 1 {
		t.Error("Merge did not add OneWayDelay, or changed its source")
	}
	if NewSet(Layout{Width: 64, Overflow: 1024}).Merge(a) {
		t.Error("different layout merged without saying so")
	}
	a.Reset()
	for c := range NumClasses {
		if l := a.Linear(c); l != nil && (l.Total() != 0 || len(l.Snapshot("").Counts) != len(b.Linear(c).Snapshot("").Counts)) {
			t.Errorf("%s after Reset: %d samples, layout changed", c, l.Total())
		}
		if h := a.HDR(c); h != nil && h.Count() != 0 {
			t.Errorf("%s HDR after Reset: %d samples", c, h.Count())
		}
	}
}

func TestSetZeroAllocs(t *testing.T) {
	s := NewSet(seed)
	var v uint64
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Record(CallAll)", func() { v += 97; s.Record(CallAll, v) }},
		{"Record(CallCold)", func() { v += 97; s.Record(CallCold, v) }},
		{"RecordSigned(DrainTime)", func() { v += 97; s.RecordSigned(DrainTime, int64(v)) }},
	} {
		if a := testing.AllocsPerRun(1000, tc.f); a != 0 {
			t.Errorf("%s allocs %v per call, want 0", tc.name, a)
		}
	}
}

// BenchmarkSetRecord compares a recv call's recording through the Set with
// the same records made on the recorders directly.
func BenchmarkSetRecord(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		l, h, d := NewLinear(128, 64, 8256), NewHDR(1<<40), NewLinear(128, 64, 8256)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			v := uint64(i) & 0x3fff
			l.Record(v)
			h.Record(v)
			d.Record(v)
		}
	})
	b.Run("set", func(b *testing.B) {
		s := NewSet(seed)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			v := uint64(i) & 0x3fff
			s.Record(CallAll, v)
			s.Record(CallData, v)
		}
	})
}
