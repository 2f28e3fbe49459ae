package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/stats"
)

// pilotMetric reads one headline value of a trial's first reader.
type pilotMetric struct {
	name string
	get  func(r results.Reader) float64
}

var pilotMetrics = []pilotMetric{
	{"mean per-call cost", func(r results.Reader) float64 { return r.PerCall.All.Mean() }},
	{"p50 per-call cost", func(r results.Reader) float64 { return r.PerCallTicks.Ticks(results.P50) }},
	{"p99 per-call cost", func(r results.Reader) float64 { return r.PerCallTicks.Ticks(results.P99) }},
	{"wakeup latency p99", func(r results.Reader) float64 { return float64(r.WakeupLatency.P99Ns) }},
	{"mean drain time", func(r results.Reader) float64 { return r.Drain.MeanNs }},
}

// pilot prints the variance components of every headline metric of every
// variant, from results directories whose trials are grouped by process
// (Trial.Process, and each directory apart).
func pilot(w io.Writer, dirs []string) error {
	// groups[metric][variant] = per process, per round values
	type key struct{ metric, variant string }
	groups := map[key][][]float64{}
	ratio := map[string][][]float64{}
	var variants []string
	for _, d := range dirs {
		s, err := store.ReadSummary(d)
		if err != nil {
			return err
		}
		procs := map[int]map[key][]float64{}
		byRound := map[[2]int]map[string]float64{}
		for _, t := range s.Trials {
			if len(t.Readers) == 0 {
				continue
			}
			if !slices.Contains(variants, t.Variant) {
				variants = append(variants, t.Variant)
			}
			p := t.Process
			if procs[p] == nil {
				procs[p] = map[key][]float64{}
			}
			for _, m := range pilotMetrics {
				k := key{m.name, t.Variant}
				procs[p][k] = append(procs[p][k], m.get(t.Readers[0]))
			}
			rk := [2]int{p, t.Round}
			if byRound[rk] == nil {
				byRound[rk] = map[string]float64{}
			}
			byRound[rk][t.Variant] = t.Readers[0].PerCall.All.Mean()
		}
		ps := make([]int, 0, len(procs))
		for p := range procs {
			ps = append(ps, p)
		}
		sort.Ints(ps)
		for _, p := range ps {
			for k, v := range procs[p] {
				groups[k] = append(groups[k], v)
			}
			if len(variants) == 2 {
				var rs []float64
				for r := 0; ; r++ {
					m, ok := byRound[[2]int{p, r}]
					if !ok {
						break
					}
					rs = append(rs, m[variants[1]]/m[variants[0]])
				}
				ratio["ratio"] = append(ratio["ratio"], rs)
			}
		}
	}
	fmt.Fprintf(w, "| metric | variant | n | log-SD between processes | log-SD between rounds | lag-1 | K&J rounds/process (c_p = c_r) |\n|---|---|---|---|---|---|---|\n")
	row := func(m, v string, g [][]float64) {
		c := stats.Components(g)
		fmt.Fprintf(w, "| %s | %s | %s | %.3f | %.3f | %.2f (%d pairs) | %d |\n", m, v, stats.Shape(g),
			math.Sqrt(c.BetweenProcesses), math.Sqrt(c.BetweenRounds), c.Lag1, c.Lag1Pairs, c.RoundsPerProcess(1, 1))
	}
	for _, m := range pilotMetrics {
		for _, v := range variants {
			row(m.name, v, groups[key{m.name, v}])
		}
	}
	if g := ratio["ratio"]; len(g) > 0 {
		row("mean per-call cost, "+variants[1]+"/"+variants[0]+" same round", "ratio", g)
	}
	return nil
}
