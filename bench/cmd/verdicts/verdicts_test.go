package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/verdict"
)

// Every test here is of the harness's pure parts: no root, no rtload run,
// well under a second.

func TestBinomialClopperPearson(t *testing.T) {
	// Exact 95% Clopper–Pearson intervals (R: binom.test(k, n)$conf.int).
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 20, 0, 0.168433},
		{1, 20, 0.001265, 0.248733},
		{2, 20, 0.012349, 0.316990},
		{8, 10, 0.443905, 0.974789},
		{10, 10, 0.691503, 1},
		{5, 10, 0.187086, 0.812914},
	} {
		p := binomial(c.k, c.n, 0.95)
		if p.P != float64(c.k)/float64(c.n) || math.Abs(p.Lo-c.lo) > 1e-5 || math.Abs(p.Hi-c.hi) > 1e-5 {
			t.Errorf("binomial(%d, %d) = %v [%v, %v], want %v [%v, %v]", c.k, c.n, p.P, p.Lo, p.Hi, float64(c.k)/float64(c.n), c.lo, c.hi)
		}
	}
	for _, c := range [][2]int{{0, 0}, {3, 2}, {-1, 5}} {
		if p := binomial(c[0], c[1], 0.95); !math.IsNaN(p.P) || !math.IsNaN(p.Lo) || !math.IsNaN(p.Hi) {
			t.Errorf("binomial(%d, %d) = %+v, want NaN", c[0], c[1], p)
		}
	}
	if got, want := binomial(1, 20, 0.95).String(), "1 of 20 = 5% [0.1%, 24.9%]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := binomial(0, 0, 0.95).String(), "0 of 0 checks"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestParseChange(t *testing.T) {
	for s, want := range map[string]change{
		"recvmsg":     {Name: "recvmsg", Method: "recvmsg"},
		" recvmmsg-8": {Name: "recvmmsg-8", Method: "recvmmsg", Batch: 8},
		"recvfrom":    {Name: "recvfrom", Method: "recvfrom"},
	} {
		got, err := parseChange(s)
		if err != nil || got != want {
			t.Errorf("parseChange(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "recv", "recvmsg-2", "recvmmsg", "recvmmsg-0", "recvmmsg-1025", "recvmmsg-x"} {
		if _, err := parseChange(s); err == nil {
			t.Errorf("parseChange(%q): no error", s)
		}
	}
	c, _ := parseChange("recvmmsg-32")
	if got := c.set(); !slices.Equal(got, [][2]string{{"readers[0].method", "recvmmsg"}, {"readers[0].batch", "32"}}) {
		t.Errorf("set = %v", got)
	}
}

func TestCheckOrder(t *testing.T) {
	all := []series{{Key: "a", N: 3}, {Key: "b", N: 1}, {Key: "c", N: 2}}
	var got []string
	for _, p := range checkOrder(all) {
		got = append(got, checkName(p.s.Key, p.i))
	}
	want := []string{
		"checks/a-01", "checks/b-01", "checks/c-01", // round 0 in order
		"checks/c-02", "checks/a-02", // round 1 reversed, b done
		"checks/a-03",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkOrder = %v, want %v", got, want)
	}
	if len(checkOrder(nil)) != 0 {
		t.Error("checkOrder(nil) not empty")
	}
}

func size(name string, pct float64) trueSize {
	t := trueSize{Change: name}
	if !math.IsNaN(pct) {
		lo, hi := pct-1, pct+1
		t.Blocks = compare.Interleaved{ChangePct: &pct, LoPct: &lo, HiPct: &hi}
	}
	return t
}

func TestPickChanges(t *testing.T) {
	sizes := []trueSize{size("recvmsg", 4), size("recvmmsg-1", 12), size("recvmmsg-8", 9), size("recvmmsg-32", 27), size("x", math.NaN())}
	m, l, err := pickChanges(sizes, "", "")
	if err != nil || m.Size.Change != "recvmmsg-1" || !m.InRange || m.Forced || l.Size.Change != "recvmmsg-32" || !l.InRange {
		t.Fatalf("pickChanges = %+v, %+v, %v", m, l, err)
	}
	// Nothing in +8–15%: the nearest to the range, marked out of it; large
	// is never the medium one.
	m, l, err = pickChanges([]trueSize{size("a", 3), size("b", 40)}, "", "")
	if err != nil || m.Size.Change != "a" || m.InRange || l.Size.Change != "b" || l.InRange {
		t.Fatalf("out of range: %+v, %+v, %v", m, l, err)
	}
	// Forced names override the picks.
	m, l, err = pickChanges(sizes, "recvmsg", "recvmmsg-8")
	if err != nil || m.Size.Change != "recvmsg" || !m.Forced || m.InRange || l.Size.Change != "recvmmsg-8" || !l.Forced {
		t.Fatalf("forced: %+v, %+v, %v", m, l, err)
	}
	if _, _, err := pickChanges(sizes, "nope", ""); err == nil {
		t.Error("forced unknown change: no error")
	}
	// One change with an interval is too few for two picks.
	if _, _, err := pickChanges([]trueSize{size("a", 10), size("b", math.NaN())}, "", ""); err == nil || !strings.Contains(err.Error(), "b") {
		t.Errorf("too few: %v", err)
	}
}

func TestCheckDefaults(t *testing.T) {
	help := "      --budget duration       the most time the new run may take: ... (default 5m0s)\n" +
		"      --looks int             how many times ... (default 5)\n"
	d, n, err := checkDefaults(help)
	if err != nil || d != 5*time.Minute || n != 5 {
		t.Errorf("checkDefaults = %v, %d, %v", d, n, err)
	}
	if _, _, err := checkDefaults("--budget duration x\n"); err == nil {
		t.Error("no defaults: no error")
	}
}

func TestPlanSameAndQuick(t *testing.T) {
	p := Plan{AA: 20, Phases: allPhases, Command: "a", Started: time.Unix(1, 0)}
	q := p
	q.Command, q.Started = "b", time.Unix(2, 0)
	if !p.same(q) {
		t.Error("plans differing in command and start time are not the same")
	}
	q.AA = 19
	if p.same(q) {
		t.Error("plans of other counts are the same")
	}

	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var r Plan
	fs.IntVar(&r.AA, "aa", 20, "")
	fs.IntVar(&r.Large, "large", 10, "")
	if err := fs.Parse([]string{"-aa", "7"}); err != nil {
		t.Fatal(err)
	}
	r.quick(fs)
	if r.AA != 7 || r.Large != 1 || r.Budget != 30*time.Second || !slices.Equal(r.RunFlags, []string{"--duration", "1s"}) {
		t.Errorf("quick: %+v", r)
	}
	r.RunFlags = []string{"--duration", "3s"}
	r.quick(fs)
	if !slices.Equal(r.RunFlags, []string{"--duration", "3s"}) {
		t.Errorf("quick overrode a given --duration: %v", r.RunFlags)
	}
}

func TestBound(t *testing.T) {
	p := Plan{Phases: []string{"aa"}, AA: 2, DefaultBudget: time.Minute}
	// The default baseline, the recommended one (basePlanned processes)
	// and 2 checks of budget + slack each.
	want := runTimeout(1) + runTimeout(basePlanned) + 2*(time.Minute+checkSlack)
	if got := p.bound(); got != want {
		t.Errorf("bound = %v, want %v", got, want)
	}
}

func TestCheckStep(t *testing.T) {
	b := &bench{p: Plan{RTLoad: "rtload", RunFlags: []string{"--duration", "1s"}, DefaultBudget: time.Minute}, dir: "/d"}
	aa := b.checkStep(series{Key: "aa", Base: "base"}, 3)
	want := []string{"rtload", "check", "/d/base", "--trust-baseline", "-q", "--format", "json", "--out", "/d/checks/aa-03"}
	if !slices.Equal(aa.argv, want) || aa.name != "checks/aa-03" || aa.timeout != time.Minute+checkSlack {
		t.Errorf("A/A step = %+v", aa)
	}
	b.p.Budget, b.p.Looks = 30*time.Second, 3
	pw := b.checkStep(series{Key: "large", Base: "base", Scenario: "scenarios/large.yaml"}, 1)
	want = []string{"rtload", "check", "/d/base", "/d/scenarios/large.yaml", "--trust-baseline", "-q", "--format", "json", "--out", "/d/checks/large-01",
		"--budget", "30s", "--looks", "3", "--duration", "1s"}
	if !slices.Equal(pw.argv, want) {
		t.Errorf("power step argv = %q", pw.argv)
	}
}

func TestScenarios(t *testing.T) {
	c, _ := parseChange("recvmmsg-8")
	y, err := candidateScenario(c)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := scenario.Load("candidate", y)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Variants) < 2 || spec.Variants[0].Name != baseVariant {
		t.Fatalf("variants = %+v", spec.Variants)
	}
	if !bytes.Contains(y, []byte("recvmmsg")) || !bytes.Contains(y, []byte("readers[0].batch")) {
		t.Errorf("candidate does not run recvmmsg-8:\n%s", y)
	}
	var ladder []change
	for _, n := range []string{"recvmsg", "recvmmsg-1"} {
		c, _ := parseChange(n)
		ladder = append(ladder, c)
	}
	y, err = truesizeScenario(ladder)
	if err != nil {
		t.Fatal(err)
	}
	spec, err = scenario.Load("truesize", y)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range spec.Variants {
		names = append(names, v.Name)
	}
	if !slices.Equal(names, []string{"recvfrom", "recvmsg", "recvmmsg-1"}) {
		t.Errorf("true-size variants = %v", names)
	}
}

