package view

import (
	"math"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/internal/comparetest"
)

// TestInterleavedCompare: comparing one interleaved run, the mean
// per-call cost rows take their interval from the block pairs, and the
// paired change is listed in the seed's words.
func TestInterleavedCompare(t *testing.T) {
	res, err := facts.Compare([]compare.Run{{Label: "il", Dir: "results/il", Summary: comparetest.InterleavedSummary(100)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interleaved) != 1 {
		t.Fatalf("interleaved changes %+v, want 1", res.Interleaved)
	}
	c := res.Interleaved[0]
	if c.Pairs != 100 || c.ChangePct == nil || math.Abs(*c.ChangePct-8.0) > 0.3 || *c.LoPct > 7.95 || *c.HiPct < 8.05 || *c.HiPct-*c.LoPct > 1 {
		t.Errorf("change %+v, want +8.0%% within a CI of about ±0.2%%", c)
	}
	if l := c.Line(); !strings.HasPrefix(l, "recvmsg +") || !strings.Contains(l, "vs recvfrom, n = 100 ABBA block pairs in 25 batches of 4") {
		t.Errorf("line %q", l)
	}
	n := 0
	for _, m := range res.Metrics {
		if m.Name == "mean per-call cost" && m.Column == "recvmsg/il" {
			n++
			if m.Method != compare.MethodPaired || m.Verdict != compare.VerdictSlower || !strings.Contains(m.MethodNote, "100 ABBA block pairs") || m.CILow == nil || *m.CILow <= 0 {
				t.Errorf("metric %+v: want the paired interval, slower", m)
			}
		}
	}
	for _, m := range res.Metrics {
		if m.Name == "mean per-call cost" && (m.Variance == nil || m.Variance.WithinRoundLogSD == nil || *m.Variance.WithinRoundLogSD <= 0) {
			t.Errorf("%s %s: no within-round log-SD from the blocks: %+v", m.Column, m.Unit, m.Variance)
		}
	}
	if n != 2 { // ticks and ns
		t.Errorf("%d mean per-call cost rows for recvmsg, want 2", n)
	}
	var b strings.Builder
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), InterleavedTitle+"\n  recvmsg +") {
		t.Errorf("text lacks the interleaved line:\n%s", b.String())
	}
}
