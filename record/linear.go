package record

// Recorder takes one sample in the producer's unit. Single writer, no lock,
// no allocation; values out of range are counted in an overflow bucket,
// never dropped.
type Recorder interface {
	Record(v uint64)
}

// Linear is a fixed-width bucket histogram, the layout of seed
// 000_b19799733a2511c2: buckets are Width wide starting at Origin, every
// value below Origin falls in bucket "0", and every value ≥ Overflow falls in
// the overflow bucket ("8256+"). The zero value is unusable; use NewLinear.
// Single writer; readers take a Snapshot after the writer stopped.
type Linear struct {
	width, origin, overflow uint64
	counts                  []uint64 // counts[0] = [0,origin); counts[i] = [origin+(i-1)w, origin+iw)
	over                    uint64
	total, sum              uint64
	min, max                uint64
}

var _ Recorder = (*Linear)(nil)

// NewLinear returns a histogram with buckets width wide from origin up to
// overflow (rounded up to a bucket edge). width must be > 0; overflow > origin.
// Every page of its counts is written once here (see prefault).
func NewLinear(width, origin, overflow uint64) *Linear {
	if width == 0 {
		width = 1
	}
	if overflow <= origin {
		overflow = origin + width
	}
	n := (overflow - origin + width - 1) / width
	h := &Linear{
		width: width, origin: origin, overflow: origin + n*width,
		counts: make([]uint64, n+1),
		min:    ^uint64(0),
	}
	prefault(h.counts)
	return h
}

// Record adds one sample. No allocation, no preemption point.
//
//go:nosplit
func (h *Linear) Record(v uint64) {
	h.total++
	h.sum += v
	if v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	switch {
	case v >= h.overflow:
		h.over++
	case v < h.origin:
		h.counts[0]++
	default:
		h.counts[1+(v-h.origin)/h.width]++
	}
}

// Reset clears all counts, keeping the layout.
func (h *Linear) Reset() {
	clear(h.counts)
	h.over, h.total, h.sum, h.max = 0, 0, 0, 0
	h.min = ^uint64(0)
}

// Total is the number of samples recorded.
func (h *Linear) Total() uint64 { return h.total }

// Mean is the mean sample (exact: the sum over the count), 0 when empty.
// Unlike Snapshot it allocates nothing.
func (h *Linear) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.total)
}

// Snapshot copies the histogram into a serialisable form.
func (h *Linear) Snapshot(unit string) Snapshot {
	s := Snapshot{
		Unit: unit, Width: h.width, Origin: h.origin, Overflow: h.overflow,
		Counts: append([]uint64(nil), h.counts...), OverflowCount: h.over,
		Total: h.total, Sum: h.sum, Max: h.max,
	}
	if h.total > 0 {
		s.Min = h.min
	}
	return s
}

// Snapshot is a Linear histogram at rest, as stored in summary.json.
// Counts[0] holds values in [0, Origin); Counts[i] (i ≥ 1) holds values in
// [Origin+(i-1)*Width, Origin+i*Width); OverflowCount holds values ≥ Overflow.
type Snapshot struct {
	Unit          string   `json:"unit"`
	Width         uint64   `json:"bucket_width"`
	Origin        uint64   `json:"bucket_origin"`
	Overflow      uint64   `json:"overflow"`
	Counts        []uint64 `json:"counts"`
	OverflowCount uint64   `json:"overflow_count"`
	Total         uint64   `json:"total"`
	Sum           uint64   `json:"sum"`
	Min           uint64   `json:"min"`
	Max           uint64   `json:"max"`
}

// Lower returns the lower edge (the row label) of bucket i.
func (s Snapshot) Lower(i int) uint64 {
	if i == 0 {
		return 0
	}
	return s.Origin + uint64(i-1)*s.Width
}

// Mean returns the mean sample, or 0 when empty.
func (s Snapshot) Mean() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Sum) / float64(s.Total)
}

