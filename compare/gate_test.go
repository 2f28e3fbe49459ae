package compare

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/results"
)

func TestJudge(t *testing.T) {
	base := roundsRun("a", []float64{100, 102, 104}, []float64{1000, 1010, 990})
	for _, tc := range []struct {
		name    string
		b       Run
		reasons []string
		opt     GateOptions
		want    string
		slower  []string
	}{
		{"identical rounds pass", roundsRun("b", []float64{100, 102, 104}, []float64{1000, 1010, 990}), nil, GateOptions{}, GatePass, nil},
		// Mean per-call cost +50% (CI [+46.3, +53.7] ticks), fstime −20%.
		{"50% slower calls and 20% less throughput fail", roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790}), nil, GateOptions{},
			GateSlower, []string{"mean per-call cost (ns) v/b", "p50 per-call cost (ns) v/b", "p99 per-call cost (ns) v/b", "write throughput (KB/s) v:fstime/b"}},

		// Mean +3.9%, but rounds 103, 106, 109 against 100, 102, 104: the CI
		// reaches below +3% (and below 0): not a verdict to fail on.
		{"mean beyond the threshold, CI not", roundsRun("b", []float64{103, 106, 109}, []float64{1000, 1010, 990}), nil,
			GateOptions{Metrics: []string{"mean per-call cost"}}, GatePass, nil},
		{"faster is never a failure", roundsRun("b", []float64{50, 51, 52}, []float64{2000, 2010, 1990}), nil, GateOptions{}, GatePass, nil},
		{"a reason it cannot judge wins over slower", roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790}),
			[]string{"b: degraded: SCHED_OTHER"}, GateOptions{}, GateCannotJudge, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compare([]Run{base, tc.b})
			if err != nil {
				t.Fatal(err)
			}
			g, err := Judge(res, tc.reasons, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != tc.want {
				t.Errorf("verdict %q, want %q (%+v)", g.Verdict, tc.want, g)
			}
			if tc.want == GateSlower {
				if diff := cmp.Diff(tc.slower, g.Slower); diff != "" {
					t.Errorf("slower (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestJudgeThreshold: a change the CI says is real, but small.
func TestJudgeThreshold(t *testing.T) {
	// Rounds 1000, 1001, 1002 against 1020, 1021, 1022: diff 20 ticks (+2%),
	// s 1 each side, se √(1/3+1/3) = 0.8165, df 4, t 2.7764: CI [17.73,
	// 22.27] = [+1.77%, +2.23%] of 1001. compare calls it slower (the CI
	// excludes 0); a 3% gate passes it (the CI lies under +3%); a 1% gate
	// fails it (the CI lies above +1%); a 2% gate passes (the CI reaches
	// below +2%).
	res, err := Compare([]Run{roundsRun("a", []float64{1000, 1001, 1002}, []float64{1, 1, 1}),
		roundsRun("b", []float64{1020, 1021, 1022}, []float64{1, 1, 1})})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		threshold float64
		want      string
	}{{0, GatePass}, {0.01, GateSlower}, {0.02, GatePass}, {0.0177, GateSlower}, {0.0178, GatePass}} {
		g, err := Judge(res, nil, GateOptions{Threshold: tc.threshold, Metrics: []string{"mean per-call cost (ns)"}})
		if err != nil {
			t.Fatal(err)
		}
		if g.Verdict != tc.want || g.Metrics[0].Verdict != VerdictSlower {
			t.Errorf("threshold %v: gate %q (compare %q, CI [%v%%, %v%%]), want %q", tc.threshold, g.Verdict, g.Metrics[0].Verdict,
				*g.Metrics[0].CILowPct, *g.Metrics[0].CIHighPct, tc.want)
		}
	}
}

func TestJudgeCIPercent(t *testing.T) {
	res, err := Compare([]Run{roundsRun("a", []float64{100, 102, 104}, []float64{1000, 1010, 990}),
		roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790})})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Judge(res, nil, GateOptions{Metrics: []string{"mean per-call cost"}})
	if err != nil {
		t.Fatal(err)
	}
	// Welch: diff 50, s 2 each side, se √(4/3+4/3) = 1.63299, df 4,
	// t 2.77645: CI 50 ∓ 4.53388 = [45.4661, 54.5339] ticks, of a baseline
	// of 102: [+44.5746%, +53.4646%]; change 50/102 = +49.0196%.
	m := g.Metrics[0]
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"change", *m.ChangePct, 49.0196}, {"ci low", *m.CILowPct, 44.5746}, {"ci high", *m.CIHighPct, 53.4646}} {
		if !near(c.got, c.want, 1e-3) {
			t.Errorf("%s %.4f%%, want %.4f%%", c.name, c.got, c.want)
		}
	}
	var b bytes.Buffer
	if err := g.Text(&b); err != nil {
		t.Fatal(err)
	}
	want := "gate: SLOWER: 1 headline metric(s) slower beyond 3%, the whole 95% CI beyond it (0 within it)\n" +
		"  slower: mean per-call cost (ns) v/b: +49.02% against v/a, CI of the change [+44.57%, +53.46%]\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

