package probe

import (
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/rt"
)

// Classify stores one measured call as the measured path does (got: the
// socket returned data earlier in this drain; the call's position in the
// tick is pos) and flushes it into the Set.
func (d *Drain) Classify(pos uint32, dt uint64, errno unix.Errno, got bool) {
	d.Sample(pos, dt, errno, got)
	d.flush()
}

// Sample stores one measured call as called does, without flushing it
// (a data call of 0 messages on socket 0: nothing to read).
func (d *Drain) Sample(pos uint32, dt uint64, errno unix.Errno, got bool) {
	if len(d.perSock) == 0 {
		d.expect, d.seen, d.perSock = make([]uint64, 1), make([]uint64, 1), make([]uint64, 1)
	}
	d.got, d.tick.Calls, d.Measure = got, pos, true
	d.called(0, dt, 0, 0, errno)
}

// Flush records the stored samples into the Set.
func (d *Drain) Flush() { d.flush() }

// StepCalls is Step without the final flush: the measured path alone (a
// drain of at most SampleBuffer calls never flushes inside it).
func (d *Drain) StepCalls() {
	d.tick = Tick{}
	switch d.src {
	case rt.SourceTSC:
		d.drainTSC()
	case rt.SourceTSCFenced:
		d.drainTSCFenced()
	case rt.SourceCycles:
		d.drainCycles()
	default:
		d.drainMonotonic()
	}
}

// Pending is the number of samples stored and not yet flushed.
func (d *Drain) Pending() int { return d.n }

// ThreadSwitches exposes threadSwitches to tests and benchmarks.
func ThreadSwitches(ru *unix.Rusage) (vol, invol uint64, errno unix.Errno) { return threadSwitches(ru) }

// NextBlock exposes the block switch (Loop.nextBlock) to tests and
// benchmarks; OpenBlock the first block's start.
func (l *Loop) NextBlock(at int64) { l.nextBlock(at) }
func (l *Loop) OpenBlock(at int64) { l.openBlock(at) }

// Receiver is the drain's receiver now.
func (d *Drain) Receiver() udp.Receiver { return d.rx }
