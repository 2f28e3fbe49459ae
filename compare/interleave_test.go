package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func TestBlockPairs(t *testing.T) {
	s := interleavedSummary(4)
	a, b := BlockPairs(s, "recvfrom", "recvmsg", "rt")
	wantA := []float64{1000, 1010, 1020, 1000}
	if diff := cmp.Diff(wantA, a); diff != "" {
		t.Errorf("recvfrom means (-want +got):\n%s", diff)
	}
	for i := range b {
		if r := b[i] / a[i]; math.Abs(r-1.08) > 0.05 {
			t.Errorf("pair %d: ratio %v", i, r)
		}
	}
	if a, _ := BlockPairs(s, "recvfrom", "recvmsg", "other"); len(a) != 0 {
		t.Errorf("pairs of a reader that is not there: %v", a)
	}
}

// TestInterleavedTwoRuns: with two runs the rows compare each variant
// with its first run's (no block pairs those), and each run's paired
// change is still listed.
func TestInterleavedTwoRuns(t *testing.T) {
	runs := []Run{{Label: "a", Summary: interleavedSummary(20)}, {Label: "b", Summary: interleavedSummary(20)}}
	res, err := modelOf(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interleaved) != 2 || res.Interleaved[1].Run != "b" {
		t.Errorf("interleaved %+v, want one per run", res.Interleaved)
	}
	for _, m := range res.Metrics {
		if m.Method == MethodPaired {
			t.Errorf("metric %s %s vs %s paired across runs", m.Name, m.Column, m.Baseline)
		}
	}
}

// TestInterleavedRoundsDisagree: two rounds whose block pairs agree
// within themselves but not with each other are named in a note.
func TestInterleavedRoundsDisagree(t *testing.T) {
	s := interleavedSummary(60)
	r2 := interleavedSummary(60)
	for _, tr := range r2.Trials {
		tr.Index += 2
		tr.Round = 1
		il := *tr.Interleave
		il.Group = 2
		il.Blocks = slices.Clone(il.Blocks)
		if tr.Variant == "recvmsg" {
			for i := range il.Blocks {
				il.Blocks[i].SumTicks = il.Blocks[i].SumTicks * 105 / 100 // +5% more in round 2
			}
		}
		tr.Interleave = &il
		s.Trials = append(s.Trials, tr)
	}
	cs := InterleavedChanges(s, "il")
	if len(cs) != 1 || len(cs[0].RoundsPct) != 2 || len(cs[0].Notes) == 0 || !strings.Contains(cs[0].Notes[len(cs[0].Notes)-1], "the interleaved trials (rounds, processes) disagree beyond their intervals (+") {
		t.Errorf("changes %+v: want both rounds and a note that they disagree", cs)
	}
}

// TestBlockPairsProcesses: two processes' trials numbered alike (each
// child's group 0) still pair within their own process.
func TestBlockPairsProcesses(t *testing.T) {
	s := interleavedSummary(10)
	other := interleavedSummary(10)
	for _, tr := range other.Trials {
		tr.Process = 1
		s.Trials = append(s.Trials, tr)
	}
	ga, gb := GroupBlockPairs(s, "recvfrom", "recvmsg", "rt")
	if len(ga) != 2 || len(ga[0]) != 10 || len(ga[1]) != 10 || len(gb[1]) != 10 {
		t.Errorf("groups %d (%v pairs), want 2 of 10", len(ga), ga)
	}
}
