package view

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results/store"
)

// sessionsDir writes a sessions directory of n sessions, each
// testutil.ProcessRun (seed columns cols, 2 processes × 2 rounds), the
// k-th session's per-call costs scaled by boot[k] (its boot effect), each
// in a boot of its own.
func sessionsDir(t *testing.T, cols [2]int, boot []float64) string {
	return sessionsDirWith(t, cols, boot, nil)
}

// sessionsDirWith is sessionsDir with drift controls when null is set:
// session k's null syscall null(k) ticks, its user loop 570.
func sessionsDirWith(t *testing.T, cols [2]int, boot []float64, null func(k int) float64) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "base")
	for k, f := range boot {
		s, err := store.OpenSessions(base)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		d, err := store.CreateNewDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		jitter := []float64{f * 1.00, f * 1.01, f * 0.99, f * 1.02, f * 0.98, f * 1.0, f * 1.005, f * 0.995}
		sum := testutil.ProcessRun("6.1.0", cols, 0, 2, jitter)
		sum.Env.BootID = fmt.Sprintf("00000000-0000-0000-0000-%012d", k)
		for i := range sum.Trials {
			sum.Trials[i].Readers[0].WakeupLog = nil
		}
		if null != nil {
			withControls(sum, func(i int) float64 { return null(k) * (1 + 0.002*float64(i%3)) }, func(int) float64 { return 570 })
		}
		testutil.WriteSummary(t, dir, sum)
		if err := s.Add(dir, sum); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	return base
}

// TestComparePooledSessions: two sessions directories compare with the
// session as the unit: n = 3 sessions × 2 processes × 2 rounds, df from
// the sessions, the variance split with the session level and the
// sizing in sessions; the variants within each side stay paired by
// process, their sessions the unit too (issue 32 item 2).
func TestComparePooledSessions(t *testing.T) {
	a := sessionsDir(t, [2]int{0, 2}, []float64{1.00, 1.04, 0.97})
	b := sessionsDir(t, [2]int{0, 2}, []float64{1.10, 1.16, 1.07})
	runs, err := load.Runs([]string{a, b}, []string{"A", "B"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs[0].Sessions) != 3 || runs[0].Boots() != 3 || len(runs[0].Summary.Trials) != 3*2*2*2 {
		t.Fatalf("run A: %d sessions, %d boots, %d trials", len(runs[0].Sessions), runs[0].Boots(), len(runs[0].Summary.Trials))
	}
	res, err := facts.CompareWith(runs, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cross, within *compare.Metric
	for i, m := range res.Metrics {
		if m.Name != "mean per-call cost" || m.Unit != "ns" {
			continue
		}
		switch {
		case m.Column == "recvfrom/B":
			cross = &res.Metrics[i]
		case m.Column == "recvmsg/A" && m.Baseline == "recvfrom/A":
			within = &res.Metrics[i]
		}
	}
	if cross == nil || cross.Interval == nil {
		t.Fatalf("no recvfrom/B interval: %+v", res.Metrics)
	}
	iv := cross.Interval
	if iv.N != "3 sessions × 2 processes × 2 rounds" || iv.Unit != "session" || iv.DF == nil || *iv.DF != 4 {
		t.Errorf("recvfrom/B: n %q, unit %q, df %v", iv.N, iv.Unit, iv.DF)
	}
	if v := cross.Variance; v == nil || v.BetweenSessionsLogSD == nil || v.Sessions != 3 {
		t.Errorf("recvfrom/B variance %+v", cross.Variance)
	}
	if *iv.PointPct < 5 || *iv.PointPct > 15 {
		t.Errorf("recvfrom/B change %+.1f%%, want about +10%%", *iv.PointPct)
	}
	_ = within // the variants within a side (compare's baseline is the first run's group)
	var brief bytes.Buffer
	if err := Brief(&brief, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pooled over sessions", "n = 3 sessions × 2 processes × 2 rounds", "log-SD between sessions", "sessions per side"} {
		if !strings.Contains(brief.String(), want) {
			t.Errorf("brief lacks %q:\n%s", want, brief.String())
		}
	}
	closing := Closing(res, nil)
	var cb bytes.Buffer
	closing.Write(&cb, true)
	if !strings.Contains(cb.String(), "n = 3 sessions × 2 processes × 2 rounds") {
		t.Errorf("closing block:\n%s", cb.String())
	}
}