func TestSteps(t *testing.T) {
	dir := t.TempDir()
	if steps, order, err := readSteps(dir); err != nil || len(steps) != 0 || order != nil {
		t.Fatalf("empty dir: %v %v %v", steps, order, err)
	}
	a := Step{Name: "a", ExitCode: -1, Interrupted: true}
	b := Step{Name: "b", ExitCode: 1}
	a2 := Step{Name: "a", ExitCode: 0}
	for _, s := range []Step{a, b, a2} {
		if err := appendStep(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	steps, order, err := readSteps(dir)
	if err != nil || !slices.Equal(order, []string{"a", "b"}) || steps["a"].ExitCode != 0 {
		t.Fatalf("readSteps = %v %v %v", steps, order, err)
	}
	if a.Done() || !b.Done() || !a2.Done() || (Step{Name: "c", Error: "x"}).Done() {
		t.Error("Done")
	}
	os.WriteFile(filepath.Join(dir, stepsFile), []byte("{\n"), 0o644)
	if _, _, err := readSteps(dir); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Errorf("bad line: %v", err)
	}
}

func f64(v float64) *float64 { return &v }

// report is a check's JSON as rtload check writes it, with one metric.
func report(v verdict.Verdict, exit int, point, lo, hi, se, mdc float64) *verdict.Report {
	return &verdict.Report{Schema: verdict.Schema, Verdict: v, ExitCode: exit,
		Gate: verdict.Gate{Verdict: v, ThresholdPct: 3, Metrics: []verdict.Metric{{
			Name: "mean per-call cost", Unit: "ns", Column: "recvfrom/new", Verdict: string(v),
			Interval:         &compare.Interval{Level: 0.95, PointPct: &point, LowPct: &lo, HighPct: &hi, SELog: &se},
			MinDetectablePct: f64(mdc),
		}}},
		Sequential: &verdict.Sequential{Processes: 4, Looks: 2, MaxLooks: 5, Stop: "decided", ElapsedNs: int64(40 * time.Second)}}
}

func TestClassAndCount(t *testing.T) {
	cs := []checkData{
		{Ran: true, Doc: report(verdict.Slower, 1, 5, 4, 6, 0.01, 4)},
		{Ran: true, Doc: report(verdict.NotSlower, 0, 0, -1, 1, 0.01, 4)},
		{Ran: true, Doc: report(verdict.Undecided, 125, 2, -1, 5, 0.01, 4)},
		{Ran: true, Doc: &verdict.Report{Verdict: verdict.CannotJudge, ExitCode: 125}},
		{Ran: true, Doc: report(verdict.Slower, 0, 5, 4, 6, 0.01, 4)}, // exit and verdict disagree
		{Ran: true},  // no JSON
		{Ran: false}, // not run
	}
	got := count(cs)
	want := tallyOf{Ran: 6, Slower: 1, NotSlower: 1, Undecided: 1, CannotJudge: 1, Failed: 2}
	if got != want {
		t.Errorf("count = %+v, want %+v", got, want)
	}
	if got.verdicts() != 3 || got.falseAlarms().String() != "1 of 3 = 33% [0.8%, 90.6%]" {
		t.Errorf("verdicts %d, false alarms %v", got.verdicts(), got.falseAlarms())
	}
}

func TestTallyRow(t *testing.T) {
	row := tallyRow("aa-01", report(verdict.NotSlower, 0, -0.5, -2.25, 1.25, 0.01, 4.5), "")
	want := "| aa-01 | 0 | not slower | 4 | 2/5 | decided | 40s | recvfrom/new mean per-call cost (ns): not slower -0.5% [-2.2%, +1.2%] (95.00%), +4.5% |\n"
	if row != want {
		t.Errorf("tallyRow =\n%s\nwant\n%s", row, want)
	}
	d := &verdict.Report{Verdict: verdict.CannotJudge, ExitCode: 125, Gate: verdict.Gate{Reasons: []string{"a|b\nc"}}}
	if row := tallyRow("x", d, ""); !strings.Contains(row, "| - | - | - | - | cannot judge: a\\|b c |") {
		t.Errorf("tallyRow without sequential = %q", row)
	}
}

func TestTallyCommand(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, r := range []*verdict.Report{
		report(verdict.NotSlower, 0, 0, -1, 1, 0.01, 4),
		report(verdict.Slower, 1, 5, 4, 6, 0.01, 4),
	} {
		f := filepath.Join(dir, []string{"a.json", "b.json"}[i])
		writeJSON(t, f, r)
		files = append(files, f)
	}
	var b bytes.Buffer
	if err := tally(&b, files); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2 checks: 1 not slower (exit 0), 1 slower (exit 1), 0 undecided or cannot judge (exit 125); slower in 1 of 2 = 50% [1.3%, 98.7%]") {
		t.Errorf("tally:\n%s", b.String())
	}
	writeJSON(t, filepath.Join(dir, "c.json"), map[string]string{"schema": "other"})
	if err := tally(&b, []string{filepath.Join(dir, "c.json")}); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("wrong schema: %v", err)
	}
}

