package compare

import (
	"slices"

	"github.com/rtload/rtload/stats"
)

// The drift controls in the model (issue 31): each per-call sample of a
// reader's round comes with the null syscall's and the user loop's mean
// of the same reader and trial (results.Reader.ControlMeans), and each
// interleaved block with its own (results.BlockControls.Means). A verdict
// reads them through Metric's methods below: the control's own change,
// the metric adjusted on a control (stats.Adjust), and the null syscall's
// change net of the user loop's (stats.Unexplained); Result.Machine is the
// machine's own change between the runs.

// Control names one of a reader's drift controls (results.Controls).
type Control string

// The drift controls.
const (
	ControlNull Control = "null syscall" // getppid(2), timed like a recv call
	ControlLoop Control = "user loop"    // a fixed user-space loop
	// ControlRecv is the recv control's data call (probe's xrecv.go): a
	// 64-byte datagram of the reader's own, read with its own receiver.
	ControlRecv Control = "recv control"
)

// controlSamples are a metric's drift controls, value by value in the
// shape of its samples: null[0] and loop[0] beside Metric.a (or the
// A blocks of Metric.blocks, as one group), null[1] and loop[1] beside b;
// recv likewise, nil unless every round of both sides timed it.
type controlSamples struct {
	null, loop, recv [2][][]float64
}

// controlsOf are the controls of baseline b and column x grouped by
// process as judge groups their values (ida, idb); nil unless every
// round of both has both controls.
func controlsOf(b, x sample, ida, idb []int) *controlSamples {
	if !b.controlled() || !x.controlled() {
		return nil
	}
	c := &controlSamples{
		null: [2][][]float64{groupValues(b.null, b.procs, ida), groupValues(x.null, x.procs, idb)},
		loop: [2][][]float64{groupValues(b.loop, b.procs, ida), groupValues(x.loop, x.procs, idb)},
	}
	if allPositive(b.recv, len(b.rounds)) && allPositive(x.recv, len(x.rounds)) {
		c.recv = [2][][]float64{groupValues(b.recv, b.procs, ida), groupValues(x.recv, x.procs, idb)}
	}
	return c
}

// blockControls are the controls of block pairs p, flattened as
// newInterleaved flattens their values; nil unless every block has both.
func blockControls(p blockPairs) *controlSamples {
	flat := func(g [][]float64) []float64 {
		var out []float64
		for _, x := range g {
			out = append(out, x...)
		}
		return out
	}
	var c controlSamples
	for side, g := range [2][2][][]float64{{p.na, p.la}, {p.nb, p.lb}} {
		n, l := flat(g[0]), flat(g[1])
		if len(n) == 0 || slices.ContainsFunc(n, func(v float64) bool { return !(v > 0) }) || slices.ContainsFunc(l, func(v float64) bool { return !(v > 0) }) {
			return nil
		}
		c.null[side], c.loop[side] = [][]float64{n}, [][]float64{l}
	}
	return &c
}

// of is control k's groups, A's and B's (nil for a recv control not
// timed on both sides).
func (c *controlSamples) of(k Control) (a, b [][]float64) {
	switch k {
	case ControlLoop:
		return c.loop[0], c.loop[1]
	case ControlRecv:
		return c.recv[0], c.recv[1]
	}
	return c.null[0], c.null[1]
}

const noRecvControl = "the recv control is not in both runs (results of an rtload before it, or controls: 0)" // why none

// has reports whether m carries control k on both sides (sessions split
// the recv control only where controlsOf found it).
func (m *Metric) has(k Control) bool {
	return m.Controlled() && (k != ControlRecv || m.ctl.recv[0] != nil)
}

// Controlled reports whether m carries its drift controls: every
// per-round value (or interleaved block) on both sides with its null
// syscall and user loop. Only per-call costs of readers that timed
// controls (readers[].controls > 0) have them.
func (m *Metric) Controlled() bool { return m.ctl != nil && m.Sampled() }

// SameProcesses reports whether m's sides ran in the same processes (two
// variants of one run: paired by process, or by interleaved block), so
// that the machine's drift is common to both and cancels in the pairs.
func (m *Metric) SameProcesses() bool { return m.paired || m.blocks != nil }

