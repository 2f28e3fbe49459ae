// Package explain reads a results directory and says what makes up the
// shape of each per-call histogram: its modes (peaks), which call classes
// and positions each is made of, what the tail is made of, and what
// coincided with the wakeup-latency spikes. Pure: it reads files and
// summary data only (stdlib, record, results).
package explain

import (
	"math"

	"github.com/rtload/rtload/record"
)

// Mode-finding rule (Modes). Every local maximum of the bucket counts
// (higher than its left neighbour, at least as high as its right one, so a
// plateau counts once) is a candidate. Its prominence is how far it stands
// above the higher of its two bases, a base being the lowest count between
// it and the nearest higher bucket on that side; a side that reaches the
// end of the histogram without a higher bucket has base 0 (the histogram
// falls to nothing past its edges), so the highest peak's prominence is its
// height. A candidate is a mode when its prominence is at least
// MinRelProminence of its height and at least NoiseSigmas times the square
// root of its height, and when its span (below) holds at least MinShare of
// the histogram's samples. The square-root floor is counting noise: a
// bucket of n samples wobbles by about √n, and a peak minus its base by
// about √(2n), so 4√n is some 2.8 standard deviations of that difference;
// it is what removes the jitter of a sparse tail. The counts are not
// smoothed first: the buckets are already wide (the seed's 128 ticks), and
// a 1-2-1 smoothing flattened real peaks two or three buckets wide (the
// data-call shoulder of recvfrom on this project's test machine) below the
// relative rule, while the noise floor already does smoothing's job. Spans:
// neighbouring modes are split at the lowest bucket between them; the
// first mode's span starts at bucket 0, the last one's ends at the last
// bucket. The overflow bucket is never part of a mode (its width is
// unknown); reports show it apart.
const (
	MinRelProminence = 0.10
	NoiseSigmas      = 4.0
	MinShare         = 0.001
)

// Mode is one peak of a Linear histogram.
type Mode struct {
	// Peak is the bucket index of the peak; Lo and Hi the first and last
	// bucket of its span.
	Peak int `json:"peak_bucket"`
	Lo   int `json:"lo_bucket"`
	Hi   int `json:"hi_bucket"`
	// PeakAt is the peak bucket's lower edge (the row label in the seed's
	// table); From and To the span's edges [From, To) in the histogram unit.
	PeakAt uint64 `json:"peak_at"`
	From   uint64 `json:"from"`
	To     uint64 `json:"to"`
	// Count is the samples in the span (raw counts); Height and Prominence
	// are in counts per bucket.
	Count      uint64  `json:"count"`
	Height     float64 `json:"height"`
	Prominence float64 `json:"prominence"`
}

// floats converts the counts for the prominence arithmetic.
func floats(c []uint64) []float64 {
	s := make([]float64, len(c))
	for i, v := range c {
		s[i] = float64(v)
	}
	return s
}

// prominence of the local maximum at p in s (see the rule above).
func prominence(s []float64, p int) float64 {
	base := func(step int) float64 {
		lo := s[p]
		for i := p + step; i >= 0 && i < len(s); i += step {
			if s[i] > s[p] {
				return lo
			}
			lo = math.Min(lo, s[i])
		}
		return 0
	}
	return s[p] - math.Max(base(-1), base(1))
}

// Modes returns the modes of s in bucket order (see the rule above). An
// empty histogram has none.
func Modes(s record.Snapshot) []Mode {
	c := s.Counts
	if len(c) == 0 {
		return nil
	}
	var total uint64
	for _, v := range c {
		total += v
	}
	total += s.OverflowCount
	if total == 0 {
		return nil
	}
	sm := floats(c)
	var peaks []int
	for i := range sm {
		if sm[i] <= 0 || i > 0 && sm[i] <= sm[i-1] || i < len(sm)-1 && sm[i] < sm[i+1] {
			continue
		}
		h := sm[i]
		if pr := prominence(sm, i); pr >= MinRelProminence*h && pr >= NoiseSigmas*math.Sqrt(h) {
			peaks = append(peaks, i)
		}
	}
	// Drop peaks whose span is too small, then split the rest again (a
	// dropped peak's samples go to its neighbours).
	for {
		modes := spans(s, sm, peaks)
		kept := peaks[:0:0]
		small := -1
		for i, m := range modes {
			if float64(m.Count) < MinShare*float64(total) && (small < 0 || m.Count < modes[small].Count) {
				small = i
			}
		}
		if small < 0 {
			return modes
		}
		for i, p := range peaks {
			if i != small {
				kept = append(kept, p)
			}
		}
		peaks = kept
	}
}

// spans builds the modes for peaks (sorted bucket indexes).
func spans(s record.Snapshot, sm []float64, peaks []int) []Mode {
	modes := make([]Mode, len(peaks))
	for i, p := range peaks {
		lo, hi := 0, len(sm)-1
		if i > 0 {
			lo = valley(sm, peaks[i-1], p) + 1
		}
		if i < len(peaks)-1 {
			hi = valley(sm, p, peaks[i+1])
		}
		m := Mode{Peak: p, Lo: lo, Hi: hi, PeakAt: s.Lower(p), From: s.Lower(lo), To: s.Lower(hi) + s.Width,
			Height: sm[p], Prominence: prominence(sm, p)}
		if hi == 0 {
			m.To = s.Origin
		}
		for b := lo; b <= hi; b++ {
			m.Count += s.Counts[b]
		}
		modes[i] = m
	}
	return modes
}

// valley is the index of the lowest bucket strictly between a and
// b (the last of equal lows, so a flat valley goes to the left mode).
func valley(sm []float64, a, b int) int {
	v := a + 1
	for i := a + 1; i < b; i++ {
		if sm[i] <= sm[v] {
			v = i
		}
	}
	if v >= b {
		v = a
	}
	return v
}

// span sums the counts of buckets lo..hi of s (0 when s's layout is
// shorter, e.g. an empty snapshot).
func span(s record.Snapshot, lo, hi int) uint64 {
	var n uint64
	for b := lo; b <= hi && b < len(s.Counts); b++ {
		n += s.Counts[b]
	}
	return n
}
