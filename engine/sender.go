package engine

import (
	"fmt"
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
	applied   rt.Applied  // the thread as read back, set by launch
	stop      atomic.Bool // set by halt; no lock a real-time sender could wait on
	sent      uint64
	sentCount atomic.Uint64 // sent, readable by the writer while the sender runs
	errs      uint64
	err       error
	start     int64
	end       int64
	ended     int64
	// due is how many messages the pacer had due from start until the
	// sender ended (at most end): what an on-time sender sends.
	due uint64
}

// newSender is traffic entry t into group g through tx, paced by
// senderPacer (seeded with the trial's index for a poisson spread).
func newSender(t scenario.Traffic, g *udp.Group, tx Injector, trialIndex int) *sender {
	return &sender{spec: t, group: g, tx: tx, pacer: senderPacer(t, len(g.FDs()), uint64(trialIndex)+1),
		lag: record.NewHDR(int64(10 * time.Second))}
}

// launch starts the sender's thread (senderSched), sending from start to
// end (CLOCK_MONOTONIC ns), and returns the notes of what the thread runs
// without (--allow-degraded).
func (s *sender) launch(start, end int64, hk *rt.Housekeeping, allowDegraded bool) ([]string, error) {
	s.start, s.end = start, end
	th, a, err := startThread(senderSched(s.spec, hk, allowDegraded), nil, s.run)
	if err != nil {
		return nil, fmt.Errorf("sender to %s: %w", s.spec.Endpoint, err)
	}
	s.thread, s.applied = th, a
	var degraded []string
	for _, d := range s.applied.Notes {
		degraded = append(degraded, fmt.Sprintf("sender to %s: %s", s.spec.Endpoint, d))
	}
	return degraded, nil
}

// halt tells the sender to stop; wait waits for its thread.
func (s *sender) halt() { s.stop.Store(true) }

func (s *sender) wait() {
	if s.thread != nil {
		s.thread.Wait()
	}
}

// run is the sender thread: event n is due at start + pacer.Next(n) and goes
// to socket n % count; the events due now go out in sendmmsg batches of at
// most 64, the stop flag and the end checked before each; between batches
// the thread sleeps to the next due time (timer slack 1 ns; a real-time
// sender in a raw system call, rt.SleepUntilRaw, so that it never spins in
// the Go runtime's system-call exit behind a SCHED_OTHER runtime thread).
// A late event still goes out (its lateness is the send lag), unless it
// is more than catchUp(spec) late: then the sender jumps to the first
// event within that (pacer.Due, O(1)) and the events it skips count as
// due and not sent, so the rate error marks the trial.
func (s *sender) run(a rt.Applied) {
	count := uint64(len(s.group.FDs()))
	dst := make([]int, 0, 64)
	sleep := rt.SleepUntil
	if a.RealTime() {
		sleep = rt.SleepUntilRaw
	}
	horizon := int64(catchUp(s.spec))
	var n uint64
	for {
		if s.stop.Load() {
			break
		}
		now := rt.Monotonic()
		if now >= s.end {
			break
		}
		due := s.start + int64(s.pacer.Next(n))
		if due > now {
			wake := min(due, s.end, now+int64(10*time.Millisecond))
			sleep(wake)
			continue
		}
		if now-due > horizon {
			n = max(n, s.pacer.Due(time.Duration(now-horizon-s.start)))
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
		if len(dst) == 0 {
			continue // jumped to an event not due yet (a burst's next interval)
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
	s.due = dueBefore(s.pacer, n, min(s.ended, s.end)-s.start)
}

// dueBefore is how many events pacer p has due before offset until (ns
// from its start), at least n (the events before n were due already).
// O(1) (pace.Pacer.Due): a sender far behind never walks its missed
// events.
func dueBefore(p pace.Pacer, n uint64, until int64) uint64 {
	return max(n, p.Due(time.Duration(until)))
}

// maxCatchUp is how late a sender still sends an event: later ones are
// skipped (catchUp). A second covers the stalls a trial measures (noise
// holding the sender's CPU for 100 ms sends every message late, and the
// send lag shows it) while a sender that cannot keep up at all (a rate
// beyond its CPU) stops sending ever older messages at full speed.
const maxCatchUp = time.Second

// catchUp is the most an event of traffic t may be late and still be
// sent: maxCatchUp, or the interval when longer, so that a socket's
// message is skipped only when the next one to it is due too.
func catchUp(t scenario.Traffic) time.Duration {
	return max(maxCatchUp, sendInterval(t))
}
