package view

import (
	"math"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/internal/testutil"
)

// TestControlsInTheModel: each per-call round carries its reader's
// controls, each interleaved block pair its blocks'; the machine's
// change is each run's against the first (or, in one run, each
// variant's against the first), in the Interval shape.
func TestControlsInTheModel(t *testing.T) {
	flat := func(int) float64 { return 570 }
	base := comparetest.WithControls(testutil.SeedRun("6.1", [2]int{0, 2}, 0), func(int) float64 { return 600 }, flat)
	slow := comparetest.WithControls(testutil.SeedRun("6.1", [2]int{0, 2}, 1), func(int) float64 { return 660 }, flat)
	res, err := facts.Compare([]compare.Run{{Label: "a", Summary: base}, {Label: "b", Summary: slow}})
	if err != nil {
		t.Fatal(err)
	}
	controlled := 0
	for i := range res.Metrics {
		m := &res.Metrics[i]
		perCall := strings.HasSuffix(m.Name, "per-call cost") && m.Verdict != compare.VerdictBaseline
		if m.Controlled() != perCall {
			t.Errorf("%s %s: controlled %v, want %v", m.Column, m.Key(), m.Controlled(), perCall)
		}
		if m.Controlled() {
			controlled++
			if c := m.ControlChangeAt(compare.ControlNull, 0.95); math.Abs(c.Point-0.10) > 1e-9 {
				t.Errorf("%s %s: the null syscall's change %+v, want +10%%", m.Column, m.Key(), c)
			}
		}
	}
	if controlled == 0 {
		t.Fatal("no metric carries its controls")
	}
	if len(res.Machine) != 1 || res.Machine[0].Column != "b" || res.Machine[0].Baseline != "a" || res.Machine[0].NullSyscall == nil || res.Machine[0].NullSyscall.PointPct == nil ||
		math.Abs(*res.Machine[0].NullSyscall.PointPct-10) > 1e-9 || math.Abs(*res.Machine[0].UserLoop.PointPct) > 1e-9 {
		t.Fatalf("machine %+v", res.Machine)
	}
	if l := MachineLines(res); len(l) != 1 || !strings.HasPrefix(l[0], "machine, b vs a: null syscall +10.0% [") {
		t.Errorf("machine lines %q", l)
	}

	// One interleaved run: the block pairs carry their blocks' controls.
	il := comparetest.WithControls(comparetest.InterleavedSummary(40), func(i int) float64 { return 600 + 30*float64(i) }, flat)
	res, err = facts.Compare([]compare.Run{{Label: "il", Summary: il}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Metrics {
		m := &res.Metrics[i]
		if m.Name != "mean per-call cost" || m.Verdict == compare.VerdictBaseline {
			continue
		}
		if !m.Controlled() || !m.SameProcesses() {
			t.Fatalf("%s: controlled %v, same processes %v", m.Column, m.Controlled(), m.SameProcesses())
		}
		if c := m.ControlChangeAt(compare.ControlNull, 0.95); c.Unit != "block pair" || math.Abs(c.Point-0.05) > 1e-3 {
			t.Errorf("the blocks' null syscall change %+v, want +5%% over block pairs", c)
		}
		if a := m.AdjustedAt(compare.ControlNull, 0.95); a.Defined() || !a.Raw.Defined() {
			t.Errorf("block pairs adjusted: %+v", a.Change)
		}
	}
	if len(res.Machine) != 1 || res.Machine[0].NullSyscall.Unit != "block pair" {
		t.Errorf("machine of one run %+v", res.Machine)
	}

	// Without controls: no machine, and the line says it was not measured.
	res, err = facts.Compare([]compare.Run{{Label: "a", Summary: testutil.SeedRun("6.1", [2]int{0, 2}, 0)}, {Label: "b", Summary: testutil.SeedRun("6.1", [2]int{0, 2}, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if l := MachineLines(res); len(res.Machine) != 0 || len(l) != 1 || !strings.HasPrefix(l[0], "machine: not measured") {
		t.Errorf("machine %+v, lines %q", res.Machine, l)
	}
}

// TestVerdictWords: undecided at the threshold with the whole interval on
// the worse side of 0 says both answers; other verdicts as VerdictAt.
func TestVerdictWords(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name string
		m    compare.Metric
		want string
	}{
		{"slower, not beyond", compare.Metric{Verdict: compare.VerdictUndecided, Interval: &compare.Interval{LowPct: p(2.8), HighPct: p(4.8)}}, "slower (CI excludes 0); beyond +3%: undecided"},
		{"straddles 0", compare.Metric{Verdict: compare.VerdictUndecided, Interval: &compare.Interval{LowPct: p(-1), HighPct: p(4.8)}}, "undecided at ±3%"},
		{"throughput lower, not beyond", compare.Metric{HigherIsBetter: true, Verdict: compare.VerdictUndecided, Interval: &compare.Interval{LowPct: p(-4), HighPct: p(-1)}}, "worse (CI excludes 0); beyond -3%: undecided"},
		{"an invalid trial", compare.Metric{Verdict: compare.VerdictUndecided, Interval: &compare.Interval{LowPct: p(2.8), HighPct: p(4.8)}, MethodNote: "t; b trial 2 (v, round 1): invalid: clocksource changed"}, "undecided at ±3%"},
		{"slower", compare.Metric{Verdict: compare.VerdictSlower, Interval: &compare.Interval{LowPct: p(4), HighPct: p(6)}}, "slower: the whole CI beyond +3%"},
	} {
		if got := VerdictWords(tc.m, 3, "±"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
