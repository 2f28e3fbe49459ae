package probe_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// countRx is a receiver whose sockets are always empty; it counts its
// calls and, every stallEvery-th call (0: never), busy-waits stall ns.
type countRx struct {
	calls, stallEvery int
	stall             int64
}

var _ udp.Receiver = (*countRx)(nil)

func (c *countRx) Recv(int) (int, int, unix.Errno) {
	c.calls++
	if c.stallEvery > 0 && c.calls%c.stallEvery == 0 {
		for end, i := rt.Monotonic()+c.stall, 0; i < 1e9 && rt.Monotonic() < end; i++ {
		}
	}
	return 0, 0, unix.EAGAIN
}

func (c *countRx) Msg(int) []byte { return nil }

// interleaved builds a loop over 3 fake sockets alternating two countRx
// variants in ABBA blocks of block ticks of 1 ms: warm-up ticks, then
// measured ticks, then 4 tail ticks (HardStop).
func interleaved(t *testing.T, catchUp bool, block, warm, measured uint64, rxs [2]*countRx) (*probe.Loop, *probe.Drain, *rt.Ticker) {
	t.Helper()
	return interleavedControls(t, catchUp, block, warm, measured, rxs, 0)
}

// interleavedControls is interleaved with k drift controls per tick.
func interleavedControls(t *testing.T, catchUp bool, block, warm, measured uint64, rxs [2]*countRx, k int) (*probe.Loop, *probe.Drain, *rt.Ticker) {
	t.Helper()
	ms := int64(time.Millisecond)
	recs := []*probe.Recorders{probe.NewRecorders(seedLayout), probe.NewRecorders(seedLayout)}
	d := probe.NewDrain(probe.DrainConfig{FDs: []int{1, 2, 3}, Receiver: rxs[0], Clock: clock(t), Set: recs[0].Set, Controls: k})
	tk := rt.NewTicker(rt.Monotonic()+2*ms, ms, catchUp)
	// Catch-up never skips, however long the goroutine is kept off its CPU
	// (DefaultMaxBacklog's 100 ticks are 100 ms here; stalls of 100–260 ms
	// of a non-RT goroutine were seen under load).
	tk.SetMaxBacklog(1 << 40)
	il, err := probe.NewInterleave(probe.InterleaveConfig{BlockNs: int64(block) * ms, WindowNs: int64(measured) * ms,
		Order: []uint8{0, 1, 1, 0}, Receivers: []udp.Receiver{rxs[0], rxs[1]}, Recs: recs})
	if err != nil {
		t.Fatal(err)
	}
	l := &probe.Loop{Ticker: tk, Probe: d, Drain: d, Rec: recs[0], Interleave: il,
		MeasureFrom: tk.Deadline(warm), MeasureUntil: tk.Deadline(warm + measured), HardStop: tk.Deadline(warm + measured + 4),
		Wakeups: record.NewRing[record.Wakeup](1024)}
	return l, d, tk
}

func runLoop(t *testing.T, l *probe.Loop) {
	t.Helper()
	runBoundedLoop(t, l)
	if l.Errno != 0 {
		t.Fatalf("Errno %v", unix.Errno(l.Errno))
	}
	l.FinishInterleave()
}

