package engine

import (
	"slices"

	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// hotFields fills the results fields the hot-path work added (issues 13
// and 15): where the thread counters come from, and the per-call hardware
// counters. Called from collect, at one spot, so the summary schema
// changes in one place.
func hotFields(rr *results.Reader, r *reader) {
	rr.CountersSource = r.countersSource
	rr.PerCallCounters = perCallCounters(r.total, r.drain.CountedEvents())
	rr.Controls = controls(r.total, r.drain.Controls(), r.drain.Counts().ControlSkips, true)
}

// linearMean is l's mean, 0 for a class the set does not hold.
func linearMean(l *record.Linear) float64 {
	if l == nil {
		return 0
	}
	return l.Mean()
}

// linearQuantile is l's quantile q (record.Linear.Quantile), 0 for a
// class the set does not hold.
func linearQuantile(l *record.Linear, q float64) float64 {
	if l == nil {
		return 0
	}
	return l.Quantile(q)
}

// linearIQM is l's interquartile mean (record.Linear.TrimmedMean(0.25)),
// 0 for a class the set does not hold.
func linearIQM(l *record.Linear) float64 {
	if l == nil {
		return 0
	}
	return l.TrimmedMean(0.25)
}

// controls summarises the drift controls recorded in t by a drain timing
// perTick of each a tick (nil for none), skipped the measured ticks that
// ran none; with hdr the histograms' encodings too.
func controls(t *record.Set, perTick int, skipped uint64, hdr bool) *results.Controls {
	if perTick == 0 {
		return nil
	}
	c := &results.Controls{PerTick: perTick, UserLoopIters: probe.UserLoopIters, SkippedTicks: skipped,
		NullSyscall: results.TickStatsOf(t.HDR(record.NullSyscall), hdr), UserLoop: results.TickStatsOf(t.HDR(record.UserLoop), hdr)}
	if h := t.HDR(record.CacheLine); h != nil && h.Count() > 0 {
		s := results.TickStatsOf(h, hdr)
		c.CacheLine = &s
	}
	if h := t.HDR(record.MemChase); h != nil && h.Count() > 0 {
		s := results.TickStatsOf(h, hdr)
		c.MemChase = &s
	}
	if h := t.HDR(record.RecvData); h != nil && h.Count() > 0 {
		s := results.TickStatsOf(h, hdr)
		c.RecvData = &s
	}
	if h := t.HDR(record.RecvEAGAIN); h != nil && h.Count() > 0 {
		s := results.TickStatsOf(h, hdr)
		c.RecvEAGAIN = &s
	}
	return c
}

// perCallCounters summarises t's per-call event histograms for the events
// counted (the others, left out, are absent).
func perCallCounters(t *record.Set, counted []string) []results.PerCallCounter {
	var out []results.PerCallCounter
	for e, name := range t.Events() {
		if !slices.Contains(counted, name) {
			continue
		}
		l := func(c record.Class) results.CountStats { return results.CountStatsOf(t.EventHDR(e, c), true) }
		out = append(out, results.PerCallCounter{Event: name,
			All: l(record.CallAll), Data: l(record.CallData), EAGAIN: l(record.CallEAGAIN),
			Warm: l(record.CallWarm), Cold: l(record.CallCold), First: l(record.CallFirst), Rest: l(record.CallRest),
			Clamped: t.EventHDR(e, record.CallAll).Clamped()})
	}
	return out
}