func TestJudgeCannot(t *testing.T) {
	one := func(label string) Run { return Run{Label: label, Summary: seedSummary("6.12", [2]int{0, 2}, 0)} }
	res, err := Compare([]Run{one("a"), one("b")})
	if err != nil {
		t.Fatal(err)
	}
	// One round each and no per-wakeup logs: wakeup max has no CI.
	g, err := Judge(res, nil, GateOptions{Metrics: []string{"wakeup latency max"}})
	if err != nil || g.Verdict != GateCannotJudge || len(g.Reasons) != 2 || !strings.Contains(g.Reasons[0], "wakeup latency max (µs) recvfrom/b: no confidence interval (1+1 rounds") {
		t.Errorf("verdict %q reasons %q err %v", g.Verdict, g.Reasons, err)
	}
	// Named metric that does not exist: an error naming the ones there are.
	if _, err := Judge(res, nil, GateOptions{Metrics: []string{"throughput"}}); err == nil ||
		!strings.Contains(err.Error(), `gate: no headline metric "throughput" (have: mean per-call cost (TSC ticks), mean per-call cost (ns)`) {
		t.Errorf("err %v", err)
	}
	// Nothing has an interval.
	res.Metrics = []Metric{{Name: "x", Unit: "s", Column: "c/b", Baseline: "c/a", Verdict: VerdictUnknown}}
	if g, _ := Judge(res, nil, GateOptions{}); g.Verdict != GateCannotJudge || !strings.Contains(g.Reasons[0], "no headline metric has a confidence interval") {
		t.Errorf("verdict %q reasons %q", g.Verdict, g.Reasons)
	}
}

