package probe

import "sync/atomic"

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
