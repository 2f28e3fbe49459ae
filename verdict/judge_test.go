package verdict

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// roundsRun is a run of one process, one round per costs entry, with a
// file_write probe (testutil.RoundsRun).
func roundsRun(label string, costs, kbps []float64) compare.Run {
	return compare.Run{Label: label, Summary: testutil.RoundsRun(costs, kbps)}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestJudge: 1 process × 3 rounds a side. The gate judges the two
// primary metrics (mean per-call cost, write throughput) at 97.5% each
// (Bonferroni: 95% family-wise); t(0.9875, 4) = 3.495406.
func TestJudge(t *testing.T) {
	base := roundsRun("a", []float64{100, 102, 104}, []float64{1000, 1010, 990})
	for _, tc := range []struct {
		name    string
		b       compare.Run
		reasons []string
		opt     Options
		want    Verdict
		slower  []string
	}{
		// The same rounds: mean per-call cost's CI [−5.44%, +5.76%] reaches
		// past +3%: not proven not slower with 3 rounds, so undecided
		// (write throughput's [−2.81%, +2.90%] is within ±3%).
		{"identical rounds are undecided", roundsRun("b", []float64{100, 102, 104}, []float64{1000, 1010, 990}), nil, Options{}, Undecided, nil},
		{"50% slower calls and 20% less throughput are slower", roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790}), nil, Options{},
			Slower, []string{"mean per-call cost (ns) v/b", "write throughput (KB/s) v:fstime/b"}},
		// Mean +3.9%, CI [−1.95%, +10.11%] (one metric: 95%): undecided,
		// never a pass.
		{"mean beyond the threshold, CI not", roundsRun("b", []float64{103, 106, 109}, []float64{1000, 1010, 990}), nil,
			Options{Metrics: []string{"mean per-call cost"}}, Undecided, nil},
		{"faster is proven not slower", roundsRun("b", []float64{50, 51, 52}, []float64{2000, 2010, 1990}), nil, Options{}, NotSlower, nil},
		{"a reason it cannot judge wins over slower", roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790}),
			[]string{"b: degraded: SCHED_OTHER"}, Options{}, CannotJudge, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := facts.Compare([]compare.Run{base, tc.b})
			if err != nil {
				t.Fatal(err)
			}
			g, err := Judge(res.Metrics, tc.reasons, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != tc.want {
				t.Errorf("verdict %q, want %q (%+v)", g.Verdict, tc.want, g)
			}
			if tc.want == Slower {
				if diff := cmp.Diff(tc.slower, g.Slower); diff != "" {
					t.Errorf("slower (-want +got):\n%s", diff)
				}
			}
			if len(tc.opt.Metrics) == 0 && tc.want != CannotJudge && (len(g.Metrics) != 2 || !near(g.Level, 0.975, 1e-12)) {
				t.Errorf("judged %d metrics at %v, want the 2 primary ones at 97.5%%", len(g.Metrics), g.Level)
			}
		})
	}
}

// TestJudgeThreshold: a change the CI says is real, but small. Rounds
// 1000, 1001, 1002 against 1020, 1021, 1022: log ratio 0.019783, se
// 0.000808, df 3.9984, t(0.975) 2.776874: CI [+1.7695%, +2.2270%].
func TestJudgeThreshold(t *testing.T) {
	res, err := facts.Compare([]compare.Run{roundsRun("a", []float64{1000, 1001, 1002}, []float64{1, 1, 1}),
		roundsRun("b", []float64{1020, 1021, 1022}, []float64{1, 1, 1})})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		threshold float64
		want      Verdict
		verdict   string
	}{
		{0, NotSlower, compare.VerdictSame}, // within ±3%
		{0.01, Slower, compare.VerdictSlower},
		{0.02, Undecided, compare.VerdictUndecided}, // straddles +2%
		{0.0176, Slower, compare.VerdictSlower},
		{0.0178, Undecided, compare.VerdictUndecided},
		{0.023, NotSlower, compare.VerdictSame},
	} {
		g, err := Judge(res.Metrics, nil, Options{Threshold: tc.threshold, Metrics: []string{"mean per-call cost (ns)"}})
		if err != nil {
			t.Fatal(err)
		}
		m := g.Metrics[0]
		if g.Verdict != tc.want || m.Verdict != tc.verdict || !near(*m.Interval.LowPct, 1.7695, 1e-3) || !near(*m.Interval.HighPct, 2.2270, 1e-3) {
			t.Errorf("threshold %v: gate %q (metric %q, CI [%v%%, %v%%]), want %q (%q)", tc.threshold, g.Verdict, m.Verdict,
				*m.Interval.LowPct, *m.Interval.HighPct, tc.want, tc.verdict)
		}
	}
}

