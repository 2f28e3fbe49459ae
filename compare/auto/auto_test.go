package auto

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

func TestAutoStop(t *testing.T) {
	ab := [][]float64{{10, 11, 12, 13, 14}, {12, 13, 14, 15, 16}}
	one := [][]float64{{100, 102, 104}}
	for _, tc := range []struct {
		name    string
		values  [][]float64
		elapsed time.Duration
		rule    Rule
		stop    bool
		reason  string
		rounds  int
		hw      float64 // NaN: undefined
	}{
		// Welch on the logs of 5+5 rounds: log ratio 0.156032, se
		// 0.078245, df 7.811487, t(0.975) 2.3413: half-width exp(t·se) −
		// 1 = ±19.8649% (on the ratio scale).
		{"two variants: within ±20%", ab, time.Minute, Rule{Precision: 0.20, MaxRounds: 30}, true, StopPrecision, 5, 19.8649},
		{"two variants: not within ±19.8%", ab, time.Minute, Rule{Precision: 0.198, MaxRounds: 30}, false, "", 5, 19.8649},
		// One variant: the geometric mean's t interval: se of the mean log
		// 0.011322, t(0.975, 2) = 4.302653: exp(t·se) − 1 = ±4.99217%.
		{"one variant: within ±5%", one, time.Minute, Rule{Precision: 0.05, MaxRounds: 30}, true, StopPrecision, 3, 4.99217},
		{"one variant: not within ±4.9%", one, time.Minute, Rule{Precision: 0.049, MaxRounds: 30}, false, "", 3, 4.99217},
		{"max rounds", one, time.Minute, Rule{Precision: 0.01, MaxRounds: 3}, true, StopMaxRounds, 3, 4.99217},
		// 3 rounds in 90 s: 30 s a round, the next would end at 120 s.
		{"another round would pass max time", one, 90 * time.Second, Rule{Precision: 0.01, MaxRounds: 30, MaxTime: 100 * time.Second}, true, StopMaxTime, 3, 4.99217},
		{"another round ends at max time", one, 90 * time.Second, Rule{Precision: 0.01, MaxRounds: 30, MaxTime: 120 * time.Second}, false, "", 3, 4.99217},
		{"one round: no interval yet", [][]float64{{10}, {10}}, time.Second, Rule{Precision: 0.5, MaxRounds: 30}, false, "", 1, math.NaN()},
		{"the fewest rounds count", [][]float64{{10, 11, 12}, {12, 13}}, time.Second, Rule{Precision: 0.01, MaxRounds: 2}, true, StopMaxRounds, 2, -1},
		{"a zero baseline never reaches a relative precision", [][]float64{{0, 0, 0}, {1, 2, 3}}, time.Second, Rule{Precision: 0.5, MaxRounds: 30}, false, "", 3, math.Inf(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Stop(tc.values, tc.elapsed, tc.rule)
			if d.Stop != tc.stop || d.Reason != tc.reason || d.Rounds != tc.rounds {
				t.Errorf("stop %v reason %q rounds %d, want %v %q %d", d.Stop, d.Reason, d.Rounds, tc.stop, tc.reason, tc.rounds)
			}
			switch {
			case tc.hw == -1: // not checked
			case math.IsNaN(tc.hw) && !math.IsNaN(d.HalfWidthPct), math.IsInf(tc.hw, 1) && !math.IsInf(d.HalfWidthPct, 1):
				t.Errorf("half-width %v%%, want %v", d.HalfWidthPct, tc.hw)
			case !math.IsNaN(tc.hw) && !math.IsInf(tc.hw, 0) && !near(d.HalfWidthPct, tc.hw, 1e-3):
				t.Errorf("half-width %.5f%%, want %.5f%%", d.HalfWidthPct, tc.hw)
			}
		})
	}
}

