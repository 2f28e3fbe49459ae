package probe

import (
	"sync/atomic"
	"unsafe"

	"github.com/rtload/rtload/record"
)

// Recorders is one interval's record.Set, which a reader's real-time
// thread records into, plus the counters it had reached when it handed the
// set over. With intervals (soak runs) the thread swaps between two of
// them: it hands the full one to a non-real-time writer and records into
// the spare, so the writer can read, merge and reset a set while nothing
// writes to it.
type Recorders struct {
	// Set holds the Drain's per-call classes and the Loop's per-tick ones.
	Set *record.Set
	// FromNs and ToNs are the deadlines of the first tick recorded into the
	// set and of the tick at which it was handed over (CLOCK_MONOTONIC ns).
	FromNs, ToNs int64
	// Counts is the Drain's accounting and Ticks, Overruns, MissedTicks,
	// BacklogSkips, Spikes the Loop's counters when the set was handed over
	// (cumulative; the writer reads these, never the Loop's own fields,
	// while the loop runs).
	Counts                                             Counts
	Ticks, Overruns, MissedTicks, BacklogSkips, Spikes uint64
}

// NewRecorders returns Recorders holding a new record.Set of every class,
// its linear recorders in layout l.
func NewRecorders(l record.Layout) *Recorders { return &Recorders{Set: record.NewSet(l)} }

// Handoff passes full Recorders from the real-time thread to the writer
// and spare ones back: two atomic pointers, no lock, no channel. They are
// unsafe.Pointers under sync/atomic's pointer functions rather than
// atomic.Pointer, whose methods keep a preemption point under the race
// detector (see Flag).
type Handoff struct {
	full, spare unsafe.Pointer // *Recorders
	// Late counts interval ends at which the writer had not yet returned a
	// spare set; the thread then keeps recording into the current set and
	// retries at the next tick (the interval grows, nothing is lost).
	Late Uint64
}

// NewHandoff returns a handoff holding spare as the first spare set.
func NewHandoff(spare *Recorders) *Handoff {
	h := &Handoff{}
	h.Give(spare)
	return h
}

// Take returns the set handed over by the real-time thread, or nil. The
// writer must Give a set back (usually the same one, reset) before the
// thread can hand over the next.
func (h *Handoff) Take() *Recorders { return (*Recorders)(atomic.SwapPointer(&h.full, nil)) }

// Give makes r the next spare set.
func (h *Handoff) Give(r *Recorders) { atomic.StorePointer(&h.spare, unsafe.Pointer(r)) }

// swap is called by the real-time thread: it hands cur over and returns the
// spare, or returns nil (and counts Late) when no spare is ready or the
// writer has not taken the previous set.
//
//go:nosplit
func (h *Handoff) swap(cur *Recorders) *Recorders {
	if atomic.LoadPointer(&h.full) != nil {
		h.Late.Add(1)
		return nil
	}
	next := (*Recorders)(atomic.SwapPointer(&h.spare, nil))
	if next == nil {
		h.Late.Add(1)
		return nil
	}
	atomic.StorePointer(&h.full, unsafe.Pointer(cur))
	return next
}
