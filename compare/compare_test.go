package compare

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestLogT is the interval of a change on hand-computed numbers: rounds
// 10…14 against 12…16 (one process each side, two runs): Welch on the
// logs gives a log ratio of 0.156032, se 0.078245, df 7.811487 and
// t(0.975) = 2.31585 (gonum): CI exp(0.156032 ∓ 0.181202) − 1 =
// [−2.4849%, +40.1057%] around +16.8863%, undecided at ±3%, unit round
// with a note that the processes were not measured.
func TestLogT(t *testing.T) {
	res, err := modelOf([]Run{roundsRun("a", []float64{10, 11, 12, 13, 14}, []float64{1, 1, 1, 1, 1}),
		roundsRun("b", []float64{12, 13, 14, 15, 16}, []float64{1, 1, 1, 1, 1})})
	if err != nil {
		t.Fatal(err)
	}
	var m *Metric
	for i := range res.Metrics {
		if res.Metrics[i].Name == "mean per-call cost" && res.Metrics[i].Column == "v/b" {
			m = &res.Metrics[i]
		}
	}
	if m == nil || m.Interval == nil || m.Interval.LowPct == nil || m.Interval.HighPct == nil || m.Interval.DF == nil {
		t.Fatalf("no interval: %+v", m)
	}
	iv := m.Interval
	if !near(*iv.PointPct, 16.8863, 1e-3) || !near(*iv.LowPct, -2.4849, 1e-3) || !near(*iv.HighPct, 40.1057, 1e-3) || !near(*iv.DF, 7.811487, 1e-5) {
		t.Errorf("interval %+v: point %v [%v, %v] df %v", iv, *iv.PointPct, *iv.LowPct, *iv.HighPct, *iv.DF)
	}
	if m.Verdict != VerdictUndecided || m.Method != MethodT || iv.Unit != "round" || iv.N != "1 process × 5 rounds" ||
		!strings.Contains(m.MethodNote, "between-process noise was not measured") {
		t.Errorf("verdict %q method %q unit %q n %q note %q", m.Verdict, m.Method, iv.Unit, iv.N, m.MethodNote)
	}
	// The CI in the metric's unit is the change's CI times the baseline.
	if m.CILow == nil || !near(*m.CILow, -0.024849*m.BaselineValue, 1e-4) {
		t.Errorf("CI low %v, want %v", *m.CILow, -0.024849*m.BaselineValue)
	}
	if m.MinDetectablePct == nil || *m.MinDetectablePct < 20 {
		t.Errorf("smallest detectable %v, want over 20%% with se 0.078", m.MinDetectablePct)
	}
}

func verdicts(res *Result) map[string]string {
	out := map[string]string{}
	for _, m := range res.Metrics {
		out[metricKey(m)+" "+m.Column] = m.Verdict
	}
	return out
}

// TestVerdicts: one process and one round per side: calls are not
// samples, so however far apart two runs' per-call histograms are, there
// is no interval and every verdict is undecided (issue 24: the per-call
// bootstrap called identical runs slower).
func TestVerdicts(t *testing.T) {
	same := func(label string) Run {
		return Run{Label: label, Summary: seedSummary("6.12", [2]int{0, 2}, 0)}
	}
	shifted := Run{Label: "shifted", Summary: seedSummary("6.12", [2]int{0, 2}, 4)} // +512 ticks
	for _, runs := range [][]Run{{same("a"), same("b")}, {same("a"), shifted}} {
		res, err := modelOf(runs)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Metrics {
			switch {
			case m.Column == "recvfrom/a" || m.Column == "recvmsg/a":
				if m.Verdict != VerdictBaseline {
					t.Errorf("%s %s: verdict %q, want baseline", m.Column, metricKey(m), m.Verdict)
				}
			case m.Verdict != VerdictUndecided || m.Method != MethodNone || m.CILow != nil:
				t.Errorf("%s %s: verdict %q method %q, want undecided without an interval", m.Column, metricKey(m), m.Verdict, m.Method)
			case m.Name == "mean per-call cost" && !strings.Contains(m.MethodNote, "1 process × 1 round"):
				t.Errorf("%s: note %q does not say why", m.Column, m.MethodNote)
			}
		}
	}
}

// roundsRun is a run with one reader metric per round (Welch) and a
// file_write probe (testutil.RoundsRun).
func roundsRun(label string, costs, kbps []float64) Run {
	return Run{Label: label, Summary: testutil.RoundsRun(costs, kbps)}
}

// TestVerdictsRounds: two runs of one process × 3 rounds: the rounds
// are the units (with a note), and the verdicts are the one rule's at
// ±3%.
func TestVerdictsRounds(t *testing.T) {
	base := roundsRun("a", []float64{100, 102, 104}, []float64{1000, 1010, 990})
	for _, tc := range []struct {
		name string
		b    Run
		want map[string]string
	}{
		// The same rounds: the CI ±4.9% around 0 is not within ±3%.
		{"identical rounds are undecided", roundsRun("b", []float64{100, 102, 104}, []float64{1000, 1010, 990}), map[string]string{
			"mean per-call cost (ns) v/b":        VerdictUndecided,
			"write throughput (KB/s) v:fstime/b": VerdictSame, // ±1.4%
			// Losses 0, 1, 2: a log cannot take 0.
			"messages lost per round (messages) v/b": VerdictUndecided,
		}},
		{"slower calls, lower throughput", roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790}), map[string]string{
			"mean per-call cost (ns) v/b":        VerdictSlower,
			"write throughput (KB/s) v:fstime/b": VerdictSlower,
		}},
		{"higher throughput is not slower", roundsRun("b", []float64{100, 102, 104}, []float64{1200, 1210, 1190}), map[string]string{
			"write throughput (KB/s) v:fstime/b": VerdictNotSlower,
		}},
		{"faster calls are not slower", roundsRun("b", []float64{50, 51, 52}, []float64{1000, 1010, 990}), map[string]string{
			"mean per-call cost (ns) v/b": VerdictNotSlower,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := modelOf([]Run{base, tc.b})
			if err != nil {
				t.Fatal(err)
			}
			got := verdicts(res)
			for k, want := range tc.want {
				if got[k] != want {
					t.Errorf("%s: verdict %q, want %q (all: %v)", k, got[k], want, got)
				}
			}
			for _, m := range res.Metrics {
				if m.Column == "v/b" && m.Name == "mean per-call cost" && (m.Method != MethodT || m.Interval == nil || m.Interval.N != "1 process × 3 rounds") {
					t.Errorf("method %q %+v, want t over 1 process × 3 rounds", m.Method, m.Interval)
				}
			}
		})
	}
}

