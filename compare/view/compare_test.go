package view

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

func TestDifferences(t *testing.T) {
	a := testutil.SeedRun("6.12.0", [2]int{0, 2}, 0)
	b := testutil.SeedRun("6.12.0-hardened", [2]int{1, 3}, 0)
	b.Env.CPUModel = "AMD EPYC 7763"
	b.Clock.Kind, b.Clock.Unit = "monotonic", "ns"
	b.Clock.Hz = a.Clock.Hz * 1.0005 // calibration jitter: not a difference
	res, err := facts.Compare([]compare.Run{{Label: "unhard", Summary: a}, {Label: "hard", Summary: b}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Text(&out, res); err != nil {
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
	warn, info := facts.Differences([]compare.Run{{Label: "unhard", Summary: a}, {Label: "hard", Summary: b}})
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

func TestSeedTableGolden(t *testing.T) {
	// Two runs of the seed's scenario on two kernels, written and read
	// back as results directories.
	dir := t.TempDir()
	var dirs []string
	for _, r := range comparetest.SeedRuns() {
		d := filepath.Join(dir, r.Label)
		if err := comparetest.Mkdir(d); err != nil {
			t.Fatal(err)
		}
		if err := testutil.ResultsDir(t, d).WriteSummary(r.Summary); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	runs, err := load.Runs(dirs, []string{"unhard", "hard"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := facts.Compare(runs)
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
	if err := histogram(res, &b); err != nil {
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
	res, err = facts.Compare(comparetest.SeedRuns())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Text(&out, res); err != nil {
		t.Fatal(err)
	}
	golden(t, "seed_text", out.Bytes())
}

func TestFormatsParse(t *testing.T) {
	res, err := facts.Compare(comparetest.SeedRuns())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("json", func(t *testing.T) {
		var b bytes.Buffer
		if err := Write(&b, res, "json"); err != nil {
			t.Fatal(err)
		}
		var back compare.Result
		if err := json.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		// The unexported fields are the gate's working copy of the samples.
		if diff := cmp.Diff(res, &back, cmpopts.IgnoreUnexported(compare.Metric{})); diff != "" {
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
				if r[4] != "recvfrom/unhard" || r[12] != compare.MethodNone || r[14] != compare.VerdictUndecided {
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

// TestSpikeRate: a reader with a threshold gets a spikes-per-hour metric,
// compared as a Poisson rate ratio: 40 spikes in 2 h against 10 in 2 h
// is slower (ratio 4, exact interval from about 2 to 8.9).
func TestSpikeRate(t *testing.T) {
	run := func(label string, spikes uint64) compare.Run {
		s := &results.Summary{Version: results.SummaryVersion, Scenario: "x", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
		for i := range 2 {
			s.Trials = append(s.Trials, results.Trial{Index: i, Round: i, Variant: "v", DurationNs: int64(time.Hour),
				Readers: []results.Reader{{Name: "rt", ThresholdNs: int64(100 * time.Microsecond), Spikes: spikes / 2,
					WakeupLatency: testutil.Latency(100, 2000, 37)}}})
		}
		return compare.Run{Label: label, Summary: s}
	}
	res, err := facts.Compare([]compare.Run{run("a", 10), run("b", 40)})
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
		if m.Unit != "/h" || m.Value != 20 || m.BaselineValue != 5 || m.Method != compare.MethodRate || m.Verdict != compare.VerdictSlower ||
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
