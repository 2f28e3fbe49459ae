package view

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/interop"
	"github.com/rtload/rtload/results"
)

func TestLKPChanged(t *testing.T) {
	for _, tc := range []struct {
		name    string
		base, x []float64
		want    bool
	}{
		// base sorted 100 101 102: min 100, median 101, max 102.
		{"separated and 10% up: changed", []float64{100, 101, 102}, []float64{110, 111, 112}, true},
		{"separated and 10% down: changed", []float64{110, 111, 112}, []float64{100, 101, 102}, true},
		// min(x) 103 > median(base) 101 and median(x) 104 > max(base) 102,
		// but 104/101 = 1.0297 is not above 1.05.
		{"separated but 3% up: LKP hides it", []float64{100, 101, 102}, []float64{103, 104, 105}, false},
		// x sorted 101 120 121: min 101 is not above median(base) 101.
		{"overlapping: not changed", []float64{100, 101, 102}, []float64{101, 120, 121}, false},
		// min(x) 102 > median 101, median(x) 130 > max 110: the rule looks at
		// medians and extremes only, so one high base sample does not hide it.
		{"median above the max, min above the median", []float64{100, 101, 110}, []float64{102, 130, 131}, true},
		{"two samples on each side: LKP needs 3 on one", []float64{100, 101}, []float64{200, 201}, false},
		{"3 against 1 is enough", []float64{100, 101, 102}, []float64{200}, true},
		{"empty side", []float64{100, 101, 102}, nil, false},
		// 40 samples: n/32 = 1 dropped from each end, so the outliers 0 and
		// 1000 of x do not count: x trimmed is 150…187, min 150 > median(base) 119.
		{"trimmed ends", seq(100, 40), append([]float64{0, 1000}, seq(150, 38)...), true},
		{"zero base median counts as ratio 5", []float64{0, 0, 0}, []float64{1, 1, 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LKPChanged(tc.base, tc.x); got != tc.want {
				t.Errorf("LKPChanged(%v, %v) = %v, want %v", tc.base, tc.x, got, tc.want)
			}
		})
	}
}

func seq(from float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = from + float64(i)
	}
	return out
}

