package view

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
)

func pf(v float64) *float64 { return &v }

// TestHeadlineChangeAndCI: the headline table's change and its interval
// are one computation, the interval's (Metric.Interval), both in %, as the
// verdict lines print them. The first row is recvmsg's wakeup latency max
// of /var/tmp/v31/base against aa20/out-5: the merged values fell 3.69%,
// the per-process maxima rose 199% with an interval that calls it slower;
// the table printed "-3.69%" beside "[+2871.7, +28752.6]" µs.
func TestHeadlineChangeAndCI(t *testing.T) {
	const name, unit = "wakeup latency max", "µs"
	base := compare.Metric{Name: name, Unit: unit, Column: "recvmsg/base", Baseline: "recvmsg/base",
		Value: 5774.6, BaselineValue: 5774.6, Verdict: compare.VerdictBaseline}
	metric := func(col string, value float64, iv *compare.Interval, verdict string) compare.Metric {
		m := compare.Metric{Name: name, Unit: unit, Column: col, Baseline: "recvmsg/base", Value: value,
			BaselineValue: base.Value, ChangePct: pf((value - base.Value) / base.Value * 100), Interval: iv, Verdict: verdict}
		if iv != nil && iv.LowPct != nil && iv.HighPct != nil {
			m.CILow, m.CIHigh = pf(*iv.LowPct/100*base.Value), pf(*iv.HighPct/100*base.Value)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		m    compare.Metric
		want string // the row's change, CI and verdict cells, " | " apart
	}{
		{"per-process change beside its interval, not the merged values' change",
			metric("recvmsg/out-5", 5561.6, &compare.Interval{Level: 0.95, PointPct: pf(199.21), LowPct: pf(49.73), HighPct: pf(497.92), Unit: "process"}, compare.VerdictSlower),
			"+199.21% | [+49.73%, +497.92%] | slower"},
		{"no interval: the values' change and none beside it",
			metric("recvmsg/hard", 5197.0, &compare.Interval{Level: 0.95, N: "1 process × 1 round"}, compare.VerdictUndecided),
			"-10.00% | - | undecided"},
		{"a rate over no baseline event: no upper bound",
			metric("recvmsg/rate", 5774.6, &compare.Interval{Level: 0.95, LowPct: pf(20), Unit: "event"}, compare.VerdictSlower),
			"| - | [+20.00%, +∞] | slower"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &compare.Result{ThresholdPct: 3, Metrics: []compare.Metric{base, tc.m}}
			var b bytes.Buffer
			if err := Text(&b, r); err != nil {
				t.Fatal(err)
			}
			row := "" // the table's row: cells apart by 2 spaces or more, joined by " | "
			for _, l := range strings.Split(b.String(), "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), tc.m.Column+" ") {
					row = strings.Join(regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1), " | ")
					break
				}
			}
			if !strings.Contains(row, tc.want) {
				t.Errorf("row %q lacks %q", row, tc.want)
			}
			if !strings.Contains(b.String(), "change and CI: B/A − 1 in %, both from the samples the method names") {
				t.Errorf("the table does not say what its change and CI are:\n%s", b.String())
			}
		})
	}
}