func TestMeasuredMDC(t *testing.T) {
	x := &mdcOf{Point: []float64{0.01, -0.01}, Level: []float64{0.95, 0.95}}
	if _, _, _, ok := measuredMDC(x, 0.03); ok {
		t.Error("2 points: measured")
	}
	x = &mdcOf{Point: []float64{0.01, -0.01, 0.03, -0.03}, Level: []float64{0.95, 0.95, 0.95, 0.95}}
	mdc, sd, mean, ok := measuredMDC(x, 0.03)
	wantSD := math.Sqrt((0.0001 + 0.0001 + 0.0009 + 0.0009) / 3)
	if !ok || math.Abs(sd-wantSD) > 1e-12 || math.Abs(mean) > 1e-12 || !(mdc > 3) {
		t.Errorf("measuredMDC = %v %v %v %v", mdc, sd, mean, ok)
	}
	if got := spread([]float64{1, 3, 2}); got != "+2.0% (+1.0% … +3.0%, 3 checks)" {
		t.Errorf("spread = %q", got)
	}
	if median([]float64{4, 1, 3, 2}) != 2.5 || !math.IsNaN(median(nil)) {
		t.Error("median")
	}
}

func TestHelpers(t *testing.T) {
	if got := splitList(" a, ,b,"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("splitList = %q", got)
	}
	if flagValue([]string{"--duration", "1s"}, "--duration", "x") != "1s" || flagValue([]string{"--duration"}, "--duration", "x") != "x" {
		t.Error("flagValue")
	}
	d := &data{dir: "/b/d"}
	if got := d.rel([]string{"/b/d/base", "/b/dx", "/b/d"}); !slices.Equal(got, []string{"DIR/base", "/b/dx", "DIR"}) {
		t.Errorf("rel = %q", got)
	}
	if lastLine("a\nb\n\n") != "b" || lastLine("") != "" {
		t.Error("lastLine")
	}
}

