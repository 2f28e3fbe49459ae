package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestTQuantile(t *testing.T) {
	for _, tc := range []struct {
		name        string
		p, df, want float64
	}{
		{"df 1 is Cauchy: tan(0.475π)", 0.975, 1, 12.706204736},
		{"df 2 closed form", 0.975, 2, 4.302652730},
		{"df 8, the Welch example below", 0.975, 8, 2.306004135},
		{"df 30", 0.975, 30, 2.042272456},
		{"one-sided 95%, df 5", 0.95, 5, 2.015048373},
		{"lower tail is symmetric", 0.025, 8, -2.306004135},
		{"huge df tends to the normal", 0.975, 1e7, 1.959964},
		{"fractional df (Welch)", 0.975, 1.5, 6.0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TQuantile(tc.p, tc.df)
			if tc.name == "fractional df (Welch)" {
				// Between df 1 (12.71) and df 2 (4.30), and its CDF is p.
				if !(got > 4.30 && got < 12.71) || !near(TCDF(got, tc.df), tc.p, 1e-9) {
					t.Errorf("TQuantile(%v, %v) = %v, CDF %v", tc.p, tc.df, got, TCDF(got, tc.df))
				}
				return
			}
			if !near(got, tc.want, 1e-5) {
				t.Errorf("TQuantile(%v, %v) = %.9f, want %.9f", tc.p, tc.df, got, tc.want)
			}
		})
	}
}

func TestWelchHandComputed(t *testing.T) {
	// a = 10..14, b = 12..16.
	//   means 12 and 14: diff = 2.
	//   sample variances: (4+1+0+1+4)/4 = 2.5 each, s = √2.5 = 1.5811.
	//   se = √(2.5/5 + 2.5/5) = √1 = 1.0.
	//   df = (0.5+0.5)² / (0.5²/4 + 0.5²/4) = 1 / 0.125 = 8.
	//   t(0.975, 8) = 2.306004; CI = 2 ∓ 2.306004 = [−0.306004, 4.306004]:
	//   contains 0, so within noise.
	w := WelchCI([]float64{10, 11, 12, 13, 14}, []float64{12, 13, 14, 15, 16})
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"diff", w.Diff, 2},
		{"sa", w.SA, 1.5811388},
		{"sb", w.SB, 1.5811388},
		{"se", w.SE, 1.0},
		{"df", w.DF, 8},
		{"t", w.T, 2.306004},
		{"lo", w.Lo, -0.306004},
		{"hi", w.Hi, 4.306004},
	} {
		if !near(c.got, c.want, 1e-6) {
			t.Errorf("%s = %.7f, want %.7f", c.name, c.got, c.want)
		}
	}
	m := Metric{}
	judge(&m, sample{value: 12, rounds: []float64{10, 11, 12, 13, 14}}, sample{value: 14, rounds: []float64{12, 13, 14, 15, 16}})
	if m.Verdict != VerdictWithinNoise || m.Method != MethodWelch || !strings.Contains(m.MethodNote, "5+5 rounds, df 8.0") {
		t.Errorf("verdict %q method %q (%s), want within noise by welch", m.Verdict, m.Method, m.MethodNote)
	}
	if m.ChangePct == nil || !near(*m.ChangePct, 100.0*2/12, 1e-9) {
		t.Errorf("change %v, want 16.67%%", m.ChangePct)
	}

	// Unequal variances and sizes: a = {1, 2, 3} (mean 2, s² 1), b = {2, 4, 6, 8}
	// (mean 5, s² 20/3). se² = 1/3 + 5/3 = 2, se = 1.41421;
	// df = 2² / ((1/3)²/2 + (5/3)²/3) = 4 / (1/18 + 25/27) = 4 / (53/54) = 4.0755.
	w = WelchCI([]float64{1, 2, 3}, []float64{2, 4, 6, 8})
	if !near(w.Diff, 3, 1e-12) || !near(w.SE, math.Sqrt2, 1e-12) || !near(w.DF, 216.0/53, 1e-9) {
		t.Errorf("diff %v se %v df %v, want 3, √2, 4.0755", w.Diff, w.SE, w.DF)
	}
	if !near(TCDF(w.T, w.DF), 0.975, 1e-9) || !near(w.Hi-w.Lo, 2*w.T*math.Sqrt2, 1e-9) {
		t.Errorf("t %v, CI [%v, %v]", w.T, w.Lo, w.Hi)
	}

	if WelchCI([]float64{1}, []float64{1, 2}).Defined {
		t.Error("Welch with one value on a side is defined")
	}
}

