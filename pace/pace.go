// Package pace computes when paced events are due. A Pacer is pure math: it
// never sleeps, never reads a clock and never allocates, so a sender's
// schedule can be tested without time and rebuilt after the fact.
//
// Traffic to a group of Count sockets, one message per socket per Interval,
// is a sequence of events n = 0, 1, 2, …; event n goes to socket n % Count.
package pace

import (
	"math"
	"math/rand/v2"
	"time"
)

// Pacer gives the offset from run start at which event n is due.
// Offsets are non-decreasing in n.
type Pacer interface {
	Next(n uint64) time.Duration
}

// Even spreads the Count sockets' sends evenly across each Interval:
// event n is due at n * Interval / Count.
type Even struct {
	Count    int
	Interval time.Duration
}

var _ Pacer = Even{}

// Next returns n*Interval/Count, computed without overflow for n < 2^63/Interval.
func (p Even) Next(n uint64) time.Duration {
	c := uint64(p.Count)
	round, idx := n/c, n%c
	return time.Duration(round)*p.Interval + time.Duration(idx*uint64(p.Interval)/c)
}

// Burst sends to all Count sockets at the start of each Interval.
type Burst struct {
	Count    int
	Interval time.Duration
}

var _ Pacer = Burst{}

// Next returns (n/Count)*Interval.
func (p Burst) Next(n uint64) time.Duration {
	return time.Duration(n/uint64(p.Count)) * p.Interval
}

// Poisson is a Poisson process with mean rate Count/Interval events per
// second (exponential gaps), seeded for reproducibility. It keeps state and
// must be called with n = 0, 1, 2, … in order.
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
