package compare

import (
	"math"
	"slices"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/stats"
)

// Sessions pooled into one side (issue 32). A sessions directory
// (store.ReadSessions: one results directory per boot, appended with
// rtload run --append) is loaded as one Run whose processes are every
// session's, renumbered so that none is shared, and whose Sessions say
// which process ran in which session. Every metric of such a run is then
// judged with the session as the top level (stats.Sessions: sessions ⊃
// processes ⊃ rounds, the degrees of freedom from the sessions), and its
// variance split and sizing have the session level in them.

// Session is one session of a Run loaded from a sessions directory.
type Session struct {
	// Dir is the session's results directory; Boot the boot it ran in.
	Dir  string              `json:"dir"`
	Boot results.SessionBoot `json:"boot"`
	// Processes are the run's process numbers (Trial.Process after
	// renumbering) that belong to this session.
	Processes []int `json:"processes"`
}

// sessionOf maps each process of r to its session's index; nil when r is
// not a sessions directory.
func (r *Run) sessionOf() map[int]int {
	if len(r.Sessions) == 0 {
		return nil
	}
	out := map[int]int{}
	for i, s := range r.Sessions {
		for _, p := range s.Processes {
			out[p] = i
		}
	}
	return out
}

// Boots is how many distinct boots r's sessions ran in (0 for a run that
// is not a sessions directory); a session without a boot id counts as
// its own.
func (r *Run) Boots() int {
	seen := map[string]bool{}
	n := 0
	for _, s := range r.Sessions {
		if s.Boot.BootID == "" || !seen[s.Boot.BootID] {
			n++
		}
		seen[s.Boot.BootID] = true
	}
	return n
}

// sessionGroups splits a sample's per-round values by session, then by
// process within it (sessionSplit); ids the processes, nil for the
// sample's own. ok is false when the run has fewer than 2 sessions (use
// groupsOf).
func sessionGroups(s sample, sessionOf map[int]int, ids []int) (g [][][]float64, ok bool) {
	if ids == nil {
		ids = processIDs(s)
	}
	return sessionSplit(s.rounds, s.procs, sessionOf, ids)
}

// sessionSplit splits vals (procs[i] the process of vals[i]) by session,
// then by process within it (sessions in order of their index, processes
// in the order of ids): the shape stats.Sessions takes. A process no
// session names is a session of its own. ok is false with fewer than 2
// sessions (or sessionOf nil).
func sessionSplit(vals []float64, procs []int, sessionOf map[int]int, ids []int) (g [][][]float64, ok bool) {
	if sessionOf == nil {
		return nil, false
	}
	bySession := map[int][]int{}
	var order []int
	for _, p := range ids {
		si, found := sessionOf[p]
		if !found {
			si = -1 - p
		}
		if _, seen := bySession[si]; !seen {
			order = append(order, si)
		}
		bySession[si] = append(bySession[si], p)
	}
	slices.Sort(order)
	if len(order) < 2 {
		return nil, false
	}
	for _, si := range order {
		g = append(g, groupValues(vals, procs, bySession[si]))
	}
	return g, true
}

// sessionControls are a metric's drift controls in the shape of Metric.sa
// and sb: null[0], loop[0] beside sa, null[1], loop[1] beside sb.
type sessionControls struct {
	null, loop, recv [2][][][]float64
}

// of is control k's sessions, A's and B's.
func (c *sessionControls) of(k Control) (a, b [][][]float64) {
	switch k {
	case ControlLoop:
		return c.loop[0], c.loop[1]
	case ControlRecv:
		return c.recv[0], c.recv[1]
	}
	return c.null[0], c.null[1]
}