// ControlChangeAt is control k's own change between m's sides at the
// two-sided level, by the interval m's change takes (Welch t over
// processes, paired t, or the block pairs'): the machine's change (or the
// system-call entry's). Undefined when m has no controls.
func (m *Metric) ControlChangeAt(k Control, level float64) stats.Change {
	if !m.Controlled() {
		return stats.Undefined("no drift controls")
	}
	if !m.has(k) {
		return stats.Undefined(noRecvControl)
	}
	if m.sctl != nil {
		a, b := m.sctl.of(k)
		if m.paired {
			return stats.SessionsPairedAt(a, b, level)
		}
		return stats.SessionsAt(a, b, level)
	}
	a, b := m.ctl.of(k)
	switch {
	case m.blocks != nil:
		return stats.PairedAt(a[0], b[0], level)
	case m.paired:
		return stats.NestedPairedAt(a, b, level)
	}
	return stats.NestedAt(a, b, level)
}

// AdjustedAt is m's change regression-adjusted on control k at the
// two-sided level (stats.AdjustAt, AdjustPairedAt for sides in the same
// processes): θ estimated within the sides, the raw change and k's own
// change beside it. Undefined without controls, and for interleaved block
// pairs (stats.Paired has no adjusted form: verdict does not adjust them).
func (m *Metric) AdjustedAt(k Control, level float64) stats.Adjusted {
	if !m.Controlled() || m.blocks != nil {
		raw := m.ChangeAt(level)
		why := "no drift controls"
		if m.blocks != nil {
			why = "interleaved block pairs are not adjusted"
		}
		return stats.Adjusted{Change: stats.Undefined(why), Raw: raw, Control: m.ControlChangeAt(k, level)}
	}
	if !m.has(k) {
		return stats.Adjusted{Change: stats.Undefined(noRecvControl), Raw: m.ChangeAt(level)}
	}
	if m.sctl != nil {
		// Sessions: the rounds adjusted, the session the unit
		// (stats.AdjustSessions); variants of one run pooled over
		// sessions are not adjusted (the machine's drift cancels in
		// their per-process differences).
		xa, xb := m.sctl.of(k)
		if m.paired {
			return stats.Adjusted{Change: stats.Undefined("variants in the same processes of each session are not adjusted"), Raw: m.ChangeAt(level), Control: m.ControlChangeAt(k, level)}
		}
		return stats.AdjustSessionsAt(m.sa, xa, m.sb, xb, level)
	}
	xa, xb := m.ctl.of(k)
	if m.paired {
		return stats.AdjustPairedAt(m.a, xa, m.b, xb, level)
	}
	return stats.AdjustAt(m.a, xa, m.b, xb, level)
}

// NullNetOfLoopAt is the null syscall's change between m's sides net of
// what the user loop's change predicts (stats.Unexplained, the loop's
// slope at least minTheta) at the two-sided level: an interval that
// excludes 0 says the null syscall moved by more than the machine moved
// the loop (verdict's entry-change rule). Undefined without controls or
// for block pairs.
func (m *Metric) NullNetOfLoopAt(level, minTheta float64) stats.Adjusted {
	if !m.Controlled() || m.blocks != nil {
		return stats.Adjusted{Change: stats.Undefined("no drift controls by process")}
	}
	if m.sctl != nil && !m.paired {
		// The session as the unit: one value per session.
		na, nb := m.sctl.of(ControlNull)
		la, lb := m.sctl.of(ControlLoop)
		return stats.Unexplained(sessionUnits(na), sessionUnits(la), sessionUnits(nb), sessionUnits(lb), level, false, minTheta)
	}
	na, nb := m.ctl.of(ControlNull)
	la, lb := m.ctl.of(ControlLoop)
	return stats.Unexplained(na, la, nb, lb, level, m.paired, minTheta)
}

// Machine is the drift controls' own change between a column and its
// baseline (Result.Machine): the machine's change between two runs, or
// between two variants of one run (what a variant does to the system-call
// entry, a seccomp filter, shows here). Each change is the one shape of a
// change with its interval (Interval), at Confidence.
type Machine struct {
	// Column and Baseline are run labels when runs are compared (every
	// reader's controls of every trial of the run, by process), column
	// labels within one run (the mean per-call cost's own pairs).
	Column      string    `json:"column"`
	Baseline    string    `json:"baseline"`
	NullSyscall *Interval `json:"null_syscall"`
	UserLoop    *Interval `json:"user_loop"`
	// RecvControl is the recv control's data call's change; nil when
	// either side did not time it.
	RecvControl *Interval `json:"recv_control,omitempty"`
}