func TestJudgeCIPercent(t *testing.T) {
	res, err := facts.Compare([]compare.Run{roundsRun("a", []float64{100, 102, 104}, []float64{1000, 1010, 990}),
		roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790})})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Judge(res.Metrics, nil, Options{Metrics: []string{"mean per-call cost"}})
	if err != nil {
		t.Fatal(err)
	}
	// Welch on the logs: log ratio 0.398978, se 0.013635, df 3.4974,
	// t(0.975) 2.941102: change +49.0301%, CI [+43.1720%, +55.1279%]
	// (the one shape of a change with its interval: Interval).
	m := g.Metrics[0]
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"point", *m.Interval.PointPct, 49.0301}, {"ci low", *m.Interval.LowPct, 43.1720}, {"ci high", *m.Interval.HighPct, 55.1279}} {
		if !near(c.got, c.want, 1e-3) {
			t.Errorf("%s %.4f%%, want %.4f%%", c.name, c.got, c.want)
		}
	}
	var b bytes.Buffer
	if err := g.Text(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"gate: SLOWER: 1 judged metric(s) proven slower beyond +3%, the whole CI beyond it (1 slower, 0 not slower, 0 undecided at +3% (CI 95%))\n",
		"  v/b mean per-call cost (ns): slower: +49.03% [+43.17%, +55.13%] (95% CI, n = 1 process × 3 rounds, unit round, df 3.5); smallest detectable change +",
		"; 1 process per side: the between-process noise was not measured",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestJudgeCannot(t *testing.T) {
	one := func(label string) compare.Run {
		return compare.Run{Label: label, Summary: testutil.SeedRun("6.12", [2]int{0, 2}, 0)}
	}
	res, err := facts.Compare([]compare.Run{one("a"), one("b")})
	if err != nil {
		t.Fatal(err)
	}
	// One round each: no interval, so undecided (exit 125), naming why.
	g, err := Judge(res.Metrics, nil, Options{Metrics: []string{"wakeup latency max"}})
	if err != nil || g.Verdict != Undecided || len(g.Metrics) != 2 || !strings.HasPrefix(g.Metrics[0].Judged, "undecided: ") ||
		!strings.Contains(g.Metrics[0].Judged, "1 process × 1 round on a side: no interval") {
		t.Errorf("verdict %q metrics %+v err %v", g.Verdict, g.Metrics, err)
	}
	// Named metric that does not exist: an error naming the ones there are.
	if _, err := Judge(res.Metrics, nil, Options{Metrics: []string{"throughput"}}); err == nil ||
		!strings.Contains(err.Error(), `gate: no headline metric "throughput" (have: mean per-call cost (TSC ticks), mean per-call cost (ns)`) {
		t.Errorf("err %v", err)
	}
	// Nothing has an interval: undecided.
	res.Metrics = []compare.Metric{{Name: "x", Unit: "s", Column: "c/b", Baseline: "c/a", Verdict: compare.VerdictUndecided}}
	if g, _ := Judge(res.Metrics, nil, Options{}); g.Verdict != Undecided || len(g.Metrics) != 1 {
		t.Errorf("verdict %q metrics %+v", g.Verdict, g.Metrics)
	}
	// No metric at all.
	res.Metrics = nil
	if g, _ := Judge(res.Metrics, nil, Options{}); g.Verdict != Undecided || len(g.Reasons) != 1 {
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
			[]string{"new: stopped early: interrupted: trials are missing or partial", "new: incomplete: summary.json is a checkpoint of a run that never finished"}},
		{"no trials", &results.Summary{}, []string{"new: no trials"}},
		// One reason per marked trial, named as a person counts them.
		{"an invalid trial and one whose traffic missed", &results.Summary{Trials: []results.Trial{
			{Index: 0, Variant: "recvfrom"},
			{Index: 1, Variant: "recvmsg", Marks: []results.Mark{{Kind: results.MarkInvalid, Text: "clocksource changed (tsc → kvm-clock at 1.2 s)"}}},
			{Index: 2, Round: 1, Variant: "recvfrom", Marks: []results.Mark{{Kind: results.MarkTraffic, Endpoint: "socks", Text: "socks: send lag p99 7.2ms > max_send_lag 20ms"}}},
		}}, []string{
			"new: trial 2 (recvmsg, round 1): invalid: clocksource changed (tsc → kvm-clock at 1.2 s)",
			"new: trial 3 (recvfrom, round 2): traffic not as specified: socks: send lag p99 7.2ms > max_send_lag 20ms" +
				" (the workload's own: sender socks missed its rate or lag without being kept off its CPU; a fresh process would repeat it, so it is not replaced)",
		}},
		{"a starved reader", &results.Summary{Trials: []results.Trial{
			{Index: 0, Variant: "recvfrom", Readers: []results.Reader{{Name: "rt"}}, Marks: []results.Mark{{Kind: results.MarkStarved, Reader: "rt",
				Text: "reader rt runnable but off CPU 1 for 421ms (46.8% of the 900ms window; schedstat run-queue wait): RT throttling or a thread above SCHED_FIFO 80 there"}}},
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

// TestJudgeInvalidTrial: a clearly slower column whose run holds an
// invalid trial is undecided in compare, and the gate judges none of
// its metrics slower.
func TestJudgeInvalidTrial(t *testing.T) {
	base := roundsRun("a", []float64{100, 102, 104}, []float64{1000, 1010, 990})
	slow := roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790})
	slow.Summary.Trials[1].Marks = append(slow.Summary.Trials[1].Marks, results.Mark{Kind: results.MarkInvalid, Text: "TSC marked unstable at 0.4 s"})
	res, err := facts.Compare([]compare.Run{base, slow})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Judge(res.Metrics, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != Undecided || len(g.Slower) > 0 {
		t.Errorf("gate %q judged undecided metrics slower: %v", g.Verdict, g.Slower)
	}
	for _, m := range g.Metrics {
		if !strings.Contains(m.MethodNote, "invalid: TSC marked unstable") {
			t.Errorf("%s: note %q does not name the invalid trial", m.Column, m.MethodNote)
		}
	}
}

// TestExitCode: each verdict's own code, as git bisect run reads it.
func TestExitCode(t *testing.T) {
	for v, want := range map[Verdict]int{NotSlower: 0, Slower: 1, Undecided: 125, CannotJudge: 125, "": 125} {
		if got := v.ExitCode(); got != want {
			t.Errorf("%q: exit %d, want %d", v, got, want)
		}
	}
}

// TestJudgeNameOneUnit: a metric named without its unit is judged once
// per column (its primary one, ns), not in both its units (TSC ticks and
// ns), which took two Bonferroni shares; named with its unit, each is.
func TestJudgeNameOneUnit(t *testing.T) {
	tsc := func(s *results.Summary) *results.Summary {
		s.Clock = results.ClockInfo{Kind: "tsc", Unit: "TSC ticks", Hz: 2.6e9}
		return s
	}
	res, err := compare.Headlines([]compare.Run{{Label: "a", Summary: tsc(procRun(10, 1000, small, 0))}, {Label: "b", Summary: tsc(procRun(5, 1000, small, 5))}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	units := 0
	for _, m := range res.Metrics {
		if m.Name == "mean per-call cost" && m.Verdict != compare.VerdictBaseline {
			units++
		}
	}
	if units != 2 {
		t.Fatalf("the fixture has the mean per-call cost in %d units, want 2 (ticks and ns)", units)
	}
	g, err := Judge(res.Metrics, nil, Options{Metrics: []string{"mean per-call cost"}})
	if err != nil || len(g.Metrics) != 1 || g.Metrics[0].Unit != "ns" {
		t.Fatalf("named without its unit: %d judged (%v), want 1, in ns (the primary): %+v", len(g.Metrics), err, g.Metrics)
	}
	var keys []string
	for _, m := range res.Metrics {
		if m.Name == "mean per-call cost" && m.Verdict != compare.VerdictBaseline {
			keys = append(keys, m.Key())
		}
	}
	if g, err := Judge(res.Metrics, nil, Options{Metrics: keys}); err != nil || len(g.Metrics) != 2 {
		t.Errorf("named with their units %q: %d judged (%v), want 2", keys, len(g.Metrics), err)
	}
}
