package report

import (
	"github.com/rtload/rtload/results"

	"fmt"
	"strings"
	"text/tabwriter"
)

// readerMetric is one number per round of a reader.
type readerMetric struct {
	title, format string
	get           func(r results.Reader, c results.ClockInfo) (float64, bool)
}

var readerMetrics = []readerMetric{
	{"mean cost per recv call (ns)", "%.1f", func(r results.Reader, c results.ClockInfo) (float64, bool) {
		a := r.PerCall.All
		if a.Total == 0 || c.Hz <= 0 {
			return 0, false
		}
		return a.Mean() * 1e9 / c.Hz, true
	}},
	{"p99 cost per recv call (ns)", "%.0f", func(r results.Reader, c results.ClockInfo) (float64, bool) {
		if r.PerCallTicks.Count == 0 || c.Hz <= 0 {
			return 0, false
		}
		return float64(r.PerCallTicks.P99Ticks) * 1e9 / c.Hz, true
	}},
	{"wakeup latency p99 (µs)", "%.1f", func(r results.Reader, _ results.ClockInfo) (float64, bool) {
		if r.WakeupLatency.Count == 0 {
			return 0, false
		}
		return float64(r.WakeupLatency.P99Ns) / 1e3, true
	}},
	{"wakeup latency max (µs)", "%.1f", func(r results.Reader, _ results.ClockInfo) (float64, bool) {
		if r.WakeupLatency.Count == 0 {
			return 0, false
		}
		return float64(r.WakeupLatency.MaxNs) / 1e3, true
	}},
}

// writeRounds prints, when a scenario ran several rounds (repeat), every
// headline reader metric per round and Min / Max / Mean / Std Dev across
// rounds per variant, with the change against the first variant (seed
// 001's layout).
func writeRounds(b *strings.Builder, s *results.Summary) {
	_, rounds := shape(s)
	if rounds < 2 {
		return
	}
	type key struct{ variant, reader string }
	var cols []key
	seen := map[key]bool{}
	for _, t := range s.Trials {
		for _, r := range t.Readers {
			k := key{t.Variant, r.Name}
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	fmt.Fprintf(b, "\nper round (%d rounds; Std Dev over n, as seed 001)\n", rounds)
	for _, m := range readerMetrics {
		runs := map[key][]float64{}
		for _, t := range s.Trials {
			for _, r := range t.Readers {
				if v, ok := m.get(r, s.Clock); ok {
					k := key{t.Variant, r.Name}
					runs[k] = append(runs[k], v)
				}
			}
		}
		if len(runs) == 0 {
			continue
		}
		fmt.Fprintf(b, "%s\n", m.title)
		tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
		for i, k := range cols {
			xs := runs[k]
			if len(xs) == 0 {
				continue
			}
			label := k.variant
			if len(cols) > 1 && k.reader != cols[0].reader {
				label += "/" + k.reader
			}
			var base []float64
			if i > 0 {
				base = runs[cols[0]]
			}
			WriteSamples(tw, label, m.format, xs, base, cols[0].variant, false)
		}
		tw.Flush()
	}
}
