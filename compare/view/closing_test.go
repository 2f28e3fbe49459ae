package view

import (
	"slices"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// processRun is testutil.ProcessRun.
func processRun(kernel string, cols [2]int, shift, procs int, jitter []float64) *results.Summary {
	return testutil.ProcessRun(kernel, cols, shift, procs, jitter)
}

var closingJitter = []float64{1.00, 1.01, 0.99, 1.02, 0.98, 1.005, 0.995, 1.015, 0.985, 1.0}

// closingRuns are two runs of 3 processes × 2 rounds: "base" and "new",
// whose recvmsg column is the seed's hardened one (slower per call).
func closingRuns() []compare.Run {
	return []compare.Run{
		{Label: "base", Dir: "results/base", Summary: processRun("6.1.0", [2]int{0, 2}, 0, 3, closingJitter)},
		{Label: "new", Dir: "results/new", Summary: processRun("6.1.0", [2]int{0, 3}, 1, 3, closingJitter[3:])},
	}
}

// TestCompareBriefGolden: compare's default output is the runs, the
// seed's table (folded), each column's headline values and the closing
// block, which ends on the verdict line; at most 60 lines. The closing
// block's numbers are the metrics' own (--format json's).
func TestCompareBriefGolden(t *testing.T) {
	res, err := facts.Compare(closingRuns())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Brief(&b, res); err != nil {
		t.Fatal(err)
	}
	c := Closing(res, nil)
	if err := c.Write(&b, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare_brief", []byte(b.String()))
	out := b.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > 60 {
		t.Errorf("compare A B: %d lines, want at most 60", len(lines))
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "verdict: ") {
		t.Errorf("the last line is %q, not the verdict", last)
	}
	if n := len(c.Lines); n < 3 || n > 8 {
		t.Errorf("closing block of %d lines, want 3–8", n)
	}
	prim := res.Primary()
	for i, m := range res.Metrics {
		if !prim[i] || m.Verdict == compare.VerdictBaseline {
			continue
		}
		want := ChangeLine(m, func(l string) string { return l }) + ": " + verdictWords(m, res.ThresholdPct)
		if !strings.Contains(out, "  "+want+"\n") {
			t.Errorf("closing block lacks %q", want)
		}
	}
}

// TestRunClosing: run's closing block for an interleaved run gives each
// variant's headline figure, the seed's change with its interval and n
// from the block pairs (the metric's interval, the same numbers
// Interleaved prints), the marks and the results path, last.
func TestRunClosing(t *testing.T) {
	s := comparetest.InterleavedSummary(100)
	s.Trials[1].Marks = append(s.Trials[1].Marks, results.Mark{Kind: results.MarkTraffic, Endpoint: "lo450", Text: "lo450: send lag p99 49.5ms > max_send_lag 20ms"})
	res, err := facts.Compare([]compare.Run{{Label: "run", Summary: s}})
	if err != nil {
		t.Fatal(err)
	}
	c := RunClosing(res, s, "results/il", "")
	var b strings.Builder
	if err := c.Write(&b, true); err != nil {
		t.Fatal(err)
	}
	golden(t, "run_closing", []byte(b.String()))
	il := res.Interleaved[0]
	want := "recvmsg " + strings.TrimPrefix(il.Line(), "recvmsg ") // the same numbers, the verdicts' rule
	if !strings.Contains(b.String(), want+": slower") {
		t.Errorf("closing block lacks %q:\n%s", want, b.String())
	}
	if n := len(c.Lines); n < 3 || n > 8 || c.Lines[n-1] != "results: results/il" {
		t.Errorf("closing block %q", c.Lines)
	}
	if !strings.Contains(b.String(), "*** NOT THE RUN ASKED FOR: 1 of 2 trials traffic not as specified (trial 2)") {
		t.Errorf("marks not said:\n%s", b.String())
	}
}

// TestRunMarks counts each kind of mark and lists the trials from 1.
func TestRunMarks(t *testing.T) {
	s := testutil.SeedRun("6.1", [2]int{0, 2}, 0)
	if m := RunMarks(s); len(m) != 0 || !strings.HasPrefix(MarksLine(m, 2), "marks: none") {
		t.Errorf("marks of a clean run: %+v", m)
	}
	s.Degraded = true
	s.Trials[0].Marks = append(s.Trials[0].Marks, results.Mark{Kind: results.MarkInvalid, Text: "clocksource changed"})
	s.Trials[1].Marks = append(s.Trials[1].Marks, results.Mark{Kind: results.MarkEmpty, Reader: "rt", Text: "reader rt measured nothing"},
		results.Mark{Kind: results.MarkStarved, Reader: "rt", Text: "reader rt runnable but off CPU 1 for 59ms"})
	got := MarksLine(RunMarks(s), 2)
	want := "*** NOT THE RUN ASKED FOR: degraded; 2 of 2 trials invalid (trials 1–2); 1 of 2 trials reader starved (trial 2)" + MarksHint
	if got != want {
		t.Errorf("marks line\n got %q\nwant %q", got, want)
	}
}

// TestNeverRan: a soak stopped before its first slice ended says in its
// closing block which variants never ran, and why.
func TestNeverRan(t *testing.T) {
	s := testutil.SeedRun("6.1", [2]int{0, 2}, 0)
	s.Spec = results.Spec(`{"name":"laight-450","duration":"0s","slice":"1m0s","variants":[{"name":"recvfrom"},{"name":"recvmsg"}]}`)
	if n := NeverRan(s); len(n) != 0 {
		t.Fatalf("both ran, NeverRan says %v", n)
	}
	s.Trials = s.Trials[:1]
	s.Stopped = true
	res, err := facts.Compare([]compare.Run{{Label: "run", Summary: s}})
	if err != nil {
		t.Fatal(err)
	}
	c := RunClosing(res, s, "results/soak", "")
	want := "*** Variant recvmsg never ran: the soak stopped before its slice of 1m0s ended (--set slice=… alternates sooner); nothing compares with it"
	if !slices.Contains(c.Lines, want) {
		t.Errorf("closing block %q lacks %q", c.Lines, want)
	}
}

// TestCompareBriefKernelAB: a kernel A/B's header (the facts that differ,
// and a warning) takes rows from the folded table, not the screen: the
// default still fits 60 lines and ends on the verdict.
func TestCompareBriefKernelAB(t *testing.T) {
	runs := closingRuns()
	runs[1].Summary.Env = results.Env{Kernel: "6.1.0-hard", CPUModel: "Intel(R) Core(TM) i7-3770", Clocksource: "tsc",
		Cmdline: "quiet init_on_free=1", KernelConfig: map[string]string{"CONFIG_HARDENED_USERCOPY": "y"}}
	res, err := facts.Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Brief(&b, res); err != nil {
		t.Fatal(err)
	}
	if err := Closing(res, nil).Write(&b, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > BriefLines || !strings.HasPrefix(lines[len(lines)-1], "verdict: ") || !strings.Contains(out, "metadata that differs") {
		t.Errorf("kernel A/B: %d lines (want ≤ %d), ending on %q:\n%s", len(lines), BriefLines, lines[len(lines)-1], out)
	}
}