func TestBootstrap(t *testing.T) {
	a := seedSnapshot(0, 0)
	b := seedSnapshot(1, 0)
	run := func() Bootstrap {
		ra := histResampler(a, histMean)
		rb := histResampler(b, histMean)
		return bootstrapCI(ra, rb, b.Mean()-a.Mean())
	}
	first := run()
	if again := run(); again != first {
		t.Errorf("bootstrap not reproducible with seed %d: %+v then %+v", BootstrapSeed, first, again)
	}
	if first.N != Resamples || first.Seed != BootstrapSeed {
		t.Errorf("resamples %d seed %d", first.N, first.Seed)
	}
	if !(first.Lo <= first.Diff && first.Diff <= first.Hi) {
		t.Errorf("CI [%v, %v] excludes the difference %v", first.Lo, first.Hi, first.Diff)
	}
	// The standard error of a mean over 2.8M samples is about sd/√n: a
	// few ticks. The 95% CI must be of that order, not tens of ticks.
	if w := first.Hi - first.Lo; w <= 0 || w > 40 {
		t.Errorf("CI width %v ticks, want a few", w)
	}

	// Every sample in one bucket: no spread, the CI is the difference itself.
	one := record.NewLinear(seedWidth, seedOrigin, seedOverflow)
	two := record.NewLinear(seedWidth, seedOrigin, seedOverflow)
	for range 1000 {
		one.Record(1000)
		two.Record(1300)
	}
	sa, sb := one.Snapshot("ticks"), two.Snapshot("ticks")
	bs := bootstrapCI(histResampler(sa, histMean), histResampler(sb, histMean), sb.Mean()-sa.Mean())
	if bs.Lo != 300 || bs.Hi != 300 {
		t.Errorf("point-mass CI [%v, %v], want [300, 300]", bs.Lo, bs.Hi)
	}

	// Per-wakeup samples: resampling {1..100} against itself + 10.
	xs := make([]float64, 100)
	ys := make([]float64, 100)
	for i := range xs {
		xs[i], ys[i] = float64(i+1), float64(i+11)
	}
	bs = bootstrapCI(sampleResampler(xs, mean), sampleResampler(ys, mean), 10)
	// sd of 1..100 is 29.01; se of the difference √2·29.01/10 = 4.10;
	// the CI is about 10 ∓ 1.96·4.10 = [2.0, 18.0].
	if !near(bs.Lo, 2.0, 1.5) || !near(bs.Hi, 18.0, 1.5) {
		t.Errorf("sample bootstrap CI [%v, %v], want about [2, 18]", bs.Lo, bs.Hi)
	}
}

func TestBinomial(t *testing.T) {
	// Mean and variance of many draws, on both sides of the inversion/normal
	// switch.
	r := newTestRand()
	for _, tc := range []struct {
		n uint64
		p float64
	}{{100, 0.05}, {1000, 0.2}, {2_800_000, 0.1}, {10, 0.9}} {
		const draws = 20000
		var sum, sq float64
		for range draws {
			k := float64(binomial(r, tc.n, tc.p))
			sum += k
			sq += k * k
		}
		m := sum / draws
		v := sq/draws - m*m
		wm, wv := float64(tc.n)*tc.p, float64(tc.n)*tc.p*(1-tc.p)
		if !near(m, wm, 5*math.Sqrt(wv/draws)) || !near(v, wv, 0.05*wv) {
			t.Errorf("Binomial(%d, %v): mean %v var %v, want %v %v", tc.n, tc.p, m, v, wm, wv)
		}
	}
}

// verdicts maps "metric (unit) column" to the verdict.
func verdicts(res *Result) map[string]string {
	out := map[string]string{}
	for _, m := range res.Metrics {
		out[metricKey(m)+" "+m.Column] = m.Verdict
	}
	return out
}