// TestLoopInterleave runs two variants in ABBA blocks of 5 ticks over a
// 40-tick window (catch-up: no tick can be dropped, so the counts are
// exact): 8 blocks, each of one variant, in the order 0 1 1 0 0 1 1 0;
// each variant's histograms hold exactly its blocks' calls and wakeups,
// and each wakeup's deadline maps to the variant that ran it.
func TestLoopInterleave(t *testing.T) {
	rxs := [2]*countRx{{}, {}}
	l, d, tk := interleaved(t, true, 5, 6, 40, rxs)
	runLoop(t, l)
	il := l.Interleave
	if il.Closed != 8 || il.Dropped != 0 {
		t.Fatalf("%d blocks closed (%d dropped), want 8", il.Closed, il.Dropped)
	}
	want := []uint8{0, 1, 1, 0, 0, 1, 1, 0}
	var calls, ticks [2]uint64
	for i, b := range il.Blocks[:il.Closed] {
		if b.Seq != int64(i) || b.Variant != want[i] || b.StartNs != tk.Deadline(6+5*uint64(i)) || b.EndNs != b.StartNs+5*int64(time.Millisecond) {
			t.Errorf("block %d = seq %d variant %d [%d, %d); want seq %d variant %d from deadline %d, 5 ms", i, b.Seq, b.Variant, b.StartNs, b.EndNs, i, want[i], tk.Deadline(6+5*uint64(i)))
		}
		if b.Ticks != 5 || b.Calls != 15 || b.EAGAIN != 15 || b.Data != 0 || b.SumTicks == 0 {
			t.Errorf("block %d: %d ticks, %d calls (%d EAGAIN, %d data), Σ %d ticks; want 5, 15 EAGAIN, Σ > 0", i, b.Ticks, b.Calls, b.EAGAIN, b.Data, b.SumTicks)
		}
		if b.WakeupMaxNs < 0 {
			t.Errorf("block %d: wakeup max %d ns", i, b.WakeupMaxNs)
		}
		calls[b.Variant] += b.Calls
		ticks[b.Variant] += b.Ticks
	}
	for v := range 2 {
		set := il.Recs[v].Set
		if n := set.Linear(record.CallAll).Total(); n != calls[v] || il.Tally[v].Calls != calls[v] {
			t.Errorf("variant %d: histogram %d calls, tally %d, blocks %d; want equal", v, n, il.Tally[v].Calls, calls[v])
		}
		if n := uint64(set.HDR(record.WakeupLatency).Count()); n != ticks[v] || il.Tally[v].Ticks != ticks[v] {
			t.Errorf("variant %d: %d wakeups recorded, tally %d ticks, blocks %d; want equal", v, n, il.Tally[v].Ticks, ticks[v])
		}
	}
	if c := d.Counts(); il.Tally[0].Calls+il.Tally[1].Calls != c.Calls || il.Tally[0].SumTicks+il.Tally[1].SumTicks != c.SumTicks {
		t.Errorf("tallies %d + %d calls (Σ %d + %d ticks), drain %d (Σ %d): the variants must partition the calls",
			il.Tally[0].Calls, il.Tally[1].Calls, il.Tally[0].SumTicks, il.Tally[1].SumTicks, c.Calls, c.SumTicks)
	}
	// Both receivers ran every tick of their blocks, warm-up and tail
	// included: 50 ticks of 3 calls between them.
	if got := rxs[0].calls + rxs[1].calls; got != 3*int(l.Ticks) || rxs[0].calls == 0 || rxs[1].calls == 0 {
		t.Errorf("receivers made %d + %d calls over %d ticks; want 3 per tick, both used", rxs[0].calls, rxs[1].calls, l.Ticks)
	}
	l.Wakeups.Drain(func(w *record.Wakeup) {
		if v, want := il.VariantAt(w.DeadlineNs, l.MeasureFrom), int(want[(w.Tick-6)/5]); v != want {
			t.Errorf("tick %d: VariantAt %d, ran %d", w.Tick, v, want)
		}
	})
}

