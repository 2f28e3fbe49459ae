package pace

import (
	"fmt"
	"math"
	"testing"
	"testing/quick"
	"time"
)

func TestEven(t *testing.T) {
	p := Even{Count: 450, Interval: 20 * time.Millisecond}
	for _, tc := range []struct {
		name string
		n    uint64
		want time.Duration
	}{
		{"first event at 0", 0, 0},
		{"second socket one slot later", 1, 20 * time.Millisecond / 450},
		{"last socket of round 0", 449, 449 * 20 * time.Millisecond / 450},
		{"socket 0 of round 1 at one interval", 450, 20 * time.Millisecond},
		{"socket 0 of round 1000", 450_000, 20 * time.Second},
	} {
		if got := p.Next(tc.n); got != tc.want {
			t.Errorf("%s: Next(%d) = %v, want %v", tc.name, tc.n, got, tc.want)
		}
	}
}

func TestBurst(t *testing.T) {
	p := Burst{Count: 3, Interval: 10 * time.Millisecond}
	want := []time.Duration{0, 0, 0, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}
	for n, w := range want {
		if got := p.Next(uint64(n)); got != w {
			t.Errorf("Next(%d) = %v, want %v", n, got, w)
		}
	}
}

// TestMonotonic checks Next is non-decreasing for every pacer.
func TestMonotonic(t *testing.T) {
	f := func(count uint16, ivMs uint8, n uint32) bool {
		c := int(count%2000) + 1
		iv := time.Duration(ivMs%100+1) * time.Millisecond
		for _, p := range []Pacer{Even{c, iv}, Burst{c, iv}} {
			if p.Next(uint64(n)+1) < p.Next(uint64(n)) {
				return false
			}
		}
		return true
	}
	if err := quick.Check(f, nil); err != nil {
		t.Fatal(err)
	}
}

func TestLongRunRate(t *testing.T) {
	// 450 sockets every 20 ms: after 10^6 events the schedule is at exactly
	// 10^6/450 intervals (to within one slot).
	p := Even{Count: 450, Interval: 20 * time.Millisecond}
	n := uint64(1_000_000)
	got := float64(p.Next(n))
	want := float64(n) * float64(20*time.Millisecond) / 450
	if d := got - want; d > 1 || d < -1 {
		t.Fatalf("Next(%d) = %v, want %v (±1ns)", n, got, want)
	}
}

func TestPoissonRate(t *testing.T) {
	p := NewPoisson(450, 20*time.Millisecond, 1)
	const n = 200_000
	var prev time.Duration
	for i := uint64(0); i < n; i++ {
		at := p.Next(i)
		if at < prev {
			t.Fatalf("Next(%d) = %v < %v", i, at, prev)
		}
		prev = at
	}
	mean := float64(prev) / float64(n-1)
	want := float64(20*time.Millisecond) / 450
	if mean < want*0.98 || mean > want*1.02 {
		t.Fatalf("mean gap %.0f ns, want %.0f ±2%%", mean, want)
	}
	// Same seed, same schedule.
	q := NewPoisson(450, 20*time.Millisecond, 1)
	if q.Next(1000) != NewPoissonAt(1, 1000) {
		t.Fatal("poisson not reproducible for the same seed")
	}
}

func NewPoissonAt(seed uint64, n uint64) time.Duration {
	return NewPoisson(450, 20*time.Millisecond, seed).Next(n)
}

func ExampleEven() {
	p := Even{Count: 4, Interval: 20 * time.Millisecond}
	for n := uint64(0); n < 5; n++ {
		fmt.Println(p.Next(n))
	}
	// Output:
	// 0s
	// 5ms
	// 10ms
	// 15ms
	// 20ms
}

// TestDue: Due(t) is the first n with Next(n) ≥ t, checked against a walk
// of Next for even and burst pacers of awkward counts and intervals.
func TestDue(t *testing.T) {
	if testing.Short() { // internal/testutil.Long, by hand: this package's tests import the standard library only
		t.Skip("tier: long fast test (walks 47 million events); -short leaves it out, make test runs it")
	}
	for _, p := range []Pacer{
		Even{450, 20 * time.Millisecond}, Even{3, 10}, Even{7, 3}, Even{1, 1}, Even{1000, time.Microsecond},
		Burst{3, 10 * time.Millisecond}, Burst{5, 7}, Burst{1, 1},
	} {
		n := uint64(0)
		for _, at := range []time.Duration{-5, 0, 1, 2, 3, 9, 10, 11, 29, 30, 31, 999, 1000, 1001, 44444, 20 * time.Millisecond, 20*time.Millisecond + 1, 47 * time.Millisecond} {
			for p.Next(n) < at {
				n++
			}
			if got := p.Due(at); got != n {
				t.Errorf("%#v.Due(%d) = %d, want %d (Next(%d) = %d)", p, at, got, n, n, p.Next(n))
			}
		}
	}
}

// TestDueLarge: Due of a schedule far too long to walk: an even spread of
// one event a nanosecond over an hour, and 100,000 sockets every 24 h
// (rem × count near 2^63).
func TestDueLarge(t *testing.T) {
	if got := (Even{1, 1}).Due(time.Hour); got != uint64(time.Hour) {
		t.Errorf("Due(1h) at 1 ns = %d, want %d", got, uint64(time.Hour))
	}
	p := Even{100_000, 24 * time.Hour}
	at := 48*time.Hour + 24*time.Hour - 1
	n := p.Due(at)
	if n != 299_999+1 || p.Next(n-1) >= at || p.Next(n) < at {
		t.Errorf("Due(%v) = %d (Next %v, %v)", at, n, p.Next(n-1), p.Next(n))
	}
}

// TestPoissonDue: Due walks a short stretch exactly (the same events Next
// gives) and jumps a long one, counting about λ events, after which Next
// goes on from the returned index past t.
func TestPoissonDue(t *testing.T) {
	p, q := NewPoisson(450, 20*time.Millisecond, 3), NewPoisson(450, 20*time.Millisecond, 3)
	n := p.Due(10 * time.Millisecond) // λ = 225: walked
	m := uint64(0)
	for q.Next(m) < 10*time.Millisecond {
		m++
	}
	if n != m || p.Next(n) != q.Next(m) {
		t.Fatalf("short stretch: Due = %d (at %v), walk = %d (at %v)", n, p.Next(n), m, q.Next(m))
	}
	// 1 ns mean gap over 1 s: λ = 10^9 events, drawn at once.
	r := NewPoisson(1, 1, 5)
	got := r.Due(time.Second)
	if d := float64(got) - 1e9; d > 5*math.Sqrt(1e9) || d < -5*math.Sqrt(1e9) {
		t.Errorf("long stretch: Due(1s) = %d, want 10^9 ± 5σ", got)
	}
	if at := r.Next(got); at < time.Second || at > time.Second+time.Microsecond {
		t.Errorf("Next(%d) after the jump = %v, want just past 1s", got, at)
	}
	if r.Next(got+1) < r.Next(got) {
		t.Error("not monotonic after the jump")
	}
}
