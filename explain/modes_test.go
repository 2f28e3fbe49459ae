package explain

import (
	"github.com/rtload/rtload/internal/testutil"
	"math"
	"slices"
	"testing"

	"github.com/rtload/rtload/record"
)

// snap builds a Snapshot in the seed's layout (128 wide from 64) from
// bucket counts (counts[0] = below the origin) and an overflow count.
func snap(counts []uint64, over uint64) record.Snapshot {
	s := record.Snapshot{Unit: "ticks", Width: 128, Origin: 64, Overflow: 64 + 128*uint64(len(counts)-1),
		Counts: counts, OverflowCount: over}
	for i, c := range counts {
		s.Total += c
		s.Sum += c * s.Lower(i)
	}
	s.Total += over
	return s
}

// gauss adds a bell of height h centred on bucket mu with width sigma (buckets).
func gauss(c []uint64, h, mu, sigma float64) []uint64 {
	for i := range c {
		c[i] += uint64(math.Round(h * math.Exp(-(float64(i)-mu)*(float64(i)-mu)/(2*sigma*sigma))))
	}
	return c
}

// jitter adds a deterministic ±√n wobble (alternating sign), the size of
// counting noise, without making a real peak.
func jitter(c []uint64) []uint64 {
	for i := range c {
		d := uint64(math.Sqrt(float64(c[i])))
		if i%2 == 0 {
			c[i] += d
		} else {
			c[i] -= d
		}
	}
	return c
}

func peaks(ms []Mode) []int {
	var p []int
	for _, m := range ms {
		p = append(p, m.Peak)
	}
	return p
}

func TestModes(t *testing.T) {
	for _, c := range []struct {
		name string
		s    record.Snapshot
		want []int // peak buckets
	}{
		{"empty histogram has no mode", snap(make([]uint64, 65), 0), nil},
		{"no buckets", record.Snapshot{}, nil},
		{"one bell", snap(gauss(make([]uint64, 65), 1e5, 20, 3), 0), []int{20}},
		{"one bell with counting noise", snap(jitter(gauss(make([]uint64, 65), 1e5, 20, 3)), 0), []int{20}},
		{"two bells, the second 5% as high", snap(gauss(gauss(make([]uint64, 65), 1e5, 10, 2), 5e3, 40, 3), 0), []int{10, 40}},
		// Three modes like the seed's: warm EAGAIN, data, and a small far bump.
		{"three bells", snap(gauss(gauss(gauss(make([]uint64, 65), 5e4, 8, 1.5), 8e4, 16, 3), 800, 55, 2), 100), []int{8, 16, 55}},
		{"shoulder under 10% prominence is no mode", snap(gauss(gauss(make([]uint64, 65), 1e5, 10, 4), 3e3, 16, 1), 0), []int{10}},
		{"bump within counting noise is no mode", snap(gauss(gauss(make([]uint64, 65), 400, 10, 2), 6, 40, 1), 0), []int{10}},
		{"prominent but tiny (< 0.2% of calls) is no mode", snap(gauss(gauss(make([]uint64, 65), 1e6, 10, 3), 900, 50, 0.5), 0), []int{10}},
		{"plateau counts once", snap([]uint64{0, 0, 500, 500, 500, 0, 0}, 0), []int{2}},
		{"peak below the origin (bucket 0)", snap([]uint64{1000, 10, 0, 0, 300, 0}, 0), []int{0, 4}},
		{"peak in the last bucket", snap([]uint64{0, 1000, 10, 0, 300}, 9999), []int{1, 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := Modes(c.s)
			if got := peaks(ms); !slices.Equal(got, c.want) {
				t.Fatalf("peaks at buckets %v; want %v (modes %+v)", got, c.want, ms)
			}
			// Spans tile the buckets: contiguous, from 0 to the last.
			var sum uint64
			for i, m := range ms {
				if i == 0 && m.Lo != 0 || i > 0 && m.Lo != ms[i-1].Hi+1 || i == len(ms)-1 && m.Hi != len(c.s.Counts)-1 {
					t.Errorf("mode %d spans %d..%d: spans must tile 0..%d", i, m.Lo, m.Hi, len(c.s.Counts)-1)
				}
				if m.Peak < m.Lo || m.Peak > m.Hi || m.PeakAt != c.s.Lower(m.Peak) {
					t.Errorf("mode %d: peak %d (at %d) outside its span %d..%d", i, m.Peak, m.PeakAt, m.Lo, m.Hi)
				}
				sum += m.Count
			}
			if len(ms) > 0 && sum != c.s.Total-c.s.OverflowCount {
				t.Errorf("spans hold %d samples; want %d (all but overflow)", sum, c.s.Total-c.s.OverflowCount)
			}
		})
	}
}

// seedRecvfrom is the seed's "recvfrom unhard" column (1472 … 8128).
var seedRecvfrom = testutil.Seed000Column(0)

// TestModesSeed finds the seed's three peaks: the fast one at 1856 cycles,
// the main one at 2752 and the "second peak way down at 8000 cycles"
// (its top bucket is 7872).
func TestModesSeed(t *testing.T) {
	s := record.Snapshot{Width: 128, Origin: 1472, Overflow: 1472 + 128*uint64(len(seedRecvfrom)), OverflowCount: 19252}
	s.Counts = append([]uint64{0}, seedRecvfrom...)
	var at []uint64
	for _, m := range Modes(s) {
		at = append(at, m.PeakAt)
	}
	if want := []uint64{1856, 2752, 7872}; !slices.Equal(at, want) {
		t.Errorf("seed peaks at %v; want %v", at, want)
	}
}
