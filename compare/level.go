package compare

import (
	"fmt"
	"strings"

	"github.com/rtload/rtload/stats"
)

// DefaultThreshold is the change compare's verdicts (and a gate, by
// default) are read against: 3% of the baseline.
const DefaultThreshold = 0.03

// The seams a verdict (package verdict) reads a Metric through: its
// samples' change at the verdict's own level, and the metric re-read
// from that change. The model (which samples, their unit, whether the
// sides are paired, an invalid trial) stays here.

// Sampled reports whether m holds the samples ChangeAt computes from
// (both sides' per-process values, an interleaved pair's blocks, or a
// rate's counts): false for a baseline's own row and a metric without
// samples, whose interval and verdict are the ones compare gave.
func (m *Metric) Sampled() bool { return m.a != nil || m.ra != nil }

// ChangeAt is the change of m's column against its baseline at the
// two-sided confidence level (0.95 …), from m's samples: Welch or paired
// t over processes (rounds of one process), ABBA block pairs, or a
// Poisson rate ratio (stats.Change). Undefined without samples.
func (m *Metric) ChangeAt(level float64) stats.Change {
	if !m.Sampled() {
		return stats.Undefined("no samples")
	}
	return m.changeOf(level)
}

// At is m read from change c (at c's level) against threshold thr (a
// fraction): its Interval, Method, MethodNote, Verdict (stats.Decide),
// smallest detectable change, and the units that would decide an
// undecided verdict when the sides grow as grow says (a check's baseline
// cannot: stats.GrowB). A metric whose column or baseline holds an
// invalid trial stays undecided whatever c says, its note naming the
// trials.
func (m Metric) At(c stats.Change, thr float64, grow stats.Grow) Metric {
	note := m.MethodNote
	setChange(&m, c, thr)
	m.lagNote()
	if m.MoreUnits != nil || m.Verdict == VerdictUndecided {
		m.MoreUnits = nil
		if c.Defined() && c.Unit != "event" {
			if k, ok := stats.MoreSamplesNeeded(c, thr, m.HigherIsBetter, stats.DefaultPower, grow); ok && k > 0 {
				m.MoreUnits = &k
			}
		}
	}
	if m.invalid {
		m.Verdict, m.MethodNote = VerdictUndecided, note
	}
	return m
}

// Invalid reports whether m's column or its baseline holds an invalid
// trial: its verdict stays undecided whatever its interval says (At).
func (m *Metric) Invalid() bool { return m.invalid }

// Tail reports whether m is a spike rate: wakeups later than a threshold
// per hour (Rate set), the tail a gate guards.
func (m Metric) Tail() bool { return m.Rate != nil }

// RateCounts are the events of a rate metric's baseline and column (the
// counts its Poisson rate ratio is made of); ok is false for a metric
// that is not a rate against a baseline.
func (m *Metric) RateCounts() (base, col uint64, ok bool) {
	if m.ra == nil || m.rb == nil {
		return 0, 0, false
	}
	return m.ra.count, m.rb.count, true
}

// Key names m as outputs and --metric do: "mean per-call cost (ns)".
func (m Metric) Key() string { return metricKey(m) }

// Selected reports whether m is one of names (Metric.Name or Key,
// case-insensitive, spaces around trimmed).
func (m Metric) Selected(names []string) bool {
	for _, n := range names {
		n = strings.TrimSpace(n)
		if strings.EqualFold(n, m.Name) || strings.EqualFold(n, metricKey(m)) {
			return true
		}
	}
	return false
}

// MetricNames are the keys of ms (Key), each once, in order.
func MetricNames(ms []Metric) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range ms {
		if k := metricKey(m); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// UnknownMetric is the error for a metric name none of ms has, listing
// the ones there are.
func UnknownMetric(name string, ms []Metric) error {
	return fmt.Errorf("gate: no headline metric %q (have: %s)", name, strings.Join(MetricNames(ms), ", "))
}

// SizingChanges are the changes a sizing says a baseline needs
// processes (or sessions: view.SessionSizing) to detect: +5% and +10%.
var SizingChanges = []float64{0.05, 0.10}

// Primary reports which of res's metrics are primary: one per column, the
// metric a gate judges by default (DefaultGated): a reader's mean
// per-call cost (in ns where the clock converts, else in its ticks), a
// timer-only reader's wakeup latency p99, a probe's first metric.
func (r *Result) Primary() []bool { return Primary(r.Metrics) }

// Primary reports which of ms (a Result's Metrics, in their order) are
// primary, as Result.Primary does.
func Primary(ms []Metric) []bool {
	out := make([]bool, len(ms))
	first := map[string]int{}
	hasNs := map[string]bool{}
	for _, m := range ms {
		if m.Name == "mean per-call cost" && m.Unit == "ns" {
			hasNs[m.Column] = true
		}
	}
	for i, m := range ms {
		key := m.Column
		if m.Probe != "" {
			key += "\x00" + m.Probe
		}
		if _, ok := first[key]; ok {
			continue
		}
		switch {
		case m.Name == "mean per-call cost" && hasNs[m.Column] && m.Unit != "ns":
			continue // the same metric in ticks: its ns row is the primary
		case m.Name == "messages lost per round" || strings.HasPrefix(m.Name, "spikes per hour"):
			continue
		}
		first[key] = i
		out[i] = true
	}
	return out
}

// metricKey names a metric with its unit: "mean per-call cost (ns)".
func metricKey(m Metric) string { return m.Name + " (" + m.Unit + ")" }
