package record

import "sync/atomic"

// Ring is a single-producer single-consumer ring of T, preallocated. The
// real-time thread Puts, one non-real-time goroutine Drains. No locks, no
// allocation, no channels: only two atomic indices, read and written with
// sync/atomic's functions (intrinsics; NOSPLIT assembly under the race
// detector) rather than atomic.Uint64's methods, which under the race
// detector are calls with a stack-check prologue: a preemption point in
// Put.
type Ring[T any] struct {
	buf     []T
	mask    uint64
	head    uint64 // next slot to write (producer)
	tail    uint64 // next slot to read (consumer)
	dropped uint64
}

// NewRing returns a ring holding at least n items (rounded up to a power
// of two). Every page of its buffer is written once here (see prefault),
// so Put never takes a page fault.
func NewRing[T any](n int) *Ring[T] {
	size := uint64(1)
	for size < uint64(n) {
		size <<= 1
	}
	r := &Ring[T]{buf: make([]T, size), mask: size - 1}
	prefault(r.buf)
	return r
}

// Put appends v; it returns false and counts a drop when the ring is full.
// Producer only. No allocation, no preemption point.
//
//go:nosplit
func (r *Ring[T]) Put(v T) bool {
	h := atomic.LoadUint64(&r.head)
	if h-atomic.LoadUint64(&r.tail) > r.mask {
		atomic.AddUint64(&r.dropped, 1)
		return false
	}
	r.buf[h&r.mask] = v
	atomic.StoreUint64(&r.head, h+1)
	return true
}

// Drain calls f for every item available now, in order, and returns how
// many it passed. Consumer only.
func (r *Ring[T]) Drain(f func(*T)) int {
	t := atomic.LoadUint64(&r.tail)
	h := atomic.LoadUint64(&r.head)
	for i := t; i < h; i++ {
		f(&r.buf[i&r.mask])
	}
	atomic.StoreUint64(&r.tail, h)
	return int(h - t)
}

// Dropped is the number of items Put could not store.
func (r *Ring[T]) Dropped() uint64 { return atomic.LoadUint64(&r.dropped) }

// Wakeup is one tick of a real-time reader, as logged per wakeup.
// Times are CLOCK_MONOTONIC nanoseconds.
type Wakeup struct {
	Tick       uint64 // k in start + k*period
	DeadlineNs int64  // absolute deadline, CLOCK_MONOTONIC ns
	LatencyNs  int64  // wake time − deadline, ns
	DrainNs    int64  // time spent draining all sockets, ns
	Messages   uint32 // messages received this tick
	Calls      uint32 // recv calls this tick (data + EAGAIN + errors)
	EAGAIN     uint32 // calls that returned EAGAIN
	Missed     uint32 // ticks skipped before this one (overrun)
	// VolCS and InvolCS are the reader thread's voluntary and involuntary
	// context switches since the previous wakeup (getrusage(RUSAGE_THREAD)
	// read at the tick boundary; 0 when not read).
	VolCS, InvolCS uint32
}

// Work is what a background source really did, so a report can show that
// its noise was there: Count units of Unit in Elapsed.
type Work struct {
	Unit    string
	Count   uint64
	Elapsed int64 // ns
}

// PerSec is Count per second of Elapsed.
func (w Work) PerSec() float64 {
	if w.Elapsed <= 0 {
		return 0
	}
	return float64(w.Count) / (float64(w.Elapsed) / 1e9)
}
