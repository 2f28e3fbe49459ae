package results

import (
	"encoding/json"
	"testing"
)

// TestControlsAccessors checks the means a verdict reads from the drift
// controls: per trial from the histograms' means, per block from the
// sums, converted to ns with the clock, and 0 / not ok for a reader or
// block without controls.
func TestControlsAccessors(t *testing.T) {
	c := &Controls{PerTick: 64, NullSyscall: TickStats{Count: 640, MeanTicks: 520}, UserLoop: TickStats{Count: 640, MeanTicks: 560}, UserLoopIters: 180}
	tsc := ClockInfo{Kind: "tsc", Hz: 2.6e9}
	if n, l, ok := c.Means(); n != 520 || l != 560 || !ok {
		t.Errorf("Means = %v, %v, %v; want 520, 560, true", n, l, ok)
	}
	if ns := c.NullMeanNs(tsc); ns != 200 {
		t.Errorf("NullMeanNs = %v, want 200", ns)
	}
	if ns := c.LoopMeanNs(ClockInfo{Kind: "monotonic", Hz: 1e9}); ns != 560 {
		t.Errorf("LoopMeanNs monotonic = %v, want 560", ns)
	}
	if ns := c.NullMeanNs(ClockInfo{Kind: "cycles"}); ns != 0 {
		t.Errorf("NullMeanNs without a frequency = %v, want 0", ns)
	}
	var none *Controls
	if n, l, ok := none.Means(); n != 0 || l != 0 || ok || none.NullMeanNs(tsc) != 0 {
		t.Errorf("nil Controls: %v, %v, %v", n, l, ok)
	}
	r := Reader{}
	if _, _, ok := r.ControlMeans(); ok {
		t.Error("a reader without controls has control means")
	}
	r.Controls = c
	if n, _, ok := r.ControlMeans(); n != 520 || !ok {
		t.Errorf("ControlMeans = %v, %v", n, ok)
	}
	if _, _, ok := (&Controls{NullSyscall: TickStats{Count: 3, MeanTicks: 5}}).Means(); ok {
		t.Error("Means ok without user-loop calls")
	}
	b := &BlockControls{NullCalls: 4, NullSumTicks: 2000, LoopCalls: 4, LoopSumTicks: 2200}
	if n, l, ok := b.Means(); n != 500 || l != 550 || !ok {
		t.Errorf("block Means = %v, %v, %v; want 500, 550, true", n, l, ok)
	}
	var nb *BlockControls
	if _, _, ok := nb.Means(); ok || (&BlockControls{}).NullMeanTicks() != 0 {
		t.Error("a block without controls has means")
	}
}

// TestControlsJSON checks the contract's JSON names and that a reader's and
// a block's controls round-trip, and are absent when nil.
func TestControlsJSON(t *testing.T) {
	r := Reader{Name: "rt", Controls: &Controls{PerTick: 64, NullSyscall: TickStats{Count: 1, MeanTicks: 2}, UserLoopIters: 180, SkippedTicks: 3}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	ctl, ok := m["controls"].(map[string]any)
	if !ok {
		t.Fatalf("no controls object in %s", b)
	}
	for _, k := range []string{"per_tick", "null_syscall", "user_loop", "user_loop_iters", "skipped_ticks"} {
		if _, ok := ctl[k]; !ok {
			t.Errorf("controls lacks %q: %v", k, ctl)
		}
	}
	var back Reader
	if err := json.Unmarshal(b, &back); err != nil || back.Controls == nil || *back.Controls != *r.Controls {
		t.Errorf("round trip: %+v, %v", back.Controls, err)
	}
	m = nil
	if b, _ := json.Marshal(Reader{}); json.Unmarshal(b, &m) == nil && m["controls"] != nil {
		t.Errorf("nil controls written: %s", b)
	}
	blk := Block{Controls: &BlockControls{NullCalls: 1, NullSumTicks: 2, LoopCalls: 3, LoopSumTicks: 4}}
	b, _ = json.Marshal(blk)
	var bb Block
	if err := json.Unmarshal(b, &bb); err != nil || bb.Controls == nil || *bb.Controls != *blk.Controls {
		t.Errorf("block round trip %s: %+v, %v", b, bb.Controls, err)
	}
}