// machine fills r.Machine: with several runs, each run's controls against
// the first run's (all its readers' rounds by process, stats.Nested); with
// one run, each mean per-call cost row's controls against its baseline
// column's (ControlChangeAt).
func (r *Result) machine(runs []Run, cols []column) {
	r.Machine = nil
	if len(runs) == 1 {
		seen := map[string]bool{}
		for i := range r.Metrics {
			m := &r.Metrics[i]
			if m.Name != "mean per-call cost" || !m.Controlled() || seen[m.Column] {
				continue
			}
			seen[m.Column] = true
			mc := Machine{Column: m.Column, Baseline: m.Baseline,
				NullSyscall: intervalOf(m.ControlChangeAt(ControlNull, Confidence)), UserLoop: intervalOf(m.ControlChangeAt(ControlLoop, Confidence))}
			if m.has(ControlRecv) {
				mc.RecvControl = intervalOf(m.ControlChangeAt(ControlRecv, Confidence))
			}
			r.Machine = append(r.Machine, mc)
		}
		return
	}
	type side struct{ null, loop, recv sample }
	sides := make([]side, len(runs))
	for _, c := range cols {
		s := &sides[c.runIdx]
		for i := range c.readers {
			if null, loop, ok := c.readers[i].ControlMeans(); ok {
				s.null.add(null, c.procs[i])
				s.loop.add(loop, c.procs[i])
				if v := c.readers[i].Controls.RecvMeanTicks(); v > 0 {
					s.recv.add(v, c.procs[i])
				}
			}
		}
	}
	a := sides[0]
	for ri := 1; ri < len(runs); ri++ {
		b := sides[ri]
		if len(a.null.rounds) == 0 || len(b.null.rounds) == 0 {
			continue
		}
		group := func(s sample) [][]float64 { return groupsOf(s, processIDs(s)) }
		change := func(x, y sample) stats.Change {
			// Sessions directories: the session the unit (sessions.go).
			gx, okx := sessionGroups(x, runs[0].sessionOf(), nil)
			gy, oky := sessionGroups(y, runs[ri].sessionOf(), nil)
			if !okx && !oky {
				return stats.NestedAt(group(x), group(y), Confidence)
			}
			if !okx {
				gx = [][][]float64{group(x)}
			}
			if !oky {
				gy = [][][]float64{group(y)}
			}
			return stats.SessionsAt(gx, gy, Confidence)
		}
		mc := Machine{Column: runs[ri].Label, Baseline: runs[0].Label,
			NullSyscall: intervalOf(change(a.null, b.null)), UserLoop: intervalOf(change(a.loop, b.loop))}
		if len(a.recv.rounds) == len(a.null.rounds) && len(b.recv.rounds) == len(b.null.rounds) {
			// Every reader round of both runs timed the recv control.
			mc.RecvControl = intervalOf(change(a.recv, b.recv))
		}
		r.Machine = append(r.Machine, mc)
	}
}

// IntervalOf is c in compare's JSON terms (Interval), the one shape of a
// change with its interval; nil for a Change with no level (the zero
// value).
func IntervalOf(c stats.Change) *Interval {
	if c.Level == 0 && c.Method == "" && len(c.Notes) == 0 {
		return nil
	}
	return intervalOf(c)
}

// NetOfAt is m's change net of control k at slope 1: of each round's y/x
// between m's sides, by processes (Welch t) or sessions; no slope is
// estimated. Undefined without k on both sides, and for sides in the same
// processes (the machine's drift cancels in their pairs).
func (m *Metric) NetOfAt(k Control, level float64) stats.Change {
	switch {
	case !m.Controlled():
		return stats.Undefined("no drift controls")
	case !m.has(k):
		return stats.Undefined(noRecvControl)
	case m.SameProcesses():
		return stats.Undefined("the sides ran in the same processes")
	}
	if m.sctl != nil {
		xa, xb := m.sctl.of(k)
		return stats.SessionsAt(stats.RatioSessions(m.sa, xa), stats.RatioSessions(m.sb, xb), level)
	}
	xa, xb := m.ctl.of(k)
	return stats.NestedAt(stats.Ratios(m.a, xa), stats.Ratios(m.b, xb), level)
}