// pool sets m.sa and m.sb (and the controls' sessions beside them) when
// either side pools ≥ 2 sessions: b is the baseline, x the column, sb and
// sx their process → session maps, ida and idb their processes as judge
// groups them; a side of one session is that one session (m.a, m.b).
func (m *Metric) pool(b, x sample, sb, sx map[int]int, ida, idb []int) {
	gb, okb := sessionSplit(b.rounds, b.procs, sb, ida)
	gx, okx := sessionSplit(x.rounds, x.procs, sx, idb)
	if !okb && !okx {
		return
	}
	side := func(g [][][]float64, ok bool, flat [][]float64) [][][]float64 {
		if ok {
			return g
		}
		return [][][]float64{flat}
	}
	m.sa, m.sb = side(gb, okb, m.a), side(gx, okx, m.b)
	if m.ctl == nil {
		return
	}
	var c sessionControls
	split := func(va, vb []float64, flat [2][][]float64) [2][][][]float64 {
		na, oka := sessionSplit(va, b.procs, sb, ida)
		nb, okb2 := sessionSplit(vb, x.procs, sx, idb)
		return [2][][][]float64{side(na, oka, flat[0]), side(nb, okb2, flat[1])}
	}
	c.null = split(b.null, x.null, m.ctl.null)
	c.loop = split(b.loop, x.loop, m.ctl.loop)
	if m.ctl.recv[0] != nil {
		c.recv = split(b.recv, x.recv, m.ctl.recv)
	}
	m.sctl = &c
}

// sessionUnits are the sessions of g as units of one value each (the
// exponential of the session's mean of its processes' mean logs): for an
// interval by process (stats.Unexplained) to take the session as its
// unit. nil for a value ≤ 0.
func sessionUnits(g [][][]float64) [][]float64 {
	out := make([][]float64, 0, len(g))
	for _, s := range g {
		var sum float64
		n := 0
		for _, p := range s {
			if len(p) == 0 {
				continue
			}
			var lp float64
			for _, v := range p {
				if !(v > 0) {
					return nil
				}
				lp += math.Log(v)
			}
			sum += lp / float64(len(p))
			n++
		}
		if n > 0 {
			out = append(out, []float64{math.Exp(sum / float64(n))})
		}
	}
	return out
}

// sessionVariance is the variance split of s's own samples with the
// session level; nil when s is not pooled over ≥ 2 sessions.
func sessionVariance(s sample, sessionOf map[int]int) *Variance {
	g, ok := sessionGroups(s, sessionOf, nil)
	if !ok || s.rate != nil {
		return nil
	}
	v := stats.SessionComponents(g)
	out := &Variance{Processes: v.Processes, Rounds: v.Rounds, Lag1Pairs: v.Lag1Pairs,
		BetweenProcessesLogSD: sqrtPtr(v.BetweenProcesses), BetweenRoundsLogSD: sqrtPtr(v.BetweenRounds),
		WithinRoundLogSD: sqrtPtr(v.WithinRound), Lag1: ptr(v.Lag1), Lag1High: stats.Lag1High(v.Lag1, v.Lag1Pairs),
		RoundsPerProcess: v.RoundsPerProcess(1, 1), BetweenSessionsLogSD: sqrtPtr(v.BetweenSessions), Sessions: v.Sessions,
		ProcessesPerSession: v.ProcessesPerSession}
	return out
}

// roundSessions is the session index of each of s's rounds (nil when the
// run is not a sessions directory).
func roundSessions(s sample, sessionOf map[int]int) []int {
	if sessionOf == nil {
		return nil
	}
	out := make([]int, len(s.procs))
	for i, p := range s.procs {
		out[i] = sessionOf[p]
	}
	return out
}

// SessionComponents is the variance split of m's units pooled over
// sessions, both sides together (stats.SessionComponents); pooled is
// false when neither side pools ≥ 2 sessions.
func (m *Metric) SessionComponents() (v stats.SessionVariance, pooled bool) {
	if m.sa == nil {
		return v, false
	}
	return stats.SessionComponents(append(append([][][]float64(nil), m.sa...), m.sb...)), true
}