// Add merges o into s; both must have the same layout (else s is returned unchanged and ok false).
func (s Snapshot) Add(o Snapshot) (Snapshot, bool) {
	if s.Total == 0 && len(s.Counts) == 0 {
		o.Counts = append([]uint64(nil), o.Counts...)
		return o, true
	}
	if o.Width != s.Width || o.Origin != s.Origin || o.Overflow != s.Overflow || len(o.Counts) != len(s.Counts) {
		return s, false
	}
	r := s
	r.Counts = append([]uint64(nil), s.Counts...)
	for i, c := range o.Counts {
		r.Counts[i] += c
	}
	r.OverflowCount += o.OverflowCount
	if o.Total > 0 && (r.Total == 0 || o.Min < r.Min) {
		r.Min = o.Min
	}
	if o.Max > r.Max {
		r.Max = o.Max
	}
	r.Total += o.Total
	r.Sum += o.Sum
	return r, true
}

// Merge adds o's counts into h. Both must have the same layout (else ok is
// false and h is unchanged). Not for use while either is being written.
func (h *Linear) Merge(o *Linear) bool {
	if o.width != h.width || o.origin != h.origin || o.overflow != h.overflow || len(o.counts) != len(h.counts) {
		return false
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.over += o.over
	h.total += o.total
	h.sum += o.sum
	if o.total > 0 {
		h.min = min(h.min, o.min)
		h.max = max(h.max, o.max)
	}
	return true
}

// Quantile is the value at quantile q (0–1) interpolated linearly within
// its bucket (the samples of a bucket taken as spread evenly over it):
// bucket "0" spans [0, Origin), the overflow bucket is read as Overflow
// (a quantile there is at least that). 0 when empty. No allocation: the
// writer reads it at every interval.
func (h *Linear) Quantile(q float64) float64 {
	if h.total == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := q * float64(h.total)
	var seen float64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		if next := seen + float64(c); next >= rank {
			lo, w := h.bucket(i)
			return lo + w*(rank-seen)/float64(c)
		}
		seen += float64(c)
	}
	return float64(h.overflow)
}

// TrimmedMean is the mean of the samples between quantiles trim and
// 1 − trim (0 ≤ trim < 0.5: 0.25 is the interquartile mean), each
// bucket's samples at their interpolated positions as Quantile reads
// them (so a bucket cut by a quantile counts the part inside, at its
// centre). The overflow bucket counts as Overflow. 0 when empty; the
// exact mean (Mean) for trim ≤ 0. No allocation.
func (h *Linear) TrimmedMean(trim float64) float64 {
	if h.total == 0 {
		return 0
	}
	if trim <= 0 {
		return h.Mean()
	}
	trim = min(trim, 0.499)
	n := float64(h.total)
	from, to := trim*n, (1-trim)*n
	var seen, sum float64
	add := func(lo, w, c float64) {
		// the bucket's samples in ranks [seen, seen+c), spread evenly
		// over [lo, lo+w): the part in [from, to) and its centre.
		a, b := max(seen, from), min(seen+c, to)
		if b > a {
			x0 := lo + w*(a-seen)/c
			x1 := lo + w*(b-seen)/c
			sum += (b - a) * (x0 + x1) / 2
		}
		seen += c
	}
	for i, c := range h.counts {
		if c > 0 {
			lo, w := h.bucket(i)
			add(lo, w, float64(c))
		}
		if seen >= to {
			break
		}
	}
	if h.over > 0 && seen < to {
		add(float64(h.overflow), 0, float64(h.over))
	}
	return sum / (to - from)
}

// bucket is bucket i's lowest value and width (bucket "0": [0, Origin)).
func (h *Linear) bucket(i int) (lo, w float64) {
	if i == 0 {
		return 0, float64(h.origin)
	}
	return float64(h.origin + uint64(i-1)*h.width), float64(h.width)
}
