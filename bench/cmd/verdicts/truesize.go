package main

import (
	"fmt"
	"math"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/results/store"
)

// trueSize is one change's true size against recvfrom, from the
// true-size run (every change a variant, interleaved with recvfrom in
// ABBA blocks): compare's own figures for that run.
type trueSize struct {
	Change string
	// Blocks is the paired change over every ABBA block pair of every
	// process (compare.Interleaved, stats.Paired): the in-process size.
	Blocks compare.Interleaved
	// Processes is the change paired by process (each process's mean log
	// ratio is one unit, stats.NestedPaired): it holds what a process adds
	// to one variant, which no block pair sees. Nil with one process.
	Processes *compare.Interval
}

// pointPct is the in-process size in % (NaN without an interval).
func (t trueSize) pointPct() float64 {
	if t.Blocks.ChangePct == nil {
		return math.NaN()
	}
	return *t.Blocks.ChangePct
}

// trueSizes reads the true-size run in dir: each change's size against
// recvfrom, in ladder order.
func trueSizes(dir string, ladder []string) ([]trueSize, error) {
	s, err := store.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	const label = "truesize"
	res, err := facts.Compare([]compare.Run{{Label: label, Summary: s}})
	if err != nil {
		return nil, err
	}
	var out []trueSize
	for _, name := range ladder {
		t := trueSize{Change: name}
		found := false
		for _, c := range res.Interleaved {
			if c.Column == name && c.Baseline == baseVariant {
				t.Blocks, found = c, true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no interleaved change of %s against %s (did the variants run interleaved?)", dir, name, baseVariant)
		}
		for _, m := range res.Metrics {
			if m.Name == "mean per-call cost" && m.Column == name+"/"+label && m.Baseline == baseVariant+"/"+label &&
				m.Interval != nil && m.Interval.Unit == "process" {
				t.Processes = m.Interval
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// The power changes' target sizes (issue 24's Done-when): a change in
// +8–15%, and one of about +25%.
const (
	mediumLoPct, mediumHiPct = 8.0, 15.0
	largePct, largeTolPct    = 25.0, 5.0
)

// pick is a power change chosen from the true sizes, and whether its
// in-process size is where the Done-when wants it.
type pick struct {
	Size    trueSize
	InRange bool
	Forced  bool // named on the command line, not picked
}

// pickChanges chooses the power changes from the true sizes: medium, the
// one whose in-process size lies in +8–15% nearest its middle (else the
// one nearest the range); large, the other one nearest +25%. forced
// names override either pick. Changes without an interval are never
// picked.
func pickChanges(sizes []trueSize, forcedMedium, forcedLarge string) (medium, large *pick, err error) {
	find := func(name string) (*trueSize, error) {
		for i := range sizes {
			if sizes[i].Change == name {
				return &sizes[i], nil
			}
		}
		return nil, fmt.Errorf("change %s: no true size measured", name)
	}
	best := func(score func(p float64) float64, not string) *trueSize {
		var b *trueSize
		bs := math.Inf(1)
		for i := range sizes {
			p := sizes[i].pointPct()
			if math.IsNaN(p) || sizes[i].Change == not {
				continue
			}
			if s := score(p); s < bs {
				b, bs = &sizes[i], s
			}
		}
		return b
	}
	mid := (mediumLoPct + mediumHiPct) / 2
	var m, l *trueSize
	if forcedMedium != "" {
		if m, err = find(forcedMedium); err != nil {
			return nil, nil, err
		}
	} else {
		m = best(func(p float64) float64 {
			if p >= mediumLoPct && p <= mediumHiPct {
				return math.Abs(p - mid) // in range: nearest the middle first
			}
			return 100 + math.Min(math.Abs(p-mediumLoPct), math.Abs(p-mediumHiPct))
		}, "")
	}
	notL := ""
	if m != nil {
		notL = m.Change
	}
	if forcedLarge != "" {
		if l, err = find(forcedLarge); err != nil {
			return nil, nil, err
		}
	} else {
		l = best(func(p float64) float64 { return math.Abs(p - largePct) }, notL)
	}
	if m != nil {
		p := m.pointPct()
		medium = &pick{Size: *m, InRange: p >= mediumLoPct && p <= mediumHiPct, Forced: forcedMedium != ""}
	}
	if l != nil {
		p := l.pointPct()
		large = &pick{Size: *l, InRange: math.Abs(p-largePct) <= largeTolPct, Forced: forcedLarge != ""}
	}
	if medium == nil || large == nil {
		var none []string
		for _, s := range sizes {
			if math.IsNaN(s.pointPct()) {
				none = append(none, s.Change)
			}
		}
		return medium, large, fmt.Errorf("true sizes: too few changes with an interval (none for %v)", none)
	}
	return medium, large, nil
}
