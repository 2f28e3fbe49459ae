package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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
	res, err := Compare([]Run{roundsRun("a", []float64{10, 11, 12, 13, 14}, []float64{1, 1, 1, 1, 1}),
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
		res, err := Compare(runs)
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
			res, err := Compare([]Run{base, tc.b})
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
	res, err := Compare([]Run{run("one", func(p, r int, v string) float64 {
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
	res, err = Compare([]Run{a, b})
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

func TestDifferences(t *testing.T) {
	a := seedSummary("6.12.0", [2]int{0, 2}, 0)
	b := seedSummary("6.12.0-hardened", [2]int{1, 3}, 0)
	b.Env.CPUModel = "AMD EPYC 7763"
	b.Clock.Kind, b.Clock.Unit = "monotonic", "ns"
	b.Clock.Hz = a.Clock.Hz * 1.0005 // calibration jitter: not a difference
	res, err := Compare([]Run{{Label: "unhard", Summary: a}, {Label: "hard", Summary: b}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := res.Text(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"metadata that differs between the runs (mmtests-style; every other fact is the same):\n",
		"  kernel     6.12.0                     6.12.0-hardened\n",
		"  cpu_model  Intel(R) Core(TM) i7-3770  AMD EPYC 7763\n",
		"WARNING: runs differ in cpu_model (above): not the same machine setup, compare with care\n",
		"WARNING: runs differ in clock unit: unhard=\"TSC ticks\" hard=\"ns\"\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, not := range []string{"differ in clock hz", "WARNING: runs differ in kernel", "differ in scenario"} {
		if strings.Contains(text, not) {
			t.Errorf("output has %q", not)
		}
	}

	// Everything else that matters, field by field.
	b.Clock.Hz = a.Clock.Hz * 1.01
	b.Degraded, b.DegradedReasons = true, []string{"SCHED_OTHER"}
	b.Scenario = "other"
	b.Env.Cmdline = "quiet init_on_free=1"
	b.Spec = results.Spec(`{"name":"laight-450","period":"20ms","description":"prose may differ","processes":200,"readers":[{"cpu":1}]}`)
	for i := range b.Trials {
		b.Trials[i].Readers[0].Seccomp = &results.Seccomp{Profile: "runtime-default", Instructions: 310, Mode: 2, Filters: 1}
	}
	warn, info := Differences([]Run{{Label: "unhard", Summary: a}, {Label: "hard", Summary: b}})
	var fields []string
	for _, d := range warn {
		fields = append(fields, d.Field)
	}
	want := []string{"scenario", "cpu_model", "cmdline", "clock kind", "clock unit", "clock hz", "degraded", "seccomp (read back)", "spec period"}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("warning fields (-want +got):\n%s", diff)
	}
	if len(info) != 1 || info[0].Field != "kernel" {
		t.Errorf("info %v, want kernel only", info)
	}
	if got := warn[6].Values; got[1] != "true (SCHED_OTHER)" {
		t.Errorf("degraded values %q", got)
	}
	if got := warn[7].Values; got[0] != "none" || !strings.Contains(got[1], "runtime-default, 310 instructions (thread: Seccomp 2, 1 filter)") {
		t.Errorf("seccomp values %q", got)
	}
}

// TestDifferencesClockRead: two TSC runs read with different
// instructions (RDTSCP, and LFENCE;RDTSC;LFENCE on a VM that hides it)
// differ in every call's read cost: a warning, a file written before the
// field counting as RDTSCP.
func TestDifferencesClockRead(t *testing.T) {
	a := seedSummary("6.12.0", [2]int{0, 2}, 0)
	b := seedSummary("6.12.0", [2]int{1, 3}, 0)
	if a.Clock.Kind != "tsc" {
		t.Fatalf("fixture clock %q, want tsc", a.Clock.Kind)
	}
	b.Clock.Read = results.ReadRDTSCFenced
	warn, _ := Differences([]Run{{Label: "metal", Summary: a}, {Label: "vm", Summary: b}})
	if len(warn) != 1 || warn[0].Field != "clock read" || warn[0].Values[0] != results.ReadRDTSCP || warn[0].Values[1] != results.ReadRDTSCFenced {
		t.Errorf("warnings %+v, want clock read %s vs %s", warn, results.ReadRDTSCP, results.ReadRDTSCFenced)
	}
	b.Clock.Read = results.ReadRDTSCP
	if warn, _ := Differences([]Run{{Label: "old", Summary: a}, {Label: "new", Summary: b}}); len(warn) != 0 {
		t.Errorf("RDTSCP written and RDTSCP implied: warnings %+v", warn)
	}
}

func TestSeedTableGolden(t *testing.T) {
	// Two runs of the seed's scenario on two kernels, written and read
	// back as results directories.
	dir := t.TempDir()
	var dirs []string
	for _, r := range seedRuns() {
		d := filepath.Join(dir, r.Label)
		if err := mkdir(d); err != nil {
			t.Fatal(err)
		}
		if err := testutil.ResultsDir(t, d).WriteSummary(r.Summary); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	runs, err := Load(dirs, []string{"unhard", "hard"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range res.Columns {
		labels = append(labels, c.Label)
	}
	if diff := cmp.Diff([]string{"recvfrom/unhard", "recvfrom/hard", "recvmsg/unhard", "recvmsg/hard"}, labels); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := res.histogram(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "seed4", []byte(b.String()))
	for _, want := range []string{
		"   1472:         29          1          0          0\n", // the seed's rows, verbatim
		"   8128:       1264       1266       1313        792\n",
		"  8256+:      19252      19450      34703      30228\n",
		"  Total:    2847707    2863582    2853688    2877088\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks the seed's row %q", want)
		}
	}

	// The whole text report, from runs with fixed directory names.
	res, err = Compare(seedRuns())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := res.Text(&out); err != nil {
		t.Fatal(err)
	}
	golden(t, "seed_text", out.Bytes())
}

func TestFormatsParse(t *testing.T) {
	res, err := Compare(seedRuns())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("json", func(t *testing.T) {
		var b bytes.Buffer
		if err := Write(&b, res, "json"); err != nil {
			t.Fatal(err)
		}
		var back Result
		if err := json.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		// The unexported fields are the gate's working copy of the samples.
		if diff := cmp.Diff(res, &back, cmpopts.IgnoreUnexported(Metric{})); diff != "" {
			t.Errorf("json round trip (-want +got):\n%s", diff)
		}
	})
	t.Run("csv", func(t *testing.T) {
		var b bytes.Buffer
		if err := Write(&b, res, "csv"); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(CSVHeader, rows[0]); diff != "" {
			t.Errorf("header (-want +got):\n%s", diff)
		}
		if len(rows) != len(res.Metrics)+1 {
			t.Errorf("%d rows, want %d", len(rows), len(res.Metrics)+1)
		}
		// recvfrom/hard against recvfrom/unhard: on the seed's numbers the
		// hardened kernel's mean recvfrom is lower (2946 vs 3072 ticks,
		// midpoints), as more of its calls sit in the cheap EAGAIN peak.
		var found bool
		for _, r := range rows[1:] {
			if r[0] == "mean per-call cost" && r[1] == "TSC ticks" && r[3] == "recvfrom/hard" {
				found = true
				// One round a side: no interval, undecided.
				if r[4] != "recvfrom/unhard" || r[12] != MethodNone || r[14] != VerdictUndecided {
					t.Errorf("row %q", r)
				}
			}
		}
		if !found {
			t.Error("no mean per-call cost row for recvfrom/hard")
		}
	})
	t.Run("markdown", func(t *testing.T) {
		var b bytes.Buffer
		if err := Write(&b, res, "markdown"); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		for _, want := range []string{"| run | dir |", "```text\n", "  Total:    2847707    2863582    2853688    2877088\n",
			"| metric | column | value | change | 95% CI | verdict | method |", "| p50 |"} {
			if !strings.Contains(md, want) {
				t.Errorf("markdown lacks %q", want)
			}
		}
		// Every table row has as many cells as its header.
		var cells int
		for _, line := range strings.Split(md, "\n") {
			if !strings.HasPrefix(line, "|") {
				cells = 0
				continue
			}
			n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
			if cells == 0 {
				cells = n
			} else if n != cells {
				t.Errorf("row %q has %d bars, header %d", line, n, cells)
			}
		}
	})
	t.Run("unknown", func(t *testing.T) {
		if err := Write(&bytes.Buffer{}, res, "xml"); err == nil || !strings.Contains(err.Error(), `format "xml" unknown (allowed: text, json, csv, markdown, lkp)`) {
			t.Errorf("err %v", err)
		}
	})
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := mkdir(good); err != nil {
		t.Fatal(err)
	}
	if err := testutil.ResultsDir(t, good).WriteSummary(seedRuns()[0].Summary); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		dirs    []string
		labels  []string
		wantErr string
	}{
		{"no dirs", nil, nil, "compare: no results directories"},
		{"label count", []string{good, good}, []string{"a"}, "compare: 1 labels for 2 results directories"},
		{"slash in label", []string{good}, []string{"a/b"}, `label "a/b" contains "/"`},
		{"duplicate label", []string{good, good}, []string{"a", "a"}, `label "a" given twice`},
		{"empty label", []string{good}, []string{" "}, "compare: empty label"},
		{"missing dir", []string{good, filepath.Join(dir, "nope")}, []string{"a", "b"}, "compare b: read summary: " + filepath.Join(dir, "nope") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.dirs, tc.labels)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
	// Default labels: base names, or run1, run2 when they clash.
	runs, err := Load([]string{good}, nil)
	if err != nil || runs[0].Label != "good" {
		t.Errorf("label %v err %v", runs, err)
	}
	if got := defaultLabels([]string{"x/r", "y/r"}); got[0] != "run1" || got[1] != "run2" {
		t.Errorf("clashing labels %v", got)
	}
}

// TestLoadRefusesHugeHistogram: a summary whose histogram claims 2 million
// buckets is refused on load, naming the limit, before any comparison
// (which would bootstrap over every bucket for minutes).
func TestLoadRefusesHugeHistogram(t *testing.T) {
	testutil.Long(t, "decodes a huge histogram")
	dir := t.TempDir()
	big := record.NewLinear(1, 0, 2_000_000).Snapshot("ticks")
	s := &results.Summary{Trials: []results.Trial{{Variant: "v", Readers: []results.Reader{{Name: "rt", PerCall: results.PerCall{All: big}}}}}}
	testutil.WriteSummary(t, dir, s)
	_, err := Load([]string{dir}, nil)
	if err == nil || !strings.Contains(err.Error(), "trials[0].readers[0].per_call.all.counts: more than 65536 entries, more than the limit of 65536") {
		t.Fatalf("err = %v", err)
	}
}

// TestSpikeRate: a reader with a threshold gets a spikes-per-hour metric,
// compared as a Poisson rate ratio: 40 spikes in 2 h against 10 in 2 h
// is slower (ratio 4, exact interval from about 2 to 8.9).
func TestSpikeRate(t *testing.T) {
	run := func(label string, spikes uint64) Run {
		s := &results.Summary{Version: results.SummaryVersion, Scenario: "x", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
		for i := range 2 {
			s.Trials = append(s.Trials, results.Trial{Index: i, Round: i, Variant: "v", DurationNs: int64(time.Hour),
				Readers: []results.Reader{{Name: "rt", ThresholdNs: int64(100 * time.Microsecond), Spikes: spikes / 2,
					WakeupLatency: testutil.Latency(100, 2000, 37)}}})
		}
		return Run{Label: label, Summary: s}
	}
	res, err := Compare([]Run{run("a", 10), run("b", 40)})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range res.Metrics {
		if m.Name != "spikes per hour (> 100µs)" || m.Column != "v/b" {
			continue
		}
		found = true
		iv := m.Interval
		if m.Unit != "/h" || m.Value != 20 || m.BaselineValue != 5 || m.Method != MethodRate || m.Verdict != VerdictSlower ||
			iv == nil || iv.Unit != "event" || !near(*iv.PointPct, 300, 1e-9) || *iv.LowPct < 90 || *iv.HighPct > 800 {
			t.Errorf("spike rate: %+v %+v", m, iv)
		}
		// 40 spikes in 2 h: 20/h, Garwood [14.29, 27.23]/h, MTBF 3 min.
		if r := m.Rate; r == nil || r.Count != 40 || r.Hours != 2 || !near(r.LowPerH, 28.5766/2, 1e-3) || !near(r.HighPerH, 54.4686/2, 1e-3) ||
			r.MTBFH == nil || !near(*r.MTBFH, 0.05, 1e-12) {
			t.Errorf("rate %+v", m.Rate)
		}
		if l := VerdictLine(m, 3); !strings.Contains(l, "40 events in 2 h: 20/h [14.3, 27.2], MTBF 0.05 h") {
			t.Errorf("verdict line %q", l)
		}
	}
	if !found {
		t.Fatal("no spike rate metric")
	}
}

// TestLagNote: rounds of one process that drift (lag-1 near 1) are not
// independent samples: a verdict over them says so.
func TestLagNote(t *testing.T) {
	drift := []float64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111}
	res, err := Compare([]Run{roundsRun("a", drift, drift), roundsRun("b", drift, drift)})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Metrics {
		if m.Name == "mean per-call cost" && m.Column == "v/b" && !strings.Contains(m.MethodNote, "rounds are not independent samples") {
			t.Errorf("no lag-1 note: %q", m.MethodNote)
		}
	}
}

// TestHeadlines: what a verdict judges is CompareWith's headline metrics,
// computed without the run facts, differences, marks, metadata, column
// percentiles or profiles a person reads (each of check's looks).
func TestHeadlines(t *testing.T) {
	runs := seedRuns() // two kernels: metadata and warnings differ
	full, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Headlines(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full.Metrics, h.Metrics, cmp.AllowUnexported(Metric{}, rateSample{})); diff != "" {
		t.Errorf("headline metrics differ from CompareWith's (-full +headlines):\n%s", diff)
	}
	if len(full.Metadata) == 0 || len(full.Runs) == 0 || len(full.Columns) == 0 {
		t.Fatalf("the fixture's full comparison has no metadata, runs or columns: %+v", full)
	}
	if len(h.Runs) != 0 || len(h.Warnings) != 0 || len(h.Info) != 0 || len(h.Metadata) != 0 || len(h.Columns) != 0 || len(h.Profiles) != 0 || len(h.Notes) != 0 {
		t.Errorf("Headlines computed more than the metrics: %+v", h)
	}
}
