package probe

import (
	"errors"
	"fmt"
	"math"

	"github.com/rtload/rtload/net/udp"
)

// Interleave alternates a Loop's variants in blocks (scenario
// `interleave:`): variants that differ only in what the reader does per
// call (its receiver) share one real-time thread, one set of sockets and
// one measured window, and take turns in blocks of BlockNs by deadline,
// in the order Order gives (ABBA: 0 1 1 0). Each variant has its own
// receiver and Recorders, so its histograms are its own, and each block's
// headline sums are kept (Blocks): the paired samples of a verdict that
// the machine's slow noise (seconds, shared by adjacent blocks) cancels
// out of.
//
// The block grid is fixed by the measured window: block j holds the ticks
// whose deadline lies in [MeasureFrom + j·BlockNs, MeasureFrom +
// (j+1)·BlockNs), the last one cut at MeasureUntil; warm-up ticks (j < 0)
// alternate on the same grid, unrecorded, and the tail keeps the variant
// of the last block. So the variant of a tick is a pure function of its
// deadline (VariantAt), which the writer uses to route wakeup records.
//
// The switch runs on the reader thread between two ticks, after a tick's
// work and before its sleep, when the next deadline (one period on) is in
// the next block, or, when ticks were skipped past a block's end, right
// after the wakeup and before the Step. It is nosplit, allocates nothing
// and makes no system call: a block's sums are the differences of the
// loop's and the drain's cumulative counters (Tally) at its two ends,
// stored into Blocks, preallocated for the whole window. Nothing changes
// inside a Step or between two reads of a call.
type Interleave struct {
	// BlockNs is the block length (ns), > 0.
	BlockNs int64
	// Order is the variant of block j: Order[j mod len(Order)], each an
	// index into Receivers and Recs.
	Order []uint8
	// Receivers and Recs are each variant's receiver and Recorders.
	Receivers []udp.Receiver
	Recs      []*Recorders
	// Blocks[:Closed] are the measured blocks closed so far, in order;
	// Dropped counts blocks beyond Blocks' room (none when the window ran
	// as planned). Read them after Run returned (and Finish).
	Blocks  []Block
	Closed  int
	Dropped uint64
	// Tally is each variant's counters over the whole trial (the drain's
	// message accounting over warm-up and tail too, as Drain.Counts; calls
	// and ticks measured only). Read after Run returned (and Finish).
	Tally []Tally

	// The block running: its number, variant, grid start, end (the first
	// deadline past it), whether it is measured, the tally at its start
	// and its largest wakeup latency so far.
	seq, startNs, end int64
	cur               uint8
	measured          bool
	start, now        Tally // now: closeBlock's scratch
	wakeMax           int64
	began, finished   bool
}

// Tally is what a loop and its drain have counted (cumulative, or a
// variant's sum over its blocks): the drain's Counts and the loop's
// measured ticks, overruns, missed ticks, backlog skips and spikes.
type Tally struct {
	Counts
	Ticks, Overruns, MissedTicks, BacklogSkips, Spikes uint64
}

// Block is one measured block: the ticks of one variant whose deadlines
// (CLOCK_MONOTONIC ns) fell in [StartNs, EndNs), and what they counted
// (the differences of the Tally at its ends). WakeupMaxNs is its largest
// wakeup latency (ns).
type Block struct {
	Seq            int64
	Variant        uint8
	StartNs, EndNs int64
	Tally
	WakeupMaxNs int64
}

// InterleaveConfig configures NewInterleave.
type InterleaveConfig struct {
	// BlockNs is the block length (ns), > 0; WindowNs the measured window
	// (ns, > 0), which sizes Blocks.
	BlockNs, WindowNs int64
	// Order is the block order (see Interleave.Order): 2 to 255 entries,
	// each an index into Receivers and Recs.
	Order []uint8
	// Receivers and Recs: one per variant, none nil.
	Receivers []udp.Receiver
	Recs      []*Recorders
}

// maxBlocks bounds the blocks one window may hold (Blocks is
// preallocated): 10 million, 400 MB of blocks.
const maxBlocks = 10_000_000

// NewInterleave checks cfg and preallocates the blocks of its window
// (every page written once). Errors name the field that is wrong.
func NewInterleave(cfg InterleaveConfig) (*Interleave, error) {
	nv := len(cfg.Receivers)
	switch {
	case cfg.BlockNs <= 0 || cfg.WindowNs <= 0:
		return nil, fmt.Errorf("interleave: block %d ns, window %d ns: both must be > 0", cfg.BlockNs, cfg.WindowNs)
	case nv < 2 || nv != len(cfg.Recs) || nv > math.MaxUint8:
		return nil, fmt.Errorf("interleave: %d receivers and %d recorders: want the same number, 2–255", nv, len(cfg.Recs))
	case len(cfg.Order) < 2 || len(cfg.Order) > math.MaxUint8:
		return nil, fmt.Errorf("interleave: order of %d blocks: want 2–255", len(cfg.Order))
	}
	for _, v := range cfg.Order {
		if int(v) >= nv {
			return nil, fmt.Errorf("interleave: order names variant %d of %d", v, nv)
		}
	}
	for i := range nv {
		if cfg.Receivers[i] == nil || cfg.Recs[i] == nil || cfg.Recs[i].Set == nil {
			return nil, fmt.Errorf("interleave: variant %d has no receiver or recorders", i)
		}
	}
	n := cfg.WindowNs/cfg.BlockNs + 2 // the last, partial block and one to spare
	if n > maxBlocks {
		return nil, errors.New("interleave: more than 10 million blocks in the window: a longer block or a shorter duration")
	}
	il := &Interleave{BlockNs: cfg.BlockNs, Order: append([]uint8(nil), cfg.Order...),
		Receivers: append([]udp.Receiver(nil), cfg.Receivers...), Recs: append([]*Recorders(nil), cfg.Recs...),
		Blocks: make([]Block, n), Tally: make([]Tally, nv)}
	prefault(il.Blocks)
	return il, nil
}

