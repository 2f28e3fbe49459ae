package engine

import (
	"fmt"
	"time"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/pace"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// sender is one traffic entry's paced sender.
type sender struct {
	spec    scenario.Traffic
	group   *udp.Group
	tx      Injector
	pacer   pace.Pacer
	lag     *record.HDR
	thread  *rt.Thread
	applied rt.Applied // the thread as read back, set by launch
	// stop is set by halt; yield (the trial's, nil: none) by a soak's
	// writer before it collects garbage. Neither is a lock a real-time
	// sender could wait on.
	stop      probe.Flag
	yield     *probe.Flag
	gate      *probe.Gate // holds the thread before its loop until arm (nil: none)
	atGate    probe.Flag  // the thread got there
	sent      uint64
	sentCount probe.Uint64 // sent, readable by the writer while the sender runs
	errs      uint64
	err       error
	start     int64
	end       int64
	ended     int64
	// due is how many messages the pacer had due from start until the
	// sender ended (at most end): what an on-time sender sends.
	due uint64
	// taskBase and taskEnd are the thread's procfs counters when launch
	// returned (read by the launching goroutine) and when its loop ended
	// (read by the thread itself, whose /proc entry goes when it exits);
	// haveTask says both were read. Never read on the real-time thread
	// before its loop: a SCHED_FIFO thread leaving an ordinary system
	// call can spin behind a SCHED_OTHER runtime thread for most of a
	// second (see rt.SleepUntilRaw). (While it read them there, one
	// sender in a make test under load sent 0 of 40000 messages due in a
	// trial; not traced, but that spin fits it.)
	taskBase, taskEnd sysinfo.TaskStats
	baseOK, endOK     bool
	// count is the group's sockets; dst is the batch of socket indexes
	// the loop fills (len maxBatch); horizon is catchUp(spec) in ns. run
	// sets them before the loop.
	count   uint64
	dst     []int
	horizon int64
	// ping is the cache-line ping's lines, one written after each send
	// batch (nil: none).
	ping *probe.PingLines
}

// maxBatch is the most messages one sendmmsg call carries.
const maxBatch = 64

// newSender is traffic entry t into group g through tx, paced by
// senderPacer (seeded with the trial's index for a poisson spread).
func newSender(t scenario.Traffic, g *udp.Group, tx Injector, trialIndex int) *sender {
	return &sender{spec: t, group: g, tx: tx, pacer: senderPacer(t, len(g.FDs()), uint64(trialIndex)+1),
		lag: record.NewHDR(int64(10 * time.Second))}
}

// launch starts the sender's thread (senderSched), which waits at gate
// until arm has set when it sends and the trial opens the gate, and
// returns the notes of what the thread runs without (--allow-degraded).
func (s *sender) launch(gate *probe.Gate, hk *rt.Housekeeping, allowDegraded bool) ([]string, error) {
	s.gate = gate
	th, a, err := rt.Start(senderSched(s.spec, hk, allowDegraded), nil, s.run)
	if err != nil {
		return nil, fmt.Errorf("sender to %s: %w", s.spec.Endpoint, err)
	}
	s.thread, s.applied = th, a
	base, err := sysinfo.ReadTaskStats(s.applied.TID) // off the real-time thread
	s.taskBase, s.baseOK = base, err == nil
	var degraded []string
	for _, d := range s.applied.Degraded {
		degraded = append(degraded, fmt.Sprintf("sender to %s: %s", s.spec.Endpoint, d))
	}
	return degraded, nil
}

// arm sets when the sender sends: from start to end (CLOCK_MONOTONIC
// ns). Call it once its thread is at its gate and before the gate opens.
func (s *sender) arm(start, end int64) { s.start, s.end = start, end }

// halt tells the sender to stop; wait waits for its thread.
func (s *sender) halt() { s.stop.Store(true) }

func (s *sender) wait() {
	if s.thread != nil {
		s.thread.Wait()
	}
}

// run is the sender thread: it sends (loop) from start to end, then counts
// what was due and reads its procfs counters (taskEnd).
func (s *sender) run(a rt.Applied) {
	s.count, s.horizon = uint64(len(s.group.FDs())), int64(catchUp(s.spec))
	if len(s.dst) == 0 {
		s.dst = make([]int, maxBatch)
	}
	n, ran := s.gatedLoop(a.RealTime())
	if !ran {
		return // turned away at the gate: the trial did not start
	}
	s.ended = rt.Monotonic()
	s.due = dueBefore(s.pacer, n, min(s.ended, s.end)-s.start)
	if a.TID != 0 {
		var err error
		s.taskEnd, err = sysinfo.ReadTaskStats(a.TID)
		s.endOK = err == nil
	}
}

// gatedLoop says the thread is at its gate, waits there and, once the
// gate opens, sends (loop); ran is false when it was turned away. Past its
// prologue the thread meets no preemption point (see reader.gatedRun). A
// sender without a gate (tests) sends at once.
func (s *sender) gatedLoop(raw bool) (n uint64, ran bool) {
	s.atGate.Store(true)
	if s.gate != nil && !s.gate.Wait() {
		return 0, false
	}
	return s.loop(raw), true
}

// loop sends event n at start + pacer.Next(n) to socket n % count, and
// returns the first event not sent: the events due now go out in
// sendmmsg batches of at most maxBatch, the stop flag and the end checked
// before each; between batches the thread sleeps to the next due time
// (timer slack 1 ns). A late event still goes out (its lateness is the
// send lag), unless it is more than catchUp(spec) late: then the sender
// jumps to the first event within that (pacer.Due, O(1)) and the events
// it skips count as due and not sent, so the rate error marks the trial.
//
// A real-time sender (raw) sleeps in a raw system call, rt.SleepUntilRaw,
// so that it never spins in the Go runtime's system-call exit behind a
// SCHED_OTHER runtime thread; and the loop is //go:nosplit, as are the
// pacer's and the UDP injector's common paths it calls, so the runtime
// can never preempt it either. (It did: sysmon flags a goroutine that has
// not been rescheduled for 10 ms, which a thread that sleeps raw never
// is, and the next call's stack check parked the sender; its locked
// thread then futex-waited for a SCHED_OTHER runtime thread on a loaded
// CPU to hand it back: 345 and 807 ms in one trial of laight-450 under
// 4 busy loops and 2 dd, send lag max 807 ms.) The only preemption points
// left are deliberate: SafePoint when a soak's writer asks to collect
// garbage, a Poisson pacer's draws, a tap injector's writes and the
// injector's slow path (a full send queue, a failed call).
//
//go:nosplit
func (s *sender) loop(raw bool) (n uint64) {
	for {
		if s.stop.Load() {
			return n
		}
		if s.yield != nil && s.yield.Load() {
			probe.SafePoint() // a soak's writer collects garbage now
		}
		now := rt.Monotonic()
		if now >= s.end {
			return n
		}
		due := s.start + s.offset(n)
		if due > now {
			wake := min(due, s.end, now+int64(10*time.Millisecond))
			if raw {
				rt.SleepUntilRaw(wake)
			} else {
				sleepOther(wake)
			}
			continue
		}
		if now-due > s.horizon {
			n = max(n, s.dueAt(now-s.horizon-s.start))
		}
		k := 0
		for k < len(s.dst) {
			due := s.start + s.offset(n)
			if due > now || due >= s.end {
				break
			}
			s.dst[k] = int(n % s.count)
			k++
			s.lag.RecordSigned(now - due)
			n++
		}
		if k == 0 {
			continue // jumped to an event not due yet (a burst's next interval)
		}
		sent, err := s.tx.Send(s.dst[:k], rt.Monotonic())
		s.sent += uint64(sent)
		s.sentCount.Add(uint64(sent))
		s.ping.Touch()
		if err != nil {
			s.errs++
			s.err = err
			// Skip the failed messages: their sequence numbers were not used.
		}
	}
}

// offset is pace.Pacer.Next(n) in ns, called on the concrete pacer where
// it is Even or Burst (no interface call, no preemption point).
//
//go:nosplit
func (s *sender) offset(n uint64) int64 {
	switch p := s.pacer.(type) {
	case pace.Even:
		return int64(p.Next(n))
	case pace.Burst:
		return int64(p.Next(n))
	}
	return pacerNext(s.pacer, n)
}

// dueAt is pace.Pacer.Due(t) (t in ns from start), like offset.
//
//go:nosplit
func (s *sender) dueAt(t int64) uint64 {
	switch p := s.pacer.(type) {
	case pace.Even:
		return p.Due(time.Duration(t))
	case pace.Burst:
		return p.Due(time.Duration(t))
	}
	return pacerDue(s.pacer, t)
}

// pacerNext and pacerDue call any other pacer (Poisson: math/rand and
// math.Log, with preemption points).
//
//go:noinline
func pacerNext(p pace.Pacer, n uint64) int64 { return int64(p.Next(n)) }

//go:noinline
func pacerDue(p pace.Pacer, t int64) uint64 { return p.Due(time.Duration(t)) }

// sleepOther is a SCHED_OTHER sender's sleep: through the Go runtime
// (rt.SleepUntil), so that a stop-the-world never waits for it. Its
// thread is scheduled like the runtime's own, so the runtime may preempt
// it.
//
//go:noinline
func sleepOther(deadlineNs int64) { rt.SleepUntil(deadlineNs) }

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
