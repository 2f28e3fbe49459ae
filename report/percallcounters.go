package report

import (
	"slices"
	"strconv"

	"github.com/rtload/rtload/results"
)

// perCallCounters renders one block per hardware event counted around
// every recv call (readers[].counters): its count per call, all calls and
// by result, as the mean and results' percentiles, rounds merged. "Instructions
// per recv call" tells more work from slower work (cache misses) next to
// the cycle histogram. No block when no column counted events.
func perCallCounters(cols []column) []*kv {
	var names []string
	for _, c := range cols {
		for _, n := range c.eventNames {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	var out []*kv
	for _, name := range names {
		k := &kv{title: name + " per recv call (hardware counter read with rdpmc around each call)"}
		for _, class := range []struct {
			label string
			get   func(results.PerCallCounter) results.CountStats
		}{
			{"all calls", func(p results.PerCallCounter) results.CountStats { return p.All }},
			{"data calls", func(p results.PerCallCounter) results.CountStats { return p.Data }},
			{"EAGAIN calls", func(p results.PerCallCounter) results.CountStats { return p.EAGAIN }},
		} {
			merged := make([]results.CountStats, len(cols))
			for i, c := range cols {
				var rounds []results.CountStats
				for _, p := range c.events[name] {
					rounds = append(rounds, class.get(p))
				}
				merged[i], _ = results.MergeCountStats(rounds...)
			}
			for _, q := range []results.Quantity{results.Mean, results.P50, results.P99} {
				row := make([]string, len(cols))
				for i, m := range merged {
					row[i] = "–"
					if m.Count > 0 {
						row[i] = strconv.FormatFloat(m.Value(q), 'f', 1, 64)
					}
				}
				k.add(q.String()+", "+class.label, row...)
			}
		}
		out = append(out, k)
	}
	return out
}
