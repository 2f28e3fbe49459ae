package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/compare/load"
)

// TestComparePooledSessions: two sessions directories compare with the
// session as the unit: n = 3 sessions × 2 processes × 2 rounds, df from
// the sessions, the variance split with the session level and the
// sizing in sessions; the variants within each side stay paired by
// process, their sessions the unit too (issue 32 item 2).
func TestComparePooledSessions(t *testing.T) {
	a := comparetest.SessionsDir(t, [2]int{0, 2}, []float64{1.00, 1.04, 0.97})
	b := comparetest.SessionsDir(t, [2]int{0, 2}, []float64{1.10, 1.16, 1.07})
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
