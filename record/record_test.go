package record

import (
	"math"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
)

// The seed's layout: 128-wide buckets from 64, overflow at 8256.
const (
	width    = 128
	origin   = 64
	overflow = 8256
)

func TestLinearBucketing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      uint64
		bucket int // -1 = overflow
	}{
		{"zero lands in the below-origin bucket", 0, 0},
		{"origin-1 is still below origin", origin - 1, 0},
		{"origin opens bucket 1", origin, 1},
		{"origin+width-1 closes bucket 1", origin + width - 1, 1},
		{"origin+width opens bucket 2", origin + width, 2},
		{"seed row 1472", 1472, 12},
		{"overflow-1 is the last bucket (8128)", overflow - 1, 64},
		{"overflow edge counts as overflow", overflow, -1},
		{"huge value counts as overflow", math.MaxUint64, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewLinear(width, origin, overflow)
			h.Record(tc.v)
			s := h.Snapshot("ticks")
			want := make([]uint64, 65)
			var over uint64
			if tc.bucket < 0 {
				over = 1
			} else {
				want[tc.bucket] = 1
			}
			if diff := cmp.Diff(want, s.Counts); diff != "" {
				t.Errorf("Counts (-want +got):\n%s", diff)
			}
			if s.OverflowCount != over || s.Total != 1 || s.Min != tc.v || s.Max != tc.v {
				t.Errorf("overflow %d total %d min %d max %d, want %d 1 %d %d", s.OverflowCount, s.Total, s.Min, s.Max, over, tc.v, tc.v)
			}
			if tc.bucket >= 0 {
				lo := s.Lower(tc.bucket)
				if tc.v < lo || (tc.bucket > 0 && tc.v >= lo+width) {
					t.Errorf("value %d outside its bucket's range [%d, %d)", tc.v, lo, lo+width)
				}
			}
		})
	}
}

func TestNewLinearLayout(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		width, origin, overflow uint64
		wantOverflow            uint64
		wantBuckets             int
	}{
		{"seed layout", 128, 64, 8256, 8256, 65},
		{"overflow rounded up to a bucket edge", 128, 64, 8200, 8256, 65},
		{"zero width becomes 1", 0, 0, 4, 4, 5},
		{"overflow at or below origin gives one bucket", 10, 100, 50, 110, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewLinear(tc.width, tc.origin, tc.overflow).Snapshot("")
			if s.Overflow != tc.wantOverflow || len(s.Counts) != tc.wantBuckets {
				t.Errorf("overflow %d, %d buckets; want %d, %d", s.Overflow, len(s.Counts), tc.wantOverflow, tc.wantBuckets)
			}
		})
	}
}

func TestLinearReset(t *testing.T) {
	h := NewLinear(width, origin, overflow)
	h.Record(100)
	h.Record(1 << 40)
	h.Reset()
	want := NewLinear(width, origin, overflow).Snapshot("ticks")
	if diff := cmp.Diff(want, h.Snapshot("ticks")); diff != "" {
		t.Errorf("after Reset (-want +got):\n%s", diff)
	}
}

// TestLinearMean: the mean is the exact sum over the count, as the
// snapshot's, with no allocation; 0 when empty.
func TestLinearMean(t *testing.T) {
	h := NewLinear(width, origin, overflow)
	if h.Mean() != 0 {
		t.Errorf("empty mean %v", h.Mean())
	}
	for _, v := range []uint64{10, 100, 1 << 20} {
		h.Record(v)
	}
	if m, want := h.Mean(), float64(10+100+1<<20)/3; m != want || m != h.Snapshot("").Mean() {
		t.Errorf("mean %v, want %v (snapshot %v)", m, want, h.Snapshot("").Mean())
	}
	if a := testing.AllocsPerRun(10, func() { h.Mean() }); a != 0 {
		t.Errorf("Mean allocs %v", a)
	}
}

func TestSnapshotLower(t *testing.T) {
	s := NewLinear(width, origin, overflow).Snapshot("")
	for _, tc := range []struct {
		i    int
		want uint64
	}{
		{0, 0},     // [0, origin)
		{1, 64},    // first full bucket
		{12, 1472}, // the seed's first row
		{64, 8128}, // the seed's last row before 8256+
	} {
		if got := s.Lower(tc.i); got != tc.want {
			t.Errorf("Lower(%d) = %d, want %d", tc.i, got, tc.want)
		}
	}
}

func TestSnapshotMean(t *testing.T) {
	h := NewLinear(width, origin, overflow)
	if m := h.Snapshot("").Mean(); m != 0 {
		t.Errorf("empty Mean = %v, want 0", m)
	}
	for _, v := range []uint64{100, 200, 9000} {
		h.Record(v)
	}
	if m := h.Snapshot("").Mean(); m != 3100 {
		t.Errorf("Mean = %v, want 3100 (overflow samples count at their value)", m)
	}
}

