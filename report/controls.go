package report

import (
	"strconv"

	"github.com/rtload/rtload/results"
)

// controlsBlock renders the drift controls (readers[].controls): per
// column, rounds merged, the null syscall's and the user loop's mean (in
// clock ticks and, with a known frequency, ns), p50 and p99 per call, the
// calls per tick, the loop's iterations and the measured ticks that
// skipped their controls. Beside the per-call cost they say whether the
// machine moved: compare and check adjust by them. nil when no column
// timed controls.
func controlsBlock(s *results.Summary, cols []column, unit string) *kv {
	any := false
	for _, c := range cols {
		any = any || len(c.controls) > 0
	}
	if !any {
		return nil
	}
	k := &kv{title: "drift controls (getppid, user loop; after each drain; " + s.Clock.TickUnit() + ", rounds merged)"}
	type merged struct {
		null, loop results.TickStats
		perTick    int
		iters      string
		skipped    uint64
	}
	ms := make([]*merged, len(cols))
	for i, c := range cols {
		if len(c.controls) == 0 {
			continue
		}
		var nulls, loops []results.TickStats
		m := &merged{}
		for _, ct := range c.controls {
			nulls, loops = append(nulls, ct.NullSyscall), append(loops, ct.UserLoop)
			m.perTick = max(m.perTick, ct.PerTick)
			m.skipped += ct.SkippedTicks
			if it := strconv.Itoa(ct.UserLoopIters); m.iters == "" {
				m.iters = it
			} else if m.iters != it {
				m.iters = "differs"
			}
		}
		m.null, _ = results.MergeTickStats(nulls...)
		m.loop, _ = results.MergeTickStats(loops...)
		ms[i] = m
	}
	row := func(f func(m *merged) string) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = "–"
			if m != nil {
				out[i] = f(m)
			}
		}
		return out
	}
	ns := s.Clock.Kind != "monotonic" && s.Clock.Hz > 0
	for _, ctl := range []struct {
		name string
		get  func(m *merged) results.TickStats
	}{
		{"null syscall", func(m *merged) results.TickStats { return m.null }},
		{"user loop", func(m *merged) results.TickStats { return m.loop }},
	} {
		k.add(ctl.name+" calls", row(func(m *merged) string { return u(ctl.get(m).Count) })...)
		k.add(ctl.name+" mean "+unit, row(func(m *merged) string { return f1(ctl.get(m).MeanTicks) })...)
		if ns {
			k.add(ctl.name+" mean ns", row(func(m *merged) string { return f1(s.Clock.Ns(ctl.get(m).MeanTicks)) })...)
		}
		for _, q := range []results.Quantity{results.P50, results.P99} {
			k.add(ctl.name+" "+q.String()+" "+unit, row(func(m *merged) string { return strconv.FormatFloat(ctl.get(m).Ticks(q), 'f', 0, 64) })...)
		}
	}
	k.add("controls per tick", row(func(m *merged) string { return strconv.Itoa(m.perTick) })...)
	k.add("user loop iterations", row(func(m *merged) string { return m.iters })...)
	k.add("ticks that skipped them", row(func(m *merged) string { return u(m.skipped) })...)
	return k
}