func TestHeadline(t *testing.T) {
	// Two variants, two rounds each, alternating A B A B; per-call costs
	// 100/102 (A) and 150/154 (B) ticks.
	s := &results.Summary{Version: results.SummaryVersion, Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
	for i, c := range []struct {
		v    string
		cost uint64
	}{{"A", 100}, {"B", 150}, {"A", 102}, {"B", 154}} {
		h := record.NewLinear(10, 0, 10_000)
		for range 10 {
			h.Record(c.cost)
		}
		s.Trials = append(s.Trials, results.Trial{Index: i, Round: i / 2, Variant: c.v,
			Readers: []results.Reader{{Name: "rt", Sockets: 1, PerCall: results.PerCall{All: h.Snapshot("ns")}}}})
	}
	name, unit, cols, vals, err := Headline(s)
	if err != nil {
		t.Fatal(err)
	}
	if name != "mean per-call cost" || unit != "ns" || len(cols) != 2 || cols[0] != "A/run" || cols[1] != "B/run" {
		t.Fatalf("headline %q (%s) over %v", name, unit, cols)
	}
	if vals[0][0] != 100 || vals[0][1] != 102 || vals[1][0] != 150 || vals[1][1] != 154 {
		t.Errorf("values %v, want [[100 102] [150 154]]", vals)
	}
	if _, _, _, _, err := Headline(&results.Summary{}); err == nil {
		t.Error("no trials: no error")
	}
}

func TestAutoRound(t *testing.T) {
	s := &results.Summary{Version: results.SummaryVersion, Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
	for i, c := range []struct {
		v    string
		cost uint64
	}{{"A", 100}, {"B", 150}, {"A", 102}, {"B", 154}} {
		h := record.NewLinear(10, 0, 10_000)
		for range 10 {
			h.Record(c.cost)
		}
		s.Trials = append(s.Trials, results.Trial{Index: i, Round: i / 2, Variant: c.v,
			Readers: []results.Reader{{Name: "rt", Sockets: 1, PerCall: results.PerCall{All: h.Snapshot("ns")}}}})
	}
	// Logs of A 100, 102 against B 150, 154: log ratio 0.408722, se
	// 0.016468, df 1.857493: half-width exp(t(0.975)·se) − 1 = ±7.93164%.
	const want = 7.93164
	for _, tc := range []struct {
		name   string
		rule   Rule
		stop   bool
		reason string
		within bool
	}{
		{"within ±20%: precision reached", Rule{Precision: 0.20, MaxRounds: 30}, true, StopPrecision, true},
		{"not within ±5%: on", Rule{Precision: 0.05, MaxRounds: 30}, false, "", false},
		{"not within ±5%, 2 rounds allowed", Rule{Precision: 0.05, MaxRounds: 2}, true, StopMaxRounds, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *s
			stop := Round(&c, tc.rule, time.Minute)
			a := c.Auto
			if stop != tc.stop || a == nil || a.Reason != tc.reason || a.Within != tc.within || a.Rounds != 2 ||
				a.Metric != "mean per-call cost" || a.Unit != "ns" || a.HalfWidthPct == nil || !near(*a.HalfWidthPct, want, 1e-4) ||
				a.PrecisionPct != tc.rule.Precision*100 || a.MaxRounds != tc.rule.MaxRounds {
				t.Errorf("stop %v, auto %+v", stop, a)
			}
		})
	}
	// No headline metric (no readers, no probes): only the limits stop it.
	empty := &results.Summary{Trials: []results.Trial{{Round: 0}, {Round: 1}}}
	if stop := Round(empty, Rule{Precision: 0.5, MaxRounds: 2}, time.Second); !stop ||
		!strings.HasPrefix(empty.Auto.Reason, StopMaxRounds+" (no headline metric") || empty.Auto.HalfWidthPct != nil {
		t.Errorf("stop %v, auto %+v", stop, empty.Auto)
	}
}

// near is comparetest.Near: the assertions read as before.
var near = comparetest.Near