// VariantAt is the variant that runs the tick of deadline d (ns) in a
// window measured from from (Loop.MeasureFrom): Order of d's block.
// Measured ticks only: the tail keeps the last block's variant.
func (il *Interleave) VariantAt(d, from int64) int {
	return int(il.Order[mod(floorDiv(d-from, il.BlockNs), int64(len(il.Order)))])
}

// floorDiv is ⌊a / b⌋ for b > 0.
//
//go:nosplit
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// mod is a mod n in [0, n) for n > 0.
//
//go:nosplit
func mod(a, n int64) int64 {
	m := a % n
	if m < 0 {
		m += n
	}
	return m
}

// tally stores the loop's and its drain's counters now into t (a field of
// the Interleave, not a value on the stack: the nosplit chain from Run
// has a fixed stack budget, and a Tally is some 200 bytes).
//
//go:nosplit
func (l *Loop) tally(t *Tally) {
	t.Ticks, t.Overruns, t.MissedTicks, t.BacklogSkips, t.Spikes = l.MeasuredTicks, l.Overruns, l.MissedTicks, l.BacklogSkips, l.Spikes
	t.Counts = Counts{}
	if l.Drain != nil {
		t.Counts = l.Drain.c
	}
}

// add adds now − start to t (LastErrno: now's, when an error came since).
//
//go:nosplit
func (t *Tally) add(now, start *Tally) {
	t.Calls += now.Calls - start.Calls
	t.Data += now.Data - start.Data
	t.EAGAIN += now.EAGAIN - start.EAGAIN
	t.SumTicks += now.SumTicks - start.SumTicks
	if now.Errors != start.Errors {
		t.Errors += now.Errors - start.Errors
		t.LastErrno = now.LastErrno
	}
	t.Messages += now.Messages - start.Messages
	t.Bytes += now.Bytes - start.Bytes
	t.Lost += now.Lost - start.Lost
	t.Reordered += now.Reordered - start.Reordered
	t.Duplicates += now.Duplicates - start.Duplicates
	t.Short += now.Short - start.Short
	t.NullCalls += now.NullCalls - start.NullCalls
	t.NullSumTicks += now.NullSumTicks - start.NullSumTicks
	t.LoopCalls += now.LoopCalls - start.LoopCalls
	t.LoopSumTicks += now.LoopSumTicks - start.LoopSumTicks
	t.ControlSkips += now.ControlSkips - start.ControlSkips
	t.Ticks += now.Ticks - start.Ticks
	t.Overruns += now.Overruns - start.Overruns
	t.MissedTicks += now.MissedTicks - start.MissedTicks
	t.BacklogSkips += now.BacklogSkips - start.BacklogSkips
	t.Spikes += now.Spikes - start.Spikes
}

// openBlock starts the block holding deadline at: its variant's receiver
// and Recorders become the drain's and the loop's. From the end of the
// measured window on (the tail) the variant stays.
//
//go:nosplit
func (l *Loop) openBlock(at int64) {
	il := l.Interleave
	il.began = true
	il.seq = floorDiv(at-l.MeasureFrom, il.BlockNs)
	il.startNs = l.MeasureFrom + il.seq*il.BlockNs
	l.tally(&il.start)
	il.wakeMax = 0
	if at >= l.MeasureUntil {
		il.measured, il.end = false, math.MaxInt64
		return
	}
	il.measured = il.seq >= 0
	il.end = il.startNs + il.BlockNs
	if il.measured && il.end > l.MeasureUntil {
		il.end = l.MeasureUntil
	}
	v := il.Order[mod(il.seq, int64(len(il.Order)))]
	il.cur = v
	if l.Drain != nil {
		l.Drain.rx = il.Receivers[v]
	}
	l.install(il.Recs[v])
}

// closeBlock adds the running block's counts to its variant's Tally and,
// when measured, stores it in Blocks, ending at endNs.
//
//go:nosplit
func (l *Loop) closeBlock(endNs int64) {
	il := l.Interleave
	now := &il.now
	l.tally(now)
	il.Tally[il.cur].add(now, &il.start)
	if !il.measured {
		return
	}
	if il.Closed == len(il.Blocks) {
		il.Dropped++
		return
	}
	b := &il.Blocks[il.Closed]
	b.Seq, b.Variant, b.StartNs, b.EndNs, b.WakeupMaxNs = il.seq, il.cur, il.startNs, endNs, il.wakeMax
	b.Tally = Tally{}
	b.add(now, &il.start)
	il.Closed++
}

// nextBlock ends the running block and starts the one holding deadline at.
//
//go:nosplit
func (l *Loop) nextBlock(at int64) {
	l.closeBlock(l.Interleave.end)
	l.openBlock(at)
}

// FinishInterleave closes the block running when the loop ended (cut at
// the deadline after its last tick, for a loop stopped early), so that
// Blocks and Tally hold every tick. Call it once, after Run returned.
func (l *Loop) FinishInterleave() {
	il := l.Interleave
	if il == nil || !il.began || il.finished {
		return
	}
	il.finished = true
	end := il.end
	if next := l.lastDeadline + (l.Ticker.Deadline(1) - l.Ticker.Deadline(0)); next < end {
		end = next
	}
	l.closeBlock(end)
}

// Current is the variant running when the loop ended (the tail's). Read
// it after Run returned.
func (il *Interleave) Current() int { return int(il.cur) }
