package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/auto"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results/store"
)

// TestRoundsAuto runs rounds: auto for real (root): the run stops on its
// rule, and the summary, the JSON and the report say why, after how many
// rounds, and where the interval stands against the precision.
func TestRoundsAuto(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	out := filepath.Join(t.TempDir(), "auto")
	// Three rounds at most of two 150 ms variants: max rounds, unless the
	// interval of ±50% is reached first.
	r := rtload(t, nil, "run", "testdata/gate-size.yaml", "--rounds", "auto", "--precision", "50%", "--max-rounds", "3",
		"--duration", "150ms", "--set", "warmup=0", "--out", out, "-q", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var doc compare.RunReport
	decode(t, r, &doc)
	a := doc.Summary.Auto
	if a == nil || a.MaxRounds != 3 || a.PrecisionPct != 50 || a.Metric != "mean per-call cost" {
		t.Fatalf("summary auto %+v", a)
	}
	switch a.Reason {
	case auto.StopPrecision:
		if !a.Within || a.HalfWidthPct == nil || *a.HalfWidthPct > 50 || a.Rounds < 2 {
			t.Errorf("precision reached: %+v", a)
		}
	case auto.StopMaxRounds:
		if a.Rounds != 3 || a.Within {
			t.Errorf("max rounds: %+v", a)
		}
	default:
		t.Errorf("reason %q", a.Reason)
	}
	if len(doc.Summary.Trials) != a.Rounds {
		t.Errorf("%d trials for %d rounds of one variant", len(doc.Summary.Trials), a.Rounds)
	}
	if !strings.Contains(r.stderr, "rounds: auto: variants alternate until the 95% CI of the headline difference is within ±50% of the baseline, at most 3 rounds") ||
		!strings.Contains(r.stderr, ": stop, "+a.Reason) {
		t.Errorf("plan or progress lines missing:\n%s", r.stderr)
	}
	s, err := store.ReadSummary(out)
	if err != nil || s.Auto == nil || s.Auto.Reason != a.Reason {
		t.Fatalf("summary.json: %+v, %v", s, err)
	}
	rep := rtload(t, nil, "report", out)
	if !strings.Contains(rep.stdout, "rounds: auto: "+a.Reason+" after ") {
		t.Errorf("report lacks the stopping reason:\n%s", rep.stdout)
	}
}

func TestRoundsAutoUsage(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		contains string
	}{
		{[]string{"validate", "laight-450", "--set", "rounds=sometimes"}, `rounds: expected an integer or auto, got "sometimes" (allowed: 1–1000, or auto)`},
		{[]string{"run", "laight-450", "--precision", "5%"}, "--precision: only with rounds: auto (--rounds auto)"},
		{[]string{"run", "laight-450", "--rounds", "auto", "--max-rounds", "1"}, "--max-rounds 1 out of range (allowed: 2–1000)"},
		{[]string{"run", "laight-450", "--rounds", "auto", "--precision", "0"}, `--precision "0": a percentage above 0 and below 100`},
		{[]string{"run", "laight-450", "--rounds", "2", "--repeat", "2"}, "--repeat and --rounds: give one"},
	} {
		r := rtload(t, nil, tc.args...)
		if r.code != 2 || !strings.Contains(r.stdout+r.stderr, tc.contains) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s%s", tc.args, r.code, tc.contains, r.stdout, r.stderr)
		}
	}
}
