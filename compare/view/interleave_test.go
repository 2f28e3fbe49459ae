package view

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/results"
)

// interleavedSummary is seedSummary with its two trials interleaved in
// one group: pairs blocks of 1000 calls each in ABBA order, recvfrom at
// 1000 + 10·(i mod 3) ticks per call in pair i and recvmsg 8% above it,
// times 1 + 1%·x, x standard normal (a fixed seed).
func interleavedSummary(pairs int) *results.Summary {
	s := seedSummary("6.1", [2]int{0, 2}, 0)
	order := []string{"recvfrom", "recvmsg", "recvmsg", "recvfrom"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range s.Trials {
		s.Trials[i].Interleave = &results.Interleave{Group: 0, BlockNs: 1e8, WindowNs: int64(2*pairs) * 1e8, Order: order}
	}
	for seq := range 2 * pairs {
		pair := seq / 2
		base := 1000 + 10*float64(pair%3)
		v, mean := order[seq%4], base
		if v == "recvmsg" {
			mean = base * 1.08 * (1 + 0.01*rng.NormFloat64())
		}
		b := results.Block{Seq: seq, StartNs: int64(seq) * 1e8, EndNs: int64(seq+1) * 1e8, Ticks: 10, Calls: 1000, EAGAIN: 500, Data: 500,
			SumTicks: uint64(math.Round(mean * 1000))}
		t := &s.Trials[map[string]int{"recvfrom": 0, "recvmsg": 1}[v]]
		t.Interleave.Blocks = append(t.Interleave.Blocks, b)
	}
	return s
}

// TestInterleavedCompare: comparing one interleaved run, the mean
// per-call cost rows take their interval from the block pairs, and the
// paired change is listed in the seed's words.
func TestInterleavedCompare(t *testing.T) {
	res, err := facts.Compare([]compare.Run{{Label: "il", Dir: "results/il", Summary: interleavedSummary(100)}})
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
