package report

import (
	"strings"
	"testing"

	"github.com/rtload/rtload/results"
)

func TestAutoLine(t *testing.T) {
	hw := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name string
		a    results.AutoRounds
		want string
	}{
		{"within", results.AutoRounds{Metric: "mean per-call cost", Unit: "TSC ticks", Columns: []string{"recvfrom/run", "recvmsg/run"},
			PrecisionPct: 2, Rounds: 7, Reason: "precision reached", HalfWidthPct: hw(1.84), Within: true},
			"rounds: auto: precision reached after 7 rounds; the 95% CI of the mean per-call cost difference (TSC ticks, every variant against recvfrom/run) is ±1.84% of the baseline, within the ±2% asked\n"},
		{"not within", results.AutoRounds{Metric: "mean per-call cost", Unit: "ns", Columns: []string{"a/run", "b/run"},
			PrecisionPct: 2, Rounds: 30, Reason: "max rounds reached", HalfWidthPct: hw(6.5)},
			"rounds: auto: max rounds reached after 30 rounds; the 95% CI of the mean per-call cost difference (ns, every variant against a/run) is ±6.50% of the baseline, NOT within the ±2% asked (more rounds, or a quieter machine)\n"},
		{"one variant", results.AutoRounds{Metric: "messaging time", Unit: "s", Columns: []string{"base:hb/run"},
			PrecisionPct: 1, Rounds: 4, Reason: "precision reached", HalfWidthPct: hw(0.8), Within: true},
			"rounds: auto: precision reached after 4 rounds; the 95% CI of the messaging time (s; one variant: the interval of its mean over rounds) is ±0.80% of the baseline, within the ±1% asked\n"},
		{"interrupted after one round", results.AutoRounds{Metric: "wakeup latency p99", Unit: "µs", Columns: []string{"a/run", "b/run"}, PrecisionPct: 2, Rounds: 1, Reason: "interrupted"},
			"rounds: auto: interrupted after 1 round; no 95% CI of the wakeup latency p99 difference (µs, every variant against a/run) yet (fewer than 2 rounds, or a zero baseline)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := autoLine(&tc.a); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	var b strings.Builder
	writeHeader(&b, &results.Summary{Scenario: "x", Auto: &results.AutoRounds{Reason: "max time reached", Rounds: 3}})
	if !strings.Contains(b.String(), "rounds: auto: max time reached after 3 rounds\n") {
		t.Errorf("header:\n%s", b.String())
	}
}
