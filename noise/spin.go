package noise

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// spinWorker is the spin kind: busy loops, counted in loop iterations.
type spinWorker struct{}

func (*spinWorker) phase(int64)        {}
func (*spinWorker) finish(*slot) error { return nil }

// step runs one batch of 2^16 iterations (tens of µs).
func (*spinWorker) step(s *slot, _ int64) unix.Errno {
	spinSink.Store(spinBatch(spinSink.Load()))
	s.units.Add(1 << 16)
	return 0
}

// spinBatch is 2^16 dependent integer operations. It is a real call (not
// inlined) so its prologue is a preemption point even with
// GODEBUG=asyncpreemptoff=1: a stop-the-world never waits on a spinner.
//
//go:noinline
func spinBatch(x uint64) uint64 {
	for i := 0; i < 1<<16; i++ {
		x += uint64(i) ^ x>>3
	}
	return x
}

// spinSink keeps spinBatch's result alive so the loop is not optimised away.
var spinSink atomic.Uint64