func TestSnapshotAdd(t *testing.T) {
	a, b := NewLinear(width, origin, overflow), NewLinear(width, origin, overflow)
	a.Record(100)
	a.Record(9000)
	b.Record(10)
	b.Record(2000)
	b.Record(20000)
	sa, sb := a.Snapshot("ticks"), b.Snapshot("ticks")

	both := NewLinear(width, origin, overflow)
	for _, v := range []uint64{100, 9000, 10, 2000, 20000} {
		both.Record(v)
	}
	got, ok := sa.Add(sb)
	if !ok {
		t.Fatal("Add of equal layouts not ok")
	}
	if diff := cmp.Diff(both.Snapshot("ticks"), got); diff != "" {
		t.Errorf("Add (-want +got):\n%s", diff)
	}
	if sa.Counts[1] != 1 || sa.Total != 2 {
		t.Error("Add modified its receiver's counts")
	}

	t.Run("into zero Snapshot copies", func(t *testing.T) {
		got, ok := Snapshot{}.Add(sa)
		if !ok {
			t.Fatal("not ok")
		}
		if diff := cmp.Diff(sa, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		got.Counts[1]++
		if sa.Counts[1] != 1 {
			t.Error("result shares Counts with its argument")
		}
	})
	t.Run("empty argument keeps min", func(t *testing.T) {
		got, _ := sa.Add(NewLinear(width, origin, overflow).Snapshot("ticks"))
		if got.Min != 100 || got.Max != 9000 || got.Total != 2 {
			t.Errorf("min %d max %d total %d", got.Min, got.Max, got.Total)
		}
	})
	t.Run("mismatched layout", func(t *testing.T) {
		other := NewLinear(100, 0, 1000).Snapshot("ticks")
		got, ok := sa.Add(other)
		if ok {
			t.Error("ok for different layouts")
		}
		if diff := cmp.Diff(sa, got); diff != "" {
			t.Errorf("receiver changed (-want +got):\n%s", diff)
		}
	})
}

func TestHDRClamp(t *testing.T) {
	h := NewHDR(1000)
	h.Record(10)
	h.Record(5000)
	h.RecordSigned(-7)
	if h.Clamped() != 1 {
		t.Errorf("Clamped = %d, want 1", h.Clamped())
	}
	if n := h.Histogram().TotalCount(); n != 3 {
		t.Errorf("TotalCount = %d, want 3", n)
	}
	if m := h.Histogram().Min(); m != 0 {
		t.Errorf("Min = %d, want 0 (negative clamped)", m)
	}
	h.Reset()
	if h.Clamped() != 0 || h.Histogram().TotalCount() != 0 {
		t.Error("Reset left samples")
	}
}

func TestRingFull(t *testing.T) {
	r := NewRing[int](3) // rounded up to 4
	for i := range 4 {
		if !r.Put(i) {
			t.Fatalf("Put(%d) on a ring with room returned false", i)
		}
	}
	if r.Put(99) || r.Put(100) {
		t.Error("Put on a full ring returned true")
	}
	if r.Dropped() != 2 {
		t.Errorf("Dropped = %d, want 2", r.Dropped())
	}
	var got []int
	if n := r.Drain(func(v *int) { got = append(got, *v) }); n != 4 {
		t.Errorf("Drain = %d, want 4", n)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 3}, got); diff != "" {
		t.Errorf("Drain order (-want +got):\n%s", diff)
	}
	if n := r.Drain(func(*int) { t.Error("Drain of an empty ring called f") }); n != 0 {
		t.Errorf("second Drain = %d, want 0", n)
	}
}

func TestRingWraparound(t *testing.T) {
	r := NewRing[uint64](8)
	var next, want uint64
	// Uneven put/drain batches so the indices wrap the 8 slots many times.
	for round := range 100 {
		for range round%7 + 1 {
			if !r.Put(next) {
				t.Fatalf("round %d: Put(%d) false with %d pending", round, next, next-want)
			}
			next++
		}
		r.Drain(func(v *uint64) {
			if *v != want {
				t.Fatalf("round %d: got %d, want %d", round, *v, want)
			}
			want++
		})
	}
	if want != next || r.Dropped() != 0 {
		t.Errorf("drained %d of %d, dropped %d", want, next, r.Dropped())
	}
}

func TestZeroAllocs(t *testing.T) {
	l := NewLinear(width, origin, overflow)
	h := NewHDR(1e10)
	r := NewRing[Wakeup](1024)
	w := Wakeup{Tick: 1, LatencyNs: 2000}
	var v uint64
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Linear.Record", func() { v += 97; l.Record(v) }},
		{"HDR.Record", func() { v += 97; h.Record(v) }},
		{"Ring.Put", func() {
			if !r.Put(w) {
				r.Drain(func(*Wakeup) {})
			}
		}},
	} {
		if a := testing.AllocsPerRun(1000, tc.f); a != 0 {
			t.Errorf("%s allocs %v per call, want 0", tc.name, a)
		}
	}
}