// TestLoopInterleaveControls runs the drift controls in an interleaved
// loop: each block's controls go to that block's variant. Per block, the
// controls ran in every tick that did not skip them (K calls of each);
// each variant's control histograms and tally hold exactly its blocks'
// calls and sums, and the two variants partition the drain's.
func TestLoopInterleaveControls(t *testing.T) {
	const k = 4
	rxs := [2]*countRx{{}, {}}
	l, d, _ := interleavedControls(t, true, 5, 6, 40, rxs, k)
	runLoop(t, l)
	il := l.Interleave
	if il.Closed == 0 {
		t.Fatalf("no block closed")
	}
	var null, loop, nullSum, loopSum, ran [2]uint64
	for i, b := range il.Blocks[:il.Closed] {
		if b.ControlSkips > b.Ticks || b.NullCalls != k*(b.Ticks-b.ControlSkips) || b.LoopCalls != b.NullCalls {
			t.Errorf("block %d: %d ticks, %d skipped controls, %d null calls, %d loop runs; want %d× the ticks that ran them", i, b.Ticks, b.ControlSkips, b.NullCalls, b.LoopCalls, k)
		}
		if b.NullCalls > 0 && (b.NullSumTicks == 0 || b.LoopSumTicks == 0) {
			t.Errorf("block %d: %d calls summing to %d and %d ticks", i, b.NullCalls, b.NullSumTicks, b.LoopSumTicks)
		}
		v := b.Variant
		null[v], loop[v], nullSum[v], loopSum[v] = null[v]+b.NullCalls, loop[v]+b.LoopCalls, nullSum[v]+b.NullSumTicks, loopSum[v]+b.LoopSumTicks
		ran[v] += b.Ticks - b.ControlSkips
	}
	for v := range 2 {
		set, tl := il.Recs[v].Set, il.Tally[v]
		if n := uint64(set.HDR(record.NullSyscall).Count()); n != null[v] || tl.NullCalls != null[v] || tl.NullSumTicks != nullSum[v] {
			t.Errorf("variant %d: %d null calls recorded, tally %d (Σ %d), blocks %d (Σ %d); want equal", v, n, tl.NullCalls, tl.NullSumTicks, null[v], nullSum[v])
		}
		if n := uint64(set.HDR(record.UserLoop).Count()); n != loop[v] || tl.LoopCalls != loop[v] || tl.LoopSumTicks != loopSum[v] {
			t.Errorf("variant %d: %d loop runs recorded, tally %d (Σ %d), blocks %d (Σ %d); want equal", v, n, tl.LoopCalls, tl.LoopSumTicks, loop[v], loopSum[v])
		}
		if ran[v] == 0 {
			t.Logf("variant %d: every tick skipped its controls (a loaded machine)", v)
		}
	}
	if c := d.Counts(); null[0]+null[1] != c.NullCalls || nullSum[0]+nullSum[1] != c.NullSumTicks || loopSum[0]+loopSum[1] != c.LoopSumTicks {
		t.Errorf("blocks %d + %d null calls, drain %d: the variants must partition the controls", null[0], null[1], c.NullCalls)
	}
}

// TestLoopInterleaveSkips stalls the drain for 7 ms every 40 calls on a
// 1 ms skip-mode ticker with 3 ms blocks, so ticks are skipped past block
// ends (some blocks get no tick at all). The blocks still partition the
// window: Seq strictly increases, their ticks and missed ticks sum to the
// loop's, and the variants' tallies to the drain's counts.
func TestLoopInterleaveSkips(t *testing.T) {
	rxs := [2]*countRx{{stallEvery: 40, stall: 7 * int64(time.Millisecond)}, {stallEvery: 40, stall: 7 * int64(time.Millisecond)}}
	l, d, _ := interleaved(t, false, 3, 4, 120, rxs)
	runLoop(t, l)
	il := l.Interleave
	if l.MissedTicks == 0 {
		t.Fatal("no tick was missed: the stall did not happen")
	}
	if il.Closed == 0 {
		// The goroutine was kept off its CPU from before the window to
		// past its end: the first Wait skipped all of it, no block ran,
		// and the window's 120 deadlines are missed at the end, in the
		// tail variant's tally (Loop.Run). Seen once in 60 runs under load:
		// the first tick came ≥ 126 ms after the ticker's start.
		t.Logf("no block ran: the first tick woke %v after the window began", time.Duration(l.FirstTickNs-l.MeasureFrom))
		if l.MeasuredTicks != 0 || l.MissedTicks != 120 || l.MissedAtEnd != 120 {
			t.Errorf("no block closed: %d ticks, %d missed (%d at the end); want 0, the window's 120, all at the end", l.MeasuredTicks, l.MissedTicks, l.MissedAtEnd)
		}
	}
	var ticks, missed, calls uint64
	prev := int64(-1)
	for _, b := range il.Blocks[:il.Closed] {
		if b.Seq <= prev || b.EndNs <= b.StartNs {
			t.Errorf("block seq %d after %d, [%d, %d)", b.Seq, prev, b.StartNs, b.EndNs)
		}
		prev = b.Seq
		ticks, missed, calls = ticks+b.Ticks, missed+b.MissedTicks, calls+b.Calls
	}
	if ticks != l.MeasuredTicks || missed+unblocked(il, l) != l.MissedTicks || calls != d.Counts().Calls {
		t.Errorf("blocks: %d ticks, %d missed, %d calls; loop %d, %d, drain %d", ticks, missed, calls, l.MeasuredTicks, l.MissedTicks, d.Counts().Calls)
	}
	if got := il.Tally[0].Ticks + il.Tally[1].Ticks; got != l.MeasuredTicks {
		t.Errorf("tallies hold %d ticks, loop %d", got, l.MeasuredTicks)
	}
	// Missed at the window's end too: a skip across it is its last
	// block's (and variant's).
	if got := il.Tally[0].MissedTicks + il.Tally[1].MissedTicks; got != l.MissedTicks {
		t.Errorf("tallies hold %d missed ticks, loop %d (%d at the end)", got, l.MissedTicks, l.MissedAtEnd)
	}
}