func TestVerdicts(t *testing.T) {
	same := func(label string) Run {
		return Run{Label: label, Summary: seedSummary("6.12", [2]int{0, 2}, 0)}
	}
	shifted := Run{Label: "shifted", Summary: seedSummary("6.12", [2]int{0, 2}, 4)} // +512 ticks
	faster := Run{Label: "faster", Summary: seedSummary("6.12", [2]int{0, 2}, -3)}  // −384 ticks (bucket 0 fills)
	for _, tc := range []struct {
		name string
		runs []Run
		want map[string]string
	}{
		{"identical data is within noise", []Run{same("a"), same("b")}, map[string]string{
			"mean per-call cost (TSC ticks) recvfrom/b": VerdictWithinNoise,
			"mean per-call cost (ns) recvmsg/b":         VerdictWithinNoise,
			"p50 per-call cost (TSC ticks) recvfrom/b":  VerdictWithinNoise,
			"p99 per-call cost (TSC ticks) recvmsg/b":   VerdictWithinNoise,
			"mean per-call cost (TSC ticks) recvfrom/a": VerdictBaseline,
		}},
		{"a copy shifted 4 buckets up is slower", []Run{same("a"), shifted}, map[string]string{
			"mean per-call cost (TSC ticks) recvfrom/shifted": VerdictSlower,
			"mean per-call cost (ns) recvmsg/shifted":         VerdictSlower,
			"p50 per-call cost (TSC ticks) recvfrom/shifted":  VerdictSlower,
			"p99 per-call cost (TSC ticks) recvfrom/shifted":  VerdictSlower,
			// recvmsg's p99 is in the overflow bucket ("8256+") before and
			// after the shift: the buckets cannot tell.
			"p99 per-call cost (TSC ticks) recvmsg/shifted": VerdictWithinNoise,
		}},
		{"a copy shifted 3 buckets down is faster", []Run{same("a"), faster}, map[string]string{
			"mean per-call cost (TSC ticks) recvfrom/faster": VerdictFaster,
			"p50 per-call cost (TSC ticks) recvmsg/faster":   VerdictFaster,
		}},
		{"no wakeup log and one round: no CI", []Run{same("a"), same("b")}, map[string]string{
			"wakeup latency max (µs) recvfrom/b": VerdictUnknown,
			"mean drain time (µs) recvmsg/b":     VerdictUnknown,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compare(tc.runs)
			if err != nil {
				t.Fatal(err)
			}
			got := verdicts(res)
			for k, want := range tc.want {
				if got[k] != want {
					t.Errorf("%s: verdict %q, want %q", k, got[k], want)
				}
			}
		})
	}
	// With per-wakeup logs, wakeup p99 and drain time bootstrap over them.
	withLogs := func(label string, base int64) Run {
		r := same(label)
		for i := range r.Summary.Trials {
			r.Summary.Trials[i].Readers[0].WakeupLatency = testutil.Latency(500, base, 37)
		}
		r.Wakeups = map[ReaderIndex][]record.Wakeup{
			{0, 0}: wakeupLog(500, base, 37, 700_000),
			{1, 0}: wakeupLog(500, base, 37, 700_000),
		}
		return r
	}
	res, err := Compare([]Run{withLogs("a", 2000), withLogs("b", 2000), withLogs("late", 12000)})
	if err != nil {
		t.Fatal(err)
	}
	got := verdicts(res)
	for k, want := range map[string]string{
		"wakeup latency p99 (µs) recvfrom/b":    VerdictWithinNoise,
		"mean drain time (µs) recvmsg/b":        VerdictWithinNoise,
		"wakeup latency p99 (µs) recvfrom/late": VerdictSlower,
	} {
		if got[k] != want {
			t.Errorf("%s: verdict %q, want %q", k, got[k], want)
		}
	}
	for _, m := range res.Metrics {
		if m.Name == "wakeup latency p99" && m.Verdict != VerdictBaseline && !strings.Contains(m.MethodNote, "per-wakeup samples") {
			t.Errorf("%s: method %s", m.Column, m.MethodNote)
		}
	}

	// The bootstrap is named as the method of per-call metrics.
	res, err = Compare([]Run{same("a"), shifted})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Metrics {
		if m.Name == "mean per-call cost" && m.Unit == "TSC ticks" && m.Column == "recvfrom/shifted" {
			if m.Method != MethodBootstrap || !strings.Contains(m.MethodNote, "resamples of per-call samples, seed 1") {
				t.Errorf("method %q (%s)", m.Method, m.MethodNote)
			}
			// 4 buckets = 512 ticks, a little less after the top of the
			// distribution piles into the fixed-value overflow bucket.
			if m.Diff == nil || !near(*m.Diff, 500, 30) {
				t.Errorf("diff %v, want about +500 ticks", *m.Diff)
			}
		}
	}
}

