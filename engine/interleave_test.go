package engine

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/wakelog"
)

func TestInterleaveOrder(t *testing.T) {
	for n, want := range map[int][]uint8{2: {0, 1, 1, 0}, 3: {0, 1, 2, 2, 1, 0}} {
		if diff := cmp.Diff(want, interleaveOrder(n)); diff != "" {
			t.Errorf("order of %d (-want +got):\n%s", n, diff)
		}
	}
}

const interleavedVariants = `interleave: 100ms
variants:
  - name: recvfrom
    set: {readers[0].method: recvfrom}
  - name: recvmsg
    set: {readers[0].method: recvmsg}
`

// TestRunInterleaved runs seed 000's two methods interleaved in 100 ms
// blocks for 1 s each: one window of 2 s, split into one trial per
// variant. The blocks partition the window in ABBA order, and each
// variant's counts, histograms, wakeups and wakeup log are exactly its
// blocks'; between them the variants read every message sent.
func TestRunInterleaved(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	spec, trials := load(t, e2eYAML+interleavedVariants, "duration=1s")
	dir := t.TempDir()
	sum, err := Run(context.Background(), spec, trials, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Trials) != 2 {
		t.Fatalf("trials = %d, want 2 (one per variant)", len(sum.Trials))
	}
	var received uint64
	seqs := map[int]string{}
	for i, tr := range sum.Trials {
		il, rx := tr.Interleave, tr.Readers[0]
		if il == nil || tr.Index != i || il.Group != 0 || il.BlockNs != int64(100*time.Millisecond) || il.WindowNs != int64(2*time.Second) ||
			!slices.Equal(il.Order, []string{"recvfrom", "recvmsg", "recvmsg", "recvfrom"}) {
			t.Fatalf("trial %d (%s): index %d, interleave %+v", i, tr.Variant, tr.Index, il)
		}
		if rx.Method != tr.Variant {
			t.Errorf("trial %s: reader method %s", tr.Variant, rx.Method)
		}
		var calls, ticks, eagain, span, nullCalls, nullSum, loopSum uint64
		for _, b := range il.Blocks {
			if b.Controls == nil {
				t.Fatalf("%s: block %d without controls", tr.Variant, b.Seq)
			}
			nullCalls, nullSum, loopSum = nullCalls+b.Controls.NullCalls, nullSum+b.Controls.NullSumTicks, loopSum+b.Controls.LoopSumTicks
			if prev, dup := seqs[b.Seq]; dup {
				t.Errorf("block %d in %s and %s", b.Seq, prev, tr.Variant)
			}
			seqs[b.Seq] = tr.Variant
			if want := il.Order[b.Seq%len(il.Order)]; want != tr.Variant {
				t.Errorf("block %d ran %s, order says %s", b.Seq, tr.Variant, want)
			}
			if b.StartNs != int64(b.Seq)*il.BlockNs || b.EndNs != b.StartNs+il.BlockNs {
				t.Errorf("block %d: [%d, %d), want [%d, +100 ms)", b.Seq, b.StartNs, b.EndNs, int64(b.Seq)*il.BlockNs)
			}
			calls, ticks, eagain, span = calls+b.Calls, ticks+b.Ticks, eagain+b.EAGAIN, span+uint64(b.EndNs-b.StartNs)
		}
		if calls != rx.Calls || calls != rx.PerCall.All.Total || eagain != rx.EAGAIN || ticks != rx.Wakeups || rx.WakeupLatency.Count != rx.Wakeups {
			t.Errorf("%s: blocks %d calls (%d EAGAIN), %d ticks; reader %d calls (histogram %d, %d EAGAIN), %d wakeups (%d latencies)",
				tr.Variant, calls, eagain, ticks, rx.Calls, rx.PerCall.All.Total, rx.EAGAIN, rx.Wakeups, rx.WakeupLatency.Count)
		}
		if rx.EAGAIN != 450*rx.Wakeups || int64(span) != tr.DurationNs || tr.DurationNs != int64(time.Second) {
			t.Errorf("%s: %d EAGAIN for %d wakeups (want 450 each); duration %d ns, blocks %d ns, want 1 s", tr.Variant, rx.EAGAIN, rx.Wakeups, tr.DurationNs, span)
		}
		rows, _, err := wakelog.ReaderWakeups(dir, rx)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(rows)) != rx.Wakeups {
			t.Errorf("%s: %d wakeup log rows, %d wakeups", tr.Variant, len(rows), rx.Wakeups)
		}
		// Each block's controls went to its variant: the blocks' sums are
		// the variant's histograms'.
		checkControls(t, tr.Variant, rx)
		near := func(sum uint64, s results.TickStats) bool {
			return math.Abs(float64(sum)-s.MeanTicks*float64(s.Count)) <= 1e-9*float64(sum)+1
		}
		if c := rx.Controls; c != nil && (nullCalls != c.NullSyscall.Count || !near(nullSum, c.NullSyscall) || !near(loopSum, c.UserLoop)) {
			t.Errorf("%s: blocks hold %d null calls (Σ %d ticks, loop Σ %d); the variant's histograms %d (mean %v, loop mean %v × %d)",
				tr.Variant, nullCalls, nullSum, loopSum, c.NullSyscall.Count, c.NullSyscall.MeanTicks, c.UserLoop.MeanTicks, c.UserLoop.Count)
		}
		received += rx.Messages
	}
	if len(seqs) != 20 {
		t.Errorf("%d blocks, want 20 (2 s of 100 ms)", len(seqs))
	}
	if tx := sum.Trials[0].Traffic[0]; received != tx.Sent {
		t.Errorf("variants received %d messages together, sent %d", received, tx.Sent)
	}
}

// TestChildTrialsInterleaved: a child's interleaved groups keep naming
// their first trial once the child's trials are renumbered.
func TestChildTrialsInterleaved(t *testing.T) {
	_, trials := load(t, e2eYAML+interleavedVariants, "rounds=2")
	got := ChildTrials(trials, Child{Process: 1, IndexBase: 4})
	for i, tr := range got {
		if first := got[i-i%2]; tr.Index != 4+i || tr.Group != first.Index {
			t.Errorf("trial %d: index %d group %d, want %d and %d", i, tr.Index, tr.Group, 4+i, first.Index)
		}
	}
}