func TestLKPCells(t *testing.T) {
	for _, tc := range []struct {
		name   string
		avg    float64
		rounds []float64
		want   string
	}{
		{"below 1000: two decimals, sd hidden under 2%", 101, []float64{100, 101, 102}, "    101.00      "},
		// {90, 100, 110}: sd over n = 8.165, 8.2% of 100, truncated to 8.
		{"sd shown above 2%, truncated", 100, []float64{90, 100, 110}, "    100.00 ±  8%"},
		{"thousands: an integer, truncated", 123456.9, nil, "    123456      "},
		{"above 1e8: 4 significant digits", 1.145e8, nil, " 1.145e+08      "},
		{"one round: no sd", 5, []float64{5}, "      5.00      "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lkpValue(tc.avg, tc.rounds); got != tc.want {
				t.Errorf("lkpValue = %q, want %q", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		avg, base float64
		want      string
	}{
		{105.3, 100, "      +5.3% "}, // "%+10.1f%% "
		{85, 100, "     -15.0% "},
		{2200, 1, "  +2.2e+05% "}, // ".2g" from 100000% on
	} {
		if got := lkpChange(tc.avg, tc.base) + " "; got != tc.want {
			t.Errorf("lkpChange(%v, %v) = %q, want %q", tc.avg, tc.base, got, tc.want)
		}
	}
	if got := lkpStat("base:hb", "messaging sys time", "s"); got != "base.hb.messaging_sys_time_s" {
		t.Errorf("stat %q", got)
	}
	if got := lkpStat("recvfrom", "wakeup latency p99", "µs"); got != "recvfrom.wakeup_latency_p99_us" {
		t.Errorf("stat %q", got)
	}
}

// lkpRuns are three runs of three rounds each: the second slower per call
// and in fstime, the third like the first.
func lkpRuns() []compare.Run {
	a := comparetest.RoundsRun("base", []float64{100, 102, 104}, []float64{1000, 1010, 990})
	b := comparetest.RoundsRun("slow", []float64{150, 152, 154}, []float64{800, 810, 790})
	c := comparetest.RoundsRun("again", []float64{101, 103, 99}, []float64{1002, 1000, 995})
	for i, r := range []*compare.Run{&a, &b, &c} {
		r.Summary.Env = results.Env{Kernel: []string{"6.12.0", "6.12.0-slow", "6.12.0"}[i]}
		r.Dir = "results/" + r.Label
	}
	return []compare.Run{a, b, c}
}

func TestLKPGolden(t *testing.T) {
	res, err := facts.Compare(lkpRuns())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, res, "lkp"); err != nil {
		t.Fatal(err)
	}
	golden(t, "lkp", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"         %stddev     %change         %stddev     %change         %stddev\n",
		// mean per-call cost: base rounds 100, 102, 104 (sd 1.6%: hidden),
		// slow 150, 152, 154: +49.0%, again 101, 103, 99: −1.0%.
		"    102.00           +49.0%     152.00            -1.0%     101.00        v.mean_per-call_cost_ns\n",
		// p50 from bucket lower edges: again 100, 100, 90: mean 96.67, sd 4.71
		// = 4.9% of it, truncated to 4 as LKP prints it.
		"    100.00           +50.0%     150.00            -3.3%      96.67 ±  4%  v.p50_per-call_cost_ns\n",
		"      1000           -20.0%     800.00            -0.1%     999.00        v.fstime.write_throughput_kb_s\n",
		"changed by that rule: v.mean_per-call_cost_ns (slow), ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lkp output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "(again)") {
		t.Errorf("the unchanged run is called changed:\n%s", out)
	}
}

// metadataRuns are two runs whose environments differ in every fact the
// metadata header shows, and agree on others (hostname).
func metadataRuns() []compare.Run {
	env := func(kernel, cmdline, hardened, preempt, spectre, cs, ucode, cpu, idle string) results.Env {
		return results.Env{
			Hostname: "lab1", Kernel: kernel, KernelVersion: "#1 SMP " + preempt,
			Cmdline: cmdline, Clocksource: cs, Microcode: ucode, CPUModel: cpu, CPUs: 8,
			CPUIdleDriver: "intel_idle", CPUIdleGovernor: idle,
			KernelConfig: map[string]string{"CONFIG_HARDENED_USERCOPY": hardened, "CONFIG_PREEMPT": map[string]string{"PREEMPT": "y", "PREEMPT_DYNAMIC": "n"}[preempt],
				"CONFIG_HZ": "250"},
			Vulnerabilities: map[string]string{"meltdown": "Not affected", "spectre_v2": spectre},
		}
	}
	a := testutil.SeedRun("x", [2]int{0, 2}, 0)
	b := testutil.SeedRun("x", [2]int{1, 3}, 0)
	a.Env = env("6.12.0", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet -- single", "n", "PREEMPT", "Mitigation: Retpolines", "tsc", "0xde", "Intel(R) Xeon(R) Gold 6230", "menu")
	b.Env = env("6.12.0-hard", `BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet init_on_free=1 "dyndbg=file x +p"`, "y", "PREEMPT_DYNAMIC", "Mitigation: Enhanced IBRS", "hpet", "0xf0", "Intel(R) Xeon(R) Gold 6230", "teo")
	for i := range b.Trials {
		b.Trials[i].CPUDMALatencyUs = -1
	}
	return []compare.Run{{Label: "unhard", Dir: "results/unhard", Summary: a}, {Label: "hard", Dir: "results/hard", Summary: b}}
}

func TestMetadataHeaderGolden(t *testing.T) {
	runs := metadataRuns()
	md := facts.Metadata(runs)
	var fields []string
	for _, d := range md {
		fields = append(fields, d.Field)
	}
	want := []string{"kernel", "kernel_version", "cmdline init_on_free", "cmdline dyndbg", "CONFIG_HARDENED_USERCOPY",
		"CONFIG_PREEMPT", "mitigation spectre_v2", "clocksource", "microcode", "cpuidle_governor", "cpu_dma_latency"}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("metadata fields (-want +got):\n%s", diff)
	}
	res, err := facts.Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeHead(res, &b, "")
	golden(t, "metadata_header", []byte(b.String()))
	for _, want := range []string{
		"  cmdline init_on_free      (none)                  1\n",
		"  cmdline dyndbg            (none)                  file x +p\n",
		"  cpu_dma_latency           0 µs                    not held\n",
		"WARNING: runs differ in clocksource, cmdline (above): not the same machine setup, compare with care\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("header lacks %q:\n%s", want, b.String())
		}
	}
	// Facts they share are not listed; "single" after "--" is init's.
	for _, not := range []string{"hostname", "cpu_model", "CONFIG_HZ", "meltdown", "single", "info: runs differ in kernel"} {
		if strings.Contains(b.String(), not) {
			t.Errorf("header shows %q:\n%s", not, b.String())
		}
	}
	// One run, or runs that agree: no table.
	if md := facts.Metadata(runs[:1]); len(md) != 0 {
		t.Errorf("one run: metadata %v", md)
	}
	if md := facts.Metadata([]compare.Run{runs[0], {Label: "copy", Summary: runs[0].Summary}}); len(md) != 0 {
		t.Errorf("identical runs: metadata %v", md)
	}
}

// hackbenchRun is a messaging probe run with one value per round.
func hackbenchRun(label string, secs []float64) compare.Run {
	s := &results.Summary{Version: results.SummaryVersion, Scenario: "cook-hackbench", Clock: results.ClockInfo{Kind: "tsc", Unit: "TSC ticks", Hz: 2e9}}
	for i, v := range secs {
		s.Trials = append(s.Trials, results.Trial{Index: i, Round: i, Variant: "base",
			Probes: []results.Probe{{Name: "hackbench", Kind: "messaging", Messaging: &results.MessagingResult{
				ElapsedNs: int64(v * 1e9), SysNs: int64(v * 0.8e9)}}}})
	}
	return compare.Run{Label: label, Summary: s}
}

// TestProbeRunsSeed001: comparing two hackbench runs prints seed 001's
// block per run and the % change line (the seed's own numbers).
func TestProbeRunsSeed001(t *testing.T) {
	res, err := facts.Compare([]compare.Run{
		hackbenchRun("alloc0", []float64{289.72, 286.95, 287.87, 287.34, 287.35}),
		hackbenchRun("free1", []float64{303.26, 301.44, 301.19, 301.55, 301.39}),
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"messaging probe: messaging time (s), every run (seed 001's layout; Std Dev over n)\n",
		"  base:hackbench/alloc0  Runs: 289.720 286.950 287.870 287.340 287.350\n",
		"                         Min: 286.950 Max: 289.720 Mean: 287.846 Std Dev: 0.982\n",
		"  base:hackbench/free1   Runs: 303.260 301.440 301.190 301.550 301.390\n",
		"                         Min: 301.190 Max: 303.260 Mean: 301.766 Std Dev: 0.756\n",
		"                         4.84% slower than base:hackbench/alloc0\n",
		"messaging probe: messaging sys time (s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"per-call cost", "wakeup latency percentiles"} {
		if strings.Contains(out, not) {
			t.Errorf("a probe-only compare prints %q:\n%s", not, out)
		}
	}
}

// TestWakeupOnlyTables: a timer-only run against a cyclictest file prints
// no per-call table, no per-call percentiles and no message or drain rows.
func TestWakeupOnlyTables(t *testing.T) {
	lat := testutil.Latency(1000, 5000, 40)
	s := &results.Summary{Version: results.SummaryVersion, Scenario: "timer-only", Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		Clock: results.ClockInfo{Kind: "tsc", Unit: "TSC ticks", Hz: 2e9},
		Trials: []results.Trial{{Variant: "base", DurationNs: 10e9,
			Readers: []results.Reader{{Name: "timer", Wakeups: lat.Count, WakeupLatency: lat}}}}}
	dir := t.TempDir()
	testutil.WriteSummary(t, dir, s)
	// The cyclictest column: the same run in cyclictest's -h layout.
	ctDir := t.TempDir()
	if _, err := interop.WriteInterop(testutil.ResultsDir(t, ctDir).Dir, s); err != nil {
		t.Fatal(err)
	}
	ct := filepath.Join(ctDir, "wakeup-cyclictest.txt")
	runs, err := load.Runs([]string{dir, ct}, []string{"rtload", "cyclictest"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := facts.Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "wakeup latency percentiles (µs") || !strings.Contains(out, "wakeup latency p99 (µs)") {
		t.Errorf("no wakeup latency:\n%s", out)
	}
	for _, not := range []string{"per-call cost", "per-call unit", "messages lost", "drain time"} {
		if strings.Contains(out, not) {
			t.Errorf("wakeup-only compare prints %q:\n%s", not, out)
		}
	}
}
