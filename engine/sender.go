package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/pace"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
)

// sender is one traffic entry's paced sender.
type sender struct {
	spec      scenario.Traffic
	group     *udp.Group
	tx        Injector
	pacer     pace.Pacer
	lag       *record.HDR
	thread    *rt.Thread
	stop      chanFlag
	sent      uint64
	sentCount atomic.Uint64 // sent, readable by the writer while the sender runs
	errs      uint64
	err       error
	start     int64
	end       int64
	ended     int64
}

// newSender is traffic entry t into group g through tx, paced by
// senderPacer (seeded with the trial's index for a poisson spread).
func newSender(t scenario.Traffic, g *udp.Group, tx Injector, trialIndex int) *sender {
	return &sender{spec: t, group: g, tx: tx, pacer: senderPacer(t, len(g.FDs()), uint64(trialIndex)+1),
		lag: record.NewHDR(int64(10 * time.Second))}
}

// sendInterval is the time between two messages to the same socket:
// Interval, or 1/Rate when only a rate is given (0 when neither is).
func sendInterval(t scenario.Traffic) time.Duration {
	interval := time.Duration(t.Interval)
	if interval <= 0 && t.Rate > 0 {
		interval = time.Duration(float64(time.Second) / t.Rate)
	}
	return interval
}

// senderPacer is the pacer of traffic entry t over sockets sockets: one
// message per socket every sendInterval(t), spread evenly, in a burst at
// the start of each interval, or at Poisson times (seeded with seed).
func senderPacer(t scenario.Traffic, sockets int, seed uint64) pace.Pacer {
	interval := sendInterval(t)
	switch t.Spread {
	case scenario.SpreadBurst:
		return pace.Burst{Count: sockets, Interval: interval}
	case scenario.SpreadPoisson:
		return pace.NewPoisson(sockets, interval, seed)
	}
	return pace.Even{Count: sockets, Interval: interval}
}

// senderSched is a sender thread's scheduling: SCHED_OTHER with 1 ns timer
// slack (its sleeps end on time), pinned when the entry names a CPU, and
// never refused (a sender at the default policy needs no privilege).
func senderSched(t scenario.Traffic) rt.Sched {
	s := rt.Sched{Policy: rt.Other, TimerSlackNs: 1, AllowDegraded: true}
	if t.CPU != nil {
		s.CPUs = []int{*t.CPU}
	}
	return s
}

// launch starts the sender's thread, sending from start to end
// (CLOCK_MONOTONIC ns).
func (s *sender) launch(start, end int64) error {
	s.start, s.end = start, end
	th, err := rt.Start(senderSched(s.spec), s.run)
	if err != nil {
		return fmt.Errorf("sender to %s: %w", s.spec.Endpoint, err)
	}
	s.thread = th
	return nil
}

// halt tells the sender to stop; wait waits for its thread.
func (s *sender) halt() { s.stop.set() }

func (s *sender) wait() {
	if s.thread != nil {
		s.thread.Wait()
	}
}

// run is the sender thread: event n is due at start + pacer.Next(n) and goes
// to socket n % count; every event due now goes out in one sendmmsg batch;
// between batches the thread sleeps to the next due time (timer slack 1 ns).
func (s *sender) run(rt.Applied) {
	count := uint64(len(s.group.FDs()))
	dst := make([]int, 0, 64)
	var n uint64
	for {
		if s.stop.get() {
			break
		}
		now := rt.Monotonic()
		if now >= s.end {
			break
		}
		due := s.start + int64(s.pacer.Next(n))
		if due > now {
			wake := min(due, s.end, now+int64(10*time.Millisecond))
			rt.SleepUntil(wake)
			continue
		}
		dst = dst[:0]
		for len(dst) < cap(dst) {
			due := s.start + int64(s.pacer.Next(n))
			if due > now || due >= s.end {
				break
			}
			dst = append(dst, int(n%count))
			s.lag.RecordSigned(now - due)
			n++
		}
		sent, err := s.tx.Send(dst, rt.Monotonic())
		s.sent += uint64(sent)
		s.sentCount.Store(s.sent)
		if err != nil {
			s.errs++
			s.err = err
			// Skip the failed messages: their sequence numbers were not used.
		}
	}
	s.ended = rt.Monotonic()
}

// chanFlag is a stop flag for non-real-time loops.
type chanFlag struct {
	mu   sync.Mutex
	done bool
}

func (f *chanFlag) set() { f.mu.Lock(); f.done = true; f.mu.Unlock() }
func (f *chanFlag) get() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}
