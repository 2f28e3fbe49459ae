// Package pace computes when paced events are due. A Pacer is pure math: it
// never sleeps, never reads a clock and never allocates, so a sender's
// schedule can be tested without time and rebuilt after the fact. Even's
// and Burst's methods are //go:nosplit: a real-time sender calls them with
// no preemption point (Poisson's draw on math/rand and math.Log, which
// have them).
//
// Traffic to a group of Count sockets, one message per socket per Interval,
// is a sequence of events n = 0, 1, 2, …; event n goes to socket n % Count.
package pace

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"time"
)

// Pacer gives the offset from run start at which event n is due.
// Offsets are non-decreasing in n.
type Pacer interface {
	Next(n uint64) time.Duration
	// Due is how many events are due before offset t: the index of the
	// first event at or after t (0 for t ≤ 0). It costs O(1) whatever
	// the count, so a sender that fell behind can jump to the event due
	// now and count what it missed without walking each event.
	Due(t time.Duration) uint64
}

// Even spreads the Count sockets' sends evenly across each Interval:
// event n is due at n * Interval / Count.
type Even struct {
	Count    int
	Interval time.Duration
}

var _ Pacer = Even{}

// Next returns n*Interval/Count, computed without overflow for n < 2^63/Interval.
//
//go:nosplit
func (p Even) Next(n uint64) time.Duration {
	c := uint64(p.Count)
	round, idx := n/c, n%c
	return time.Duration(round)*p.Interval + time.Duration(idx*uint64(p.Interval)/c)
}

// Due returns the number of n with n*Interval/Count < t: whole intervals
// before t times Count, plus the slots of the interval t falls in that
// start before it (ceil(rem*Count/Interval), 128-bit intermediate).
//
//go:nosplit
func (p Even) Due(t time.Duration) uint64 {
	if t <= 0 {
		return 0
	}
	c, iv := uint64(p.Count), uint64(p.Interval)
	round, rem := uint64(t)/iv, uint64(t)%iv
	hi, lo := bits.Mul64(rem, c)
	lo, carry := bits.Add64(lo, iv-1, 0)
	k, _ := bits.Div64(hi+carry, lo, iv) // rem < iv: the quotient is ≤ c, hi+carry < iv
	return round*c + k
}

// Burst sends to all Count sockets at the start of each Interval.
type Burst struct {
	Count    int
	Interval time.Duration
}

var _ Pacer = Burst{}

// Next returns (n/Count)*Interval.
//
//go:nosplit
func (p Burst) Next(n uint64) time.Duration {
	return time.Duration(n/uint64(p.Count)) * p.Interval
}

// Due returns Count times the intervals that start before t.
//
//go:nosplit
func (p Burst) Due(t time.Duration) uint64 {
	if t <= 0 {
		return 0
	}
	iv := uint64(p.Interval)
	return (uint64(t)/iv + min(1, uint64(t)%iv)) * uint64(p.Count)
}

// Poisson is a Poisson process with mean rate Count/Interval events per
// second (exponential gaps), seeded for reproducibility. It keeps state and
// must be called with n = 0, 1, 2, … in order; after Due, with n from the
// index Due returned on.
type Poisson struct {
	mean float64 // mean gap, ns
	rng  *rand.Rand
	at   float64
	next uint64
}

// NewPoisson returns a Poisson pacer with the given seed.
func NewPoisson(count int, interval time.Duration, seed uint64) *Poisson {
	return &Poisson{mean: float64(interval) / float64(count), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

var _ Pacer = (*Poisson)(nil)

// Next returns the time of event n. Event 0 is at 0.
func (p *Poisson) Next(n uint64) time.Duration {
	for p.next <= n {
		if p.next > 0 {
			p.at += -math.Log(1-p.rng.Float64()) * p.mean
		}
		p.next++
	}
	return time.Duration(p.at)
}

// poissonWalk is the most events Due draws one by one: past it the
// count in the rest of the window is drawn at once.
const poissonWalk = 1024

// Due returns the index of the first event at or after t and advances the
// process to it. Events are drawn one by one while fewer than poissonWalk
// are expected before t; a longer stretch is drawn at once: its count is
// Poisson with mean λ = stretch/mean gap (drawn from the normal
// approximation, exact to 1/√λ ≤ 3% there), and the first event after t
// lies an exponential gap past t (the process is memoryless). Events
// before t that were never drawn have no time: Next must not be asked
// for them.
func (p *Poisson) Due(t time.Duration) uint64 {
	if p.next == 0 {
		p.next = 1 // event 0 is at 0
	}
	end := float64(t)
	for p.at < end {
		lam := (end - p.at) / p.mean
		if lam <= poissonWalk {
			p.at += -math.Log(1-p.rng.Float64()) * p.mean
			p.next++
			continue
		}
		k := max(0, math.Round(lam+math.Sqrt(lam)*p.rng.NormFloat64()))
		p.next += uint64(k) + 1
		p.at = end + -math.Log(1-p.rng.Float64())*p.mean
	}
	return p.next - 1
}
