package view

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/results"
)

// TestInvalidTrialUndecided: a clearly slower column whose run holds an
// invalid trial gets "undecided", not "slower", in every metric touching
// it (the baseline's invalid trial touches every column compared with
// it; verdict's TestJudgeInvalidTrial: the gate neither); both markers are warnings,
// listed even when every run carries one, and printed per run.
func TestInvalidTrialUndecided(t *testing.T) {
	base := comparetest.RoundsRun("a", []float64{100, 102, 104}, []float64{1000, 1010, 990})
	slow := comparetest.RoundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790})
	slow.Summary.Trials[1].Marks = append(slow.Summary.Trials[1].Marks, results.Mark{Kind: results.MarkInvalid, Text: "TSC marked unstable at 0.4 s"})
	base.Summary.Trials[0].Marks = append(base.Summary.Trials[0].Marks, results.Mark{Kind: results.MarkTraffic, Endpoint: "s", Text: "s: send lag p99 3ms > max_send_lag 1ms"})
	res, err := facts.Compare([]compare.Run{base, slow})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range res.Metrics {
		if m.Verdict == compare.VerdictBaseline {
			continue
		}
		n++
		if m.Verdict != compare.VerdictUndecided || !strings.Contains(m.MethodNote, "/b trial 2 (v, round 2): invalid: TSC marked unstable at 0.4 s") {
			t.Errorf("%s %s: verdict %q, note %q; want undecided naming the invalid trial", m.Name, m.Column, m.Verdict, m.MethodNote)
		}
	}
	if n == 0 {
		t.Fatal("no metric compared")
	}
	want := []compare.Difference{
		{Field: compare.WarnInvalid, Values: []string{compare.None, "trial 2 (v, round 2): invalid: TSC marked unstable at 0.4 s"}},
		{Field: compare.WarnTraffic, Values: []string{"trial 1 (v, round 1): traffic not as specified: s: send lag p99 3ms > max_send_lag 1ms", compare.None}},
	}
	if diff := cmp.Diff(want, compare.TrialMarks([]compare.Run{base, slow})); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
	for _, d := range want {
		if !slices.ContainsFunc(res.Warnings, func(w compare.Difference) bool { return cmp.Equal(w, d) }) {
			t.Errorf("warnings %v lack %v", res.Warnings, d)
		}
	}
	var buf bytes.Buffer
	if err := Text(&buf, res); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		"WARNING: invalid trials in b: trial 2 (v, round 2): invalid: TSC marked unstable at 0.4 s\n",
		"WARNING: traffic not as specified in a: trial 1 (v, round 1): traffic not as specified: s: send lag p99 3ms > max_send_lag 1ms\n",
	} {
		if !strings.Contains(buf.String(), l) {
			t.Errorf("text lacks %q:\n%s", l, buf.String())
		}
	}
	// Both runs marked alike: still listed.
	if got := compare.TrialMarks([]compare.Run{slow, slow}); len(got) != 1 || got[0].Field != compare.WarnInvalid {
		t.Errorf("two runs with the same invalid trial: marks %v", got)
	}
}