// TestVerdictsProcesses: variants of one run in the same processes are
// paired by process; two runs' processes are independent.
func TestVerdictsProcesses(t *testing.T) {
	run := func(label string, cost func(p, r int, v string) float64) Run {
		s := &results.Summary{Version: results.SummaryVersion, Scenario: "x", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
		i := 0
		for p := range 6 {
			for r := range 2 {
				for _, v := range []string{"A", "B"} {
					h := record.NewLinear(1, 0, 100_000)
					for range 10 {
						h.Record(uint64(cost(p, r, v)))
					}
					s.Trials = append(s.Trials, results.Trial{Index: i, Process: p, Round: r, Variant: v,
						Readers: []results.Reader{{Name: "rt", Sockets: 1, PerCall: results.PerCall{All: h.Snapshot("ns")}}}})
					i++
				}
			}
		}
		return Run{Label: label, Summary: s}
	}
	// Each process has its own level (±10%), shared by A and B; B is 20%
	// dearer in every process: pairing by process removes the level.
	level := []float64{1000, 1100, 900, 1050, 950, 1000}
	res, err := modelOf([]Run{run("one", func(p, r int, v string) float64 {
		c := level[p] + float64(r)
		if v == "B" {
			c *= 1.2
		}
		return c
	})})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Metrics {
		if m.Name != "mean per-call cost" || m.Column != "B/one" {
			continue
		}
		if m.Verdict != VerdictSlower || m.Interval == nil || m.Interval.Unit != "process" || m.Interval.N != "6 processes × 2 rounds" ||
			!strings.HasPrefix(m.Interval.Method, "paired t") || m.Interval.DF == nil || *m.Interval.DF != 5 {
			t.Errorf("B against A: %q %+v", m.Verdict, m.Interval)
		}
		if m.Interval.HighPct == nil || *m.Interval.HighPct-*m.Interval.LowPct > 0.5 {
			t.Errorf("paired CI [%v, %v]: the process level was not removed", *m.Interval.LowPct, *m.Interval.HighPct)
		}
		if m.Variance == nil || m.Variance.BetweenProcessesLogSD == nil || *m.Variance.BetweenProcessesLogSD < 0.05 {
			t.Errorf("variance %+v: want the process level (log-SD about 0.07)", m.Variance)
		}
	}
	// Two runs: the processes are independent units (Welch over 6 + 6).
	a := run("a", func(p, r int, v string) float64 { return level[p] + float64(r) })
	b := run("b", func(p, r int, v string) float64 { return level[5-p] + float64(r) })
	res, err = modelOf([]Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Metrics {
		if m.Name == "mean per-call cost" && m.Column == "A/b" {
			if m.Interval == nil || m.Interval.Unit != "process" || m.Interval.Units != [2]int{6, 6} || !strings.HasPrefix(m.Interval.Method, "Welch") {
				t.Errorf("two runs: %+v", m.Interval)
			}
		}
	}
}

// TestLagNote: rounds of one process that drift (lag-1 near 1) are not
// independent samples: a verdict over them says so.
func TestLagNote(t *testing.T) {
	drift := []float64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111}
	res, err := modelOf([]Run{roundsRun("a", drift, drift), roundsRun("b", drift, drift)})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Metrics {
		if m.Name == "mean per-call cost" && m.Column == "v/b" && !strings.Contains(m.MethodNote, "rounds are not independent samples") {
			t.Errorf("no lag-1 note: %q", m.MethodNote)
		}
	}
}

// TestHeadlines: what a verdict judges is Model's headline metrics,
// computed without the run facts, differences, marks, metadata, column
// percentiles or profiles a person reads (each of check's looks);
// facts' TestCompareFacts: Model's are facts.Compare's.
func TestHeadlines(t *testing.T) {
	runs := seedRuns() // two kernels: metadata and warnings differ
	full, err := modelOf(runs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Headlines(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full.Metrics, h.Metrics, cmp.AllowUnexported(Metric{}, rateSample{})); diff != "" {
		t.Errorf("headline metrics differ from Model's (-full +headlines):\n%s", diff)
	}
	if len(full.Runs) == 0 || len(full.Columns) == 0 {
		t.Fatalf("the fixture's model has no runs or columns: %+v", full)
	}
	if len(h.Runs) != 0 || len(h.Warnings) != 0 || len(h.Info) != 0 || len(h.Metadata) != 0 || len(h.Columns) != 0 || len(h.Profiles) != 0 || len(h.Notes) != 0 {
		t.Errorf("Headlines computed more than the metrics: %+v", h)
	}
}