func TestUnjudgeable(t *testing.T) {
	ok := &results.Summary{Trials: []results.Trial{{}}}
	for _, tc := range []struct {
		name string
		s    *results.Summary
		want []string
	}{
		{"a clean run", ok, nil},
		{"degraded, with reasons", &results.Summary{Trials: ok.Trials, Degraded: true, DegradedReasons: []string{"SCHED_OTHER", "memory not locked"}},
			[]string{"new: degraded: SCHED_OTHER; memory not locked"}},
		{"degraded, no reason recorded", &results.Summary{Trials: ok.Trials, Degraded: true}, []string{"new: degraded: run without some privileges (--allow-degraded)"}},
		{"stopped and incomplete", &results.Summary{Trials: ok.Trials, Stopped: true, InProgress: true},
			[]string{"new: stopped early (interrupted): trials are missing or partial", "new: incomplete: summary.json is a checkpoint of a run that never finished"}},
		{"no trials", &results.Summary{}, []string{"new: no trials"}},
		// One reason per marked trial, named as a person counts them.
		{"an invalid trial and one whose traffic missed", &results.Summary{Trials: []results.Trial{
			{Index: 0, Variant: "recvfrom"},
			{Index: 1, Variant: "recvmsg", Invalid: "invalid: clocksource changed (tsc → kvm-clock at 1.2 s)"},
			{Index: 2, Round: 1, Variant: "recvfrom", TrafficNotAsSpecified: "traffic not as specified: socks: send lag p99 7.2ms > max_send_lag 20ms"},
		}}, []string{
			"new: trial 2 (recvmsg, round 1): invalid: clocksource changed (tsc → kvm-clock at 1.2 s)",
			"new: trial 3 (recvfrom, round 2): traffic not as specified: socks: send lag p99 7.2ms > max_send_lag 20ms",
		}},
		{"a starved reader", &results.Summary{Trials: []results.Trial{
			{Index: 0, Variant: "recvfrom", Readers: []results.Reader{{Name: "rt", Starved: "runnable but off CPU 1 for 421ms (46.8% of the 900ms window; schedstat run-queue wait): RT throttling or a thread above SCHED_FIFO 80 there"}}},
			{Index: 1, Variant: "recvmsg", Readers: []results.Reader{{Name: "rt"}}},
		}}, []string{
			"new: trial 1 (recvfrom, round 1): reader rt runnable but off CPU 1 for 421ms (46.8% of the 900ms window; schedstat run-queue wait): RT throttling or a thread above SCHED_FIFO 80 there",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Unjudgeable("new", tc.s)); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInvalidTrialUndecided: a clearly slower column whose run holds an
// invalid trial gets "undecided", not "slower", in every metric touching
// it (the baseline's invalid trial touches every column compared with
// it); the gate does not judge those metrics; both markers are warnings,
// listed even when every run carries one, and printed per run.
func TestInvalidTrialUndecided(t *testing.T) {
	base := roundsRun("a", []float64{100, 102, 104}, []float64{1000, 1010, 990})
	slow := roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790})
	slow.Summary.Trials[1].Invalid = "invalid: TSC marked unstable at 0.4 s"
	base.Summary.Trials[0].TrafficNotAsSpecified = "traffic not as specified: s: send lag p99 3ms > max_send_lag 1ms"
	res, err := Compare([]Run{base, slow})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range res.Metrics {
		if m.Verdict == VerdictBaseline {
			continue
		}
		n++
		if m.Verdict != VerdictUndecided || !strings.Contains(m.MethodNote, "/b trial 2 (v, round 2): invalid: TSC marked unstable at 0.4 s") {
			t.Errorf("%s %s: verdict %q, note %q; want undecided naming the invalid trial", m.Name, m.Column, m.Verdict, m.MethodNote)
		}
	}
	if n == 0 {
		t.Fatal("no metric compared")
	}
	want := []Difference{
		{Field: WarnInvalid, Values: []string{none, "trial 2 (v, round 2): invalid: TSC marked unstable at 0.4 s"}},
		{Field: WarnTraffic, Values: []string{"trial 1 (v, round 1): traffic not as specified: s: send lag p99 3ms > max_send_lag 1ms", none}},
	}
	if diff := cmp.Diff(want, TrialMarks([]Run{base, slow})); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
	for _, d := range want {
		if !slices.ContainsFunc(res.Warnings, func(w Difference) bool { return cmp.Equal(w, d) }) {
			t.Errorf("warnings %v lack %v", res.Warnings, d)
		}
	}
	g, err := Judge(res, nil, GateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Slower) > 0 {
		t.Errorf("gate judged undecided metrics slower: %v", g.Slower)
	}
	var buf bytes.Buffer
	if err := res.Text(&buf); err != nil {
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
	if got := TrialMarks([]Run{slow, slow}); len(got) != 1 || got[0].Field != WarnInvalid {
		t.Errorf("two runs with the same invalid trial: marks %v", got)
	}
}