// unblocked is how many of the loop's missed ticks no block holds: those
// of a window no block ran in (all missed at the end; see
// TestLoopInterleaveSkips), else none.
func unblocked(il *probe.Interleave, l *probe.Loop) uint64 {
	if il.Closed == 0 {
		return l.MissedAtEnd
	}
	return 0
}

// TestBlockSwitchAllocs: the block switch the loop makes between ticks
// allocates nothing.
func TestBlockSwitchAllocs(t *testing.T) {
	rxs := [2]*countRx{{}, {}}
	l, d, _ := interleaved(t, true, 5, 0, 1000, rxs)
	ms := int64(time.Millisecond)
	l.OpenBlock(l.MeasureFrom)
	at := l.MeasureFrom
	if a := testing.AllocsPerRun(100, func() {
		at += 5 * ms
		l.NextBlock(at)
	}); a != 0 {
		t.Errorf("block switch allocs %v, want 0", a)
	}
	if l.Interleave.Closed != 101 || d.Receiver() != udp.Receiver(rxs[1]) {
		t.Errorf("%d blocks closed, receiver %p; want 101 and variant 1's (block 101 of 0 1 1 0)", l.Interleave.Closed, d.Receiver())
	}
}

// BenchmarkBlockSwitch is the cost of one block switch (ns/switch): it
// runs once per block, between two ticks.
func BenchmarkBlockSwitch(b *testing.B) {
	rxs := [2]*countRx{{}, {}}
	recs := []*probe.Recorders{probe.NewRecorders(seedLayout), probe.NewRecorders(seedLayout)}
	d := probe.NewDrain(probe.DrainConfig{FDs: []int{1}, Receiver: rxs[0], Clock: clock(b), Set: recs[0].Set})
	il, err := probe.NewInterleave(probe.InterleaveConfig{BlockNs: 1, WindowNs: 1 << 20,
		Order: []uint8{0, 1, 1, 0}, Receivers: []udp.Receiver{rxs[0], rxs[1]}, Recs: recs})
	if err != nil {
		b.Fatal(err)
	}
	l := &probe.Loop{Probe: d, Drain: d, Rec: recs[0], Interleave: il, MeasureFrom: 0, MeasureUntil: 1 << 62}
	l.OpenBlock(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if il.Closed == len(il.Blocks) {
			il.Closed = 0
		}
		l.NextBlock(int64(i + 1))
	}
}

// runBoundedLoop runs l.Run on a goroutine and waits for it, at most 10 s
// (then it stops l and fails t): a loop past its HardStop is a bug.
func runBoundedLoop(t *testing.T, l *probe.Loop) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); l.Run() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		l.Stop.Store(true)
		<-done
		t.Fatal("Loop.Run did not end by HardStop within 10 s")
	}
}