// roundsRun is a run with one reader metric per round (Welch) and a
// file_write probe.
func roundsRun(label string, costs, kbps []float64) Run {
	s := &results.Summary{Version: 1, Scenario: "x", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
	for i, c := range costs {
		h := record.NewLinear(10, 0, 10_000)
		for range 100 {
			h.Record(uint64(c))
		}
		s.Trials = append(s.Trials, results.Trial{Index: i, Round: i, Variant: "v",
			Readers: []results.Reader{{Name: "rt", Lost: uint64(i), PerCall: results.PerCall{All: h.Snapshot("ns")}}},
			Probes:  []results.Probe{{Name: "fstime", Kind: "file_write", FileWrite: &results.FileWriteResult{KBps: kbps[i]}}},
		})
	}
	return Run{Label: label, Summary: s}
}

func TestVerdictsWelch(t *testing.T) {
	base := roundsRun("a", []float64{100, 102, 104}, []float64{1000, 1010, 990})
	for _, tc := range []struct {
		name string
		b    Run
		want map[string]string
	}{
		{"identical rounds", roundsRun("b", []float64{100, 102, 104}, []float64{1000, 1010, 990}), map[string]string{
			"mean per-call cost (ns) v/b":            VerdictWithinNoise,
			"write throughput (KB/s) v:fstime/b":     VerdictWithinNoise,
			"messages lost per round (messages) v/b": VerdictWithinNoise,
		}},
		{"slower calls, lower throughput", roundsRun("b", []float64{150, 152, 154}, []float64{800, 810, 790}), map[string]string{
			"mean per-call cost (ns) v/b":        VerdictSlower,
			"write throughput (KB/s) v:fstime/b": VerdictSlower,
		}},
		{"higher throughput is faster", roundsRun("b", []float64{100, 102, 104}, []float64{1200, 1210, 1190}), map[string]string{
			"write throughput (KB/s) v:fstime/b": VerdictFaster,
		}},
		{"overlapping rounds", roundsRun("b", []float64{99, 103, 106}, []float64{1000, 1010, 990}), map[string]string{
			"mean per-call cost (ns) v/b": VerdictWithinNoise,
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
				if m.Column == "v/b" && m.Name == "mean per-call cost" && m.Method != MethodWelch {
					t.Errorf("method %q, want welch over 3+3 rounds", m.Method)
				}
			}
		})
	}
}

func TestDifferences(t *testing.T) {
	a := seedSummary("6.12.0", [2]int{0, 2}, 0)
	b := seedSummary("6.12.0-hardened", [2]int{1, 3}, 0)
	b.Env.(map[string]any)["cpu_model"] = "AMD EPYC 7763"
	b.Clock.Unit = "ns"
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
	b.Env.(map[string]any)["cmdline"] = "quiet init_on_free=1"
	b.Spec.(map[string]any)["period"] = "20ms"
	b.Spec.(map[string]any)["description"] = "prose may differ"
	warn, info := Differences([]Run{{Label: "unhard", Summary: a}, {Label: "hard", Summary: b}})
	var fields []string
	for _, d := range warn {
		fields = append(fields, d.Field)
	}
	want := []string{"scenario", "cpu_model", "cmdline", "clock unit", "clock hz", "degraded", "spec period"}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("warning fields (-want +got):\n%s", diff)
	}
	if len(info) != 1 || info[0].Field != "kernel" {
		t.Errorf("info %v, want kernel only", info)
	}
	if got := warn[5].Values; got[1] != "true (SCHED_OTHER)" {
		t.Errorf("degraded values %q", got)
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
		if diff := cmp.Diff(res, &back); diff != "" {
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
				if r[4] != "recvfrom/unhard" || r[12] != MethodBootstrap || r[14] != VerdictFaster {
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
	dir := t.TempDir()
	big := record.NewLinear(1, 0, 2_000_000).Snapshot("ticks")
	s := &results.Summary{Trials: []results.Trial{{Variant: "v", Readers: []results.Reader{{Name: "rt", PerCall: results.PerCall{All: big}}}}}}
	testutil.WriteSummary(t, dir, s)
	_, err := Load([]string{dir}, nil)
	if err == nil || !strings.Contains(err.Error(), "trials[0].readers[0].per_call.all.counts: more than 65536 entries, more than the limit of 65536") {
		t.Fatalf("err = %v", err)
	}
}
