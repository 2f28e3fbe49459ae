package verdict

import (
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/view"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/report"
)

var closingJitter = []float64{1.00, 1.01, 0.99, 1.02, 0.98, 1.005, 0.995, 1.015, 0.985, 1.0}

// closingRuns are two runs of 3 processes × 2 rounds: "base" and "new",
// whose recvmsg column is the seed's hardened one (slower per call).
func closingRuns() []compare.Run {
	return []compare.Run{
		{Label: "base", Dir: "results/base", Summary: testutil.ProcessRun("6.1.0", [2]int{0, 2}, 0, 3, closingJitter)},
		{Label: "new", Dir: "results/new", Summary: testutil.ProcessRun("6.1.0", [2]int{0, 3}, 1, 3, closingJitter[3:])},
	}
}

// TestClosingGate: with a gate the closing block is the gate's: its
// metrics at the gate's level and its verdict with the exit code.
func TestClosingGate(t *testing.T) {
	_, g := closingGate(t)
	exit := g.ExitCode()
	c := g.Closing("check", []string{"new: 1 of 12 trials traffic not as specified (trial 4)"}, []string{"new run: /tmp/x (removed: --keep or --out keeps it)"}, exit)
	var b strings.Builder
	if err := c.Write(&b, true); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "check_closing", []byte(b.String()))
	last := c.Lines[len(c.Lines)-1]
	if !strings.HasPrefix(last, "check: "+strings.ToUpper(string(g.Verdict))) || !strings.HasSuffix(last, "exit 125 (git bisect: skip)") {
		t.Errorf("last line %q, gate %s", last, g.Verdict)
	}
	name := func(l string) string { return l }
	for _, m := range g.Metrics {
		if m.Interval == nil || m.Interval.LowPct == nil {
			t.Fatalf("gate metric without an interval: %+v", m)
		}
		if want := view.ChangeLine(compare.Metric{Name: m.Name, Column: m.Column, Baseline: m.Baseline, Interval: m.Interval}, name); !strings.Contains(b.String(), want) {
			t.Errorf("closing block lacks the gate's %q:\n%s", want, b.String())
		}
	}
	// A check that cannot judge fills the block with its reasons: the
	// block still holds a verdict line, not only "… and N more".
	extra := []string{"sampled: 1 process against 1 process of the baseline", "new run: /tmp/x (removed: --keep or --out keeps it)",
		"cannot judge: new: trial 3: invalid", "cannot judge: new: trial 3: traffic not as specified", "  … and 2 more reasons (-v, --format json)"}
	full := g.Closing("check", nil, extra, exit)
	first := g.Metrics[0]
	want := view.ChangeLine(compare.Metric{Name: first.Name, Column: first.Column, Baseline: first.Baseline, Interval: first.Interval}, name)
	if len(full.Lines) > report.MaxClosingLines || !strings.HasPrefix(full.Lines[1], "  "+want) {
		t.Errorf("a full check closing block (%d lines, at most %d) lacks its first verdict %q:\n%s", len(full.Lines), report.MaxClosingLines, want, strings.Join(full.Lines, "\n"))
	}
}

// TestCompareCSVGate: compare --fail-on --format csv ends on one row for
// the gate, in the CSV view's columns: its verdict, its exit code and its
// threshold (and the level it judged at); without a gate, no such row.
func TestCompareCSVGate(t *testing.T) {
	res, g := closingGate(t)
	cannot := Gate{Verdict: CannotJudge, ThresholdPct: 5, Level: 0.95, Reasons: []string{"new: trial 3: invalid:\n  clocksource changed"}}
	col := func(name string) int { return slices.Index(view.CSVHeader, name) }
	for _, tc := range []struct {
		name string
		gate *Gate
		want map[string]string // the gate row's cells by header; nil: no gate row
	}{
		{"no gate: the comparison's rows only", nil, nil},
		{"a gate: its verdict, exit code, level and threshold", &g, map[string]string{"metric": "gate", "unit": "exit code",
			"value": strconv.Itoa(g.ExitCode()), "confidence": strconv.FormatFloat(g.Level, 'g', 10, 64), "method": "fail-on slower",
			"verdict": string(g.Verdict), "method_note": "threshold +3%; "}},
		{"cannot judge: the reasons in the note, one cell", &cannot, map[string]string{"metric": "gate", "value": "125", "verdict": "cannot judge",
			"method_note": "threshold +5%; 0 judged at 95% CI each: 0 slower, 0 not slower, 0 undecided; cannot judge: new: trial 3: invalid: clocksource changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := (Compared{Result: res, Gate: tc.gate}).Write(&b, "csv"); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll() // every row as wide as the header
			if err != nil {
				t.Fatalf("%v:\n%s", err, b.String())
			}
			wantRows := len(res.Metrics) + 1 // the header
			if tc.gate != nil {
				wantRows++
			}
			if len(rows) != wantRows {
				t.Errorf("%d rows for %d metrics, want %d", len(rows), len(res.Metrics), wantRows)
			}
			last := rows[len(rows)-1]
			if tc.want == nil {
				if last[col("metric")] == "gate" {
					t.Errorf("a gate row without a gate: %q", last)
				}
				return
			}
			for h, want := range tc.want {
				if got := last[col(h)]; h == "method_note" && !strings.HasPrefix(got, want) || h != "method_note" && got != want {
					t.Errorf("gate row %s = %q, want %q", h, got, want)
				}
			}
		})
	}
}

// closingGate is closingRuns compared and judged as compare --fail-on
// judges them.
func closingGate(t *testing.T) (*compare.Result, Gate) {
	t.Helper()
	res, err := facts.Compare(closingRuns())
	if err != nil {
		t.Fatal(err)
	}
	g, err := Judge(res.Metrics, nil, Options{GrowBaseline: true})
	if err != nil {
		t.Fatal(err)
	}
	return res, g
}