func BenchmarkRecord(b *testing.B) {
	b.Run("linear", func(b *testing.B) {
		h := NewLinear(width, origin, overflow)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			h.Record(uint64(i) & 0x3fff)
		}
	})
	b.Run("hdr", func(b *testing.B) {
		h := NewHDR(1e10)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			h.Record(uint64(i) & 0xfffff)
		}
	})
	b.Run("ring", func(b *testing.B) {
		r := NewRing[Wakeup](1024)
		w := Wakeup{Tick: 1}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if !r.Put(w) {
				r.Drain(func(*Wakeup) {})
			}
		}
	})
}

func TestLinearMerge(t *testing.T) {
	a, b := NewLinear(128, 64, 8256), NewLinear(128, 64, 8256)
	for _, v := range []uint64{0, 100, 1500, 9000} {
		a.Record(v)
	}
	for _, v := range []uint64{1500, 30, 8300} {
		b.Record(v)
	}
	if !a.Merge(b) {
		t.Fatal("same layout refused")
	}
	s := a.Snapshot("ticks")
	if s.Total != 7 || s.Min != 0 || s.Max != 9000 || s.OverflowCount != 2 || s.Sum != 0+100+1500+9000+1500+30+8300 {
		t.Errorf("merged %+v", s)
	}
	if s.Counts[0] != 2 || s.Counts[1] != 1 || s.Counts[1+(1500-64)/128] != 2 {
		t.Errorf("merged counts %v", s.Counts)
	}
	if NewLinear(64, 0, 1024).Merge(b) {
		t.Error("different layout merged")
	}
	h1, h2 := NewHDR(1e9), NewHDR(1e9)
	h1.Record(10)
	h2.Record(20)
	h2.Record(30)
	if h1.Merge(h2); h1.Count() != 3 || h1.Histogram().Max() < 30 {
		t.Errorf("HDR merge: count %d max %d", h1.Count(), h1.Histogram().Max())
	}
}

// TestHDRLayout checks the log-linear layout: exact below 2048, every
// value inside its bucket, bucket width ≤ value/1024 (3 significant
// digits), indexes contiguous.
func TestHDRLayout(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 2047, 2048, 2049, 4095, 4096, 1 << 20, 1<<20 + 12345, 1 << 30, 1<<40 - 1} {
		i := hdrIndex(v)
		lo, w := hdrBounds(i)
		if v < lo || v >= lo+w {
			t.Errorf("v %d: bucket %d = [%d, %d)", v, i, lo, lo+w)
		}
		if v < 2048 && (w != 1 || lo != v) {
			t.Errorf("v %d not exact: [%d, +%d)", v, lo, w)
		}
		if v >= 2048 && float64(w) > float64(v)/1024 {
			t.Errorf("v %d: bucket width %d > v/1024", v, w)
		}
		if i < prev {
			t.Errorf("index not monotonic at %d", v)
		}
		prev = i
	}
	for i := 0; i < hdrIndex(1<<40); i++ {
		lo, w := hdrBounds(i)
		if hdrIndex(lo) != i || hdrIndex(lo+w-1) != i || hdrIndex(lo+w) != i+1 {
			t.Fatalf("bucket %d [%d, +%d) not contiguous", i, lo, w)
		}
	}
}

// TestHDRMatchesHdrHistogram: percentiles from HDR.Histogram agree with a
// reference hdrhistogram-go fed the same samples, within 3 significant digits.
func TestHDRMatchesHdrHistogram(t *testing.T) {
	h := NewHDR(1 << 40)
	ref := hdrhistogram.New(0, 1<<40, 3)
	x := uint64(12345)
	for i := 0; i < 100000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		v := (x >> 20) % 5_000_000
		h.Record(v)
		ref.RecordValue(int64(v))
	}
	got := h.Histogram()
	for _, q := range []float64{50, 90, 99, 99.9, 100} {
		a, b := float64(got.ValueAtQuantile(q)), float64(ref.ValueAtQuantile(q))
		if d := (a - b) / b; d > 0.002 || d < -0.002 {
			t.Errorf("p%v: %v vs reference %v", q, a, b)
		}
	}
	if got.TotalCount() != 100000 || got.Max() < ref.Max()-ref.Max()/1000 {
		t.Errorf("count %d max %d, reference max %d", got.TotalCount(), got.Max(), ref.Max())
	}
	if h.Max() != uint64(ref.Max()) && h.Max() > uint64(ref.Max()) {
		t.Errorf("exact max %d > reference %d", h.Max(), ref.Max())
	}
	if a := testing.AllocsPerRun(1000, func() { h.Record(777) }); a != 0 {
		t.Errorf("Record allocates %v", a)
	}
	h.Record(1 << 41)
	if h.Clamped() != 1 {
		t.Errorf("clamped %d, want 1", h.Clamped())
	}
}
