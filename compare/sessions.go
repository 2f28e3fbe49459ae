package compare

import (
	"fmt"
	"math"
	"slices"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/stats"
)

// Sessions pooled into one side (issue 32). A sessions directory
// (results.ReadSessions: one results directory per boot, appended with
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

// loadSessions reads the sessions directory dir as one Run labelled
// label: every session's summary and wakeup logs (rows bounds them all),
// merged by mergeSessions.
func loadSessions(dir, label string, rows *wakelog.RowBudget) (Run, error) {
	x, dirs, err := results.ReadSessions(dir)
	if err != nil {
		return Run{}, err
	}
	if len(dirs) == 0 {
		return Run{}, fmt.Errorf("sessions %s: no session yet (rtload run --append %s adds one)", dir, dir)
	}
	if err := boundSessions(dir, dirs); err != nil {
		return Run{}, err
	}
	sums := make([]*results.Summary, len(dirs))
	logs := make([]map[ReaderIndex]wakelog.ReadStats, len(dirs))
	var notes, unread []string
	trials := 0
	for i, d := range dirs {
		s, err := results.ReadSummary(d)
		if err != nil {
			return Run{}, fmt.Errorf("session %d: %w", i+1, err)
		}
		if trials += len(s.Trials); trials > results.MaxTrials {
			return Run{}, fmt.Errorf("sessions %s: more than %d trials in all, the limit of one summary", dir, results.MaxTrials)
		}
		sums[i] = s
		logs[i] = map[ReaderIndex]wakelog.ReadStats{}
		for ti, t := range s.Trials {
			for ri, rd := range t.Readers {
				if len(rd.WakeupLog) == 0 {
					continue
				}
				st, err := rows.EachReaderWakeup(d, rd, func(record.Wakeup) {})
				if err != nil {
					notes, unread = append(notes, err.Error()), append(unread, err.Error())
					continue
				}
				logs[i][ReaderIndex{ti, ri}] = st
			}
		}
	}
	sum, sessions := mergeSessions(sums, dirs)
	for i := range sessions {
		sessions[i].Boot = x.Sessions[i].Boot
	}
	r := Run{Label: label, Dir: dir, Summary: sum, WakeupLogs: map[ReaderIndex]wakelog.ReadStats{}, Notes: notes, Unread: unread, Sessions: sessions}
	off := 0
	for i, s := range sums {
		for k, st := range logs[i] {
			r.WakeupLogs[ReaderIndex{k.Trial + off, k.Reader}] = st
		}
		off += len(s.Trials)
	}
	if b := r.Boots(); b < len(sessions) {
		r.Notes = append(r.Notes, fmt.Sprintf("%d sessions from %s: sessions of one boot share its boot effect, which only other boots measure", len(sessions), plural(b, "boot", "boots")))
	}
	return r, nil
}

// boundSessions refuses sessions whose summaries together are larger
// than one summary may be (results.MaxSummaryBytes), before any is read:
// a side is held in memory whole, however many sessions it has.
func boundSessions(dir string, dirs []string) error {
	var total int64
	for i, d := range dirs {
		src, err := safeio.OpenSource(d)
		if err != nil {
			return fmt.Errorf("session %d: %w", i+1, err)
		}
		fi, err := src.Lstat(results.SummaryFile)
		src.Close()
		if err != nil {
			return fmt.Errorf("session %d: %w", i+1, err)
		}
		if total += fi.Size(); total > results.MaxSummaryBytes {
			return fmt.Errorf("sessions %s: their summaries hold more than %d MiB in all (the limit of one summary) by session %d: compare fewer sessions", dir, results.MaxSummaryBytes>>20, i+1)
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// mergeSessions merges the sessions' summaries (in order, from dirs)
// into one: the first session's scenario, environment and clock; every
// trial, its process renumbered past the earlier sessions' (and its
// index made the merged position); every process; degraded, stopped and
// in progress when any session was, with their reasons. Profiles and a
// rounds: auto rule are per session and left out.
func mergeSessions(sums []*results.Summary, dirs []string) (*results.Summary, []Session) {
	m := *sums[0]
	m.Trials, m.Processes, m.DegradedReasons = nil, nil, nil
	m.ProfiledTrials, m.Profiles, m.Auto = nil, nil, nil
	m.Degraded, m.Stopped, m.InProgress = false, false, false
	sessions := make([]Session, len(sums))
	base := 0
	for i, s := range sums {
		sessions[i].Dir = dirs[i]
		top := base
		procs := map[int]bool{}
		for _, t := range s.Trials {
			t.Process += base
			t.Index = len(m.Trials)
			m.Trials = append(m.Trials, t)
			procs[t.Process] = true
			top = max(top, t.Process+1)
		}
		for _, p := range s.Processes {
			p.Process += base
			m.Processes = append(m.Processes, p)
			procs[p.Process] = true
			top = max(top, p.Process+1)
		}
		for p := range procs {
			sessions[i].Processes = append(sessions[i].Processes, p)
		}
		slices.Sort(sessions[i].Processes)
		m.Degraded = m.Degraded || s.Degraded
		m.Stopped = m.Stopped || s.Stopped
		m.InProgress = m.InProgress || s.InProgress
		for _, r := range s.DegradedReasons {
			m.DegradedReasons = append(m.DegradedReasons, fmt.Sprintf("session %d: %s", i+1, r))
		}
		if s.End.After(m.End) {
			m.End = s.End
		}
		base = max(top, base+1)
	}
	return &m, sessions
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
	null, loop [2][][][]float64
}

// of is control k's sessions, A's and B's.
func (c *sessionControls) of(k Control) (a, b [][][]float64) {
	if k == ControlLoop {
		return c.loop[0], c.loop[1]
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
	for k, vals := range [2][2][]float64{{b.null, x.null}, {b.loop, x.loop}} {
		na, oka := sessionSplit(vals[0], b.procs, sb, ida)
		nb, okb2 := sessionSplit(vals[1], x.procs, sx, idb)
		flatA, flatB := m.ctl.null[0], m.ctl.null[1]
		if k == 1 {
			flatA, flatB = m.ctl.loop[0], m.ctl.loop[1]
		}
		pair := [2][][][]float64{side(na, oka, flatA), side(nb, okb2, flatB)}
		if k == 0 {
			c.null = pair
		} else {
			c.loop = pair
		}
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

// AppendSession is prior (a run loaded from a sessions directory, or any
// run: then its one session) with the run sum as one more session (its
// processes renumbered past prior's): check --append's candidate side
// while its new session runs. prior is not modified.
func AppendSession(prior Run, sum *results.Summary) Run {
	sums := []*results.Summary{prior.Summary, sum}
	dirs := []string{prior.Dir, ""}
	m, sessions := mergeSessions(sums, dirs)
	r := prior
	r.Summary = m
	if len(prior.Sessions) > 0 {
		// prior's own sessions keep their processes; the new one follows.
		r.Sessions = append(append([]Session(nil), prior.Sessions...), Session{Boot: results.BootOf(sum.Env), Processes: sessions[1].Processes})
	} else {
		sessions[0].Boot, sessions[1].Boot = results.BootOf(prior.Summary.Env), results.BootOf(sum.Env)
		r.Sessions = sessions
	}
	return r
}
