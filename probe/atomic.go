package probe

import (
	"sync/atomic"

	"github.com/rtload/rtload/rt"
)

// Flag, Int64 and Uint64 are the values a real-time loop shares with
// other threads: sync/atomic's typed values again, but with //go:nosplit
// methods over sync/atomic's functions, so that the loop keeps no
// preemption point in any build. (Under the race detector sync/atomic's
// own typed methods, atomic.Bool.Load and the like, are not inlined and
// keep their stack-check prologue: the Go runtime then preempted a reader
// there every 10 ms of "running", and its locked thread slept until a
// SCHED_OTHER thread of the runtime handed it back; on a loaded CPU 0 that
// took 849 ms and emptied whole trials. sync/atomic's functions are
// intrinsics, or under the race detector NOSPLIT assembly.) The zero
// value is false or 0.
type Flag struct{ v uint32 }

// Load reports the flag.
//
//go:nosplit
func (f *Flag) Load() bool { return atomic.LoadUint32(&f.v) != 0 }

// Store sets the flag to b.
//
//go:nosplit
func (f *Flag) Store(b bool) {
	var v uint32
	if b {
		v = 1
	}
	atomic.StoreUint32(&f.v, v)
}

// Int64 is an int64 shared with a real-time loop (see Flag).
type Int64 struct{ v int64 }

// Load returns the value.
//
//go:nosplit
func (x *Int64) Load() int64 { return atomic.LoadInt64(&x.v) }

// Store sets the value to v.
//
//go:nosplit
func (x *Int64) Store(v int64) { atomic.StoreInt64(&x.v, v) }

// Uint64 is a counter shared with a real-time loop (see Flag).
type Uint64 struct{ v uint64 }

// Load returns the count.
//
//go:nosplit
func (x *Uint64) Load() uint64 { return atomic.LoadUint64(&x.v) }

// Add adds d to the count.
//
//go:nosplit
func (x *Uint64) Add(d uint64) { atomic.AddUint64(&x.v, d) }

// Gate holds a trial's real-time threads between their setup and their
// loop, until the engine has every one of them there and has set their
// window: a thread's setup (system calls, Go code with preemption points)
// can wait on the Go runtime's SCHED_OTHER threads for hundreds of ms on
// a loaded machine, and a window set before it ended could pass before
// the thread's first tick (a reader's first tick came 179 ms after a
// 150 ms window had ended). The zero value is closed.
type Gate struct{ v Int64 }

// gatePoll is how often a thread at a closed gate looks again.
const gatePoll = int64(1_000_000) // 1 ms

// Wait blocks the calling thread (raw 1 ms sleeps: no preemption point,
// the thread keeps its P) until Open (true) or Abort (false).
//
//go:nosplit
func (g *Gate) Wait() bool {
	for {
		switch v := g.v.Load(); {
		case v > 0:
			return true
		case v < 0:
			return false
		}
		rt.SleepUntilRaw(rt.Monotonic() + gatePoll)
	}
}

// Open lets every thread at the gate, and every later one, through.
func (g *Gate) Open() { g.v.Store(1) }

// Abort turns every thread at a gate not yet open away (Wait returns
// false); an open gate stays open.
func (g *Gate) Abort() {
	if g.v.Load() == 0 {
		g.v.Store(-1)
	}
}