func writeJSON(t *testing.T, file string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchDir writes a bench directory of an A/A series of n checks, slower
// of them "slower" and the rest "not slower", as a run would leave it.
func benchDir(t *testing.T, p Plan, n, slower int) string {
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, planFile), p)
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		name := checkName("aa", i)
		r := report(verdict.NotSlower, 0, float64(i%5)-2, float64(i%5)-4, float64(i%5), 0.01, 4)
		if i <= slower {
			r = report(verdict.Slower, 1, 6, 4, 8, 0.01, 4)
		}
		writeJSON(t, filepath.Join(dir, name+".json"), r)
		s := Step{Name: name, Argv: []string{"bin/rtload", "check", filepath.Join(dir, "base")}, Out: name + ".json", Err: name + ".err",
			Start: start.Add(time.Duration(i) * time.Minute), End: start.Add(time.Duration(i)*time.Minute + 40*time.Second), ExitCode: r.ExitCode, Load1Before: 0.3, Load1After: 0.4}
		if err := appendStep(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func render(t *testing.T, dir string) string {
	t.Helper()
	md := filepath.Join(t.TempDir(), "v.md")
	if err := renderDir(dir, md); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRenderAA(t *testing.T) {
	p := Plan{Phases: []string{"aa"}, AA: 20, DefaultBudget: 5 * time.Minute, DefaultLooks: 5, Version: "rtload test", Host: "Linux test"}
	md := render(t, benchDir(t, p, 20, 1))
	for _, want := range []string{
		"# Verdicts measured (issue 24): A/A, power, interleaved\n",
		"| A/A against the recommended baseline (baseline of 10 processes,",
		"1 slower (exit 1), 19 not slower (exit 0), 0 undecided (125), 0 cannot judge (125), 0 failed, of 20 checks; false alarms 1 of 20 = 5% [0.1%, 24.9%] | 13m20s | met |",
		"False-alarm rate: 1 of 20 = 5% [0.1%, 24.9%]",
		"| aa-01 | 1 | slower | 4 | 2/5 | decided | 40s |",
		"Checks ran at the default settings: budget 5m0s, 5 looks",
		"| aa | recvfrom/new | +4.0% (+4.0% … +4.0%, 20 checks) | 0.010 |",
		"load average around them was 0.3–0.4.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "machine was busy") {
		t.Error("a quiet run said busy")
	}

	// 2 false alarms: not met; a short series: not measured.
	if md := render(t, benchDir(t, p, 20, 2)); !strings.Contains(md, "| **NOT met** |") {
		t.Errorf("2 of 20 slower is met:\n%s", md)
	}
	if md := render(t, benchDir(t, p, 5, 0)); !strings.Contains(md, "| not measured: 5 of 20 checks |") {
		t.Errorf("5 of 20 checks is measured:\n%s", md)
	}
}

func TestRenderQuick(t *testing.T) {
	p := Plan{Quick: true, Phases: []string{"aa"}, AA: 2, Budget: 30 * time.Second, RunFlags: []string{"--duration", "1s"}, DefaultBudget: 5 * time.Minute, DefaultLooks: 5}
	md := render(t, benchDir(t, p, 2, 0))
	for _, want := range []string{"— quick: not a measurement", "**quick: not a measurement.**", "1s trials and a 30s check budget",
		"| quick |", "**not the defaults**", "**other than the default settings**"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "| met |") {
		t.Error("a quick run says met")
	}
}

func TestRenderNotBenchDir(t *testing.T) {
	if err := renderDir(t.TempDir(), "-"); err == nil || !strings.Contains(err.Error(), "not a bench directory") {
		t.Errorf("renderDir of an empty dir: %v", err)
	}
}
