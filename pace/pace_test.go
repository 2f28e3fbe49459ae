package pace

import (
	"fmt"
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
