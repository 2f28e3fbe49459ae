package load

import (
	"fmt"
	"slices"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
)

// loadSessions reads the sessions directory dir as one Run labelled
// label: every session's summary and wakeup logs (rows bounds them all),
// merged by mergeSessions.
func loadSessions(dir, label string, rows *wakelog.RowBudget) (compare.Run, error) {
	x, dirs, err := store.ReadSessions(dir)
	if err != nil {
		return compare.Run{}, err
	}
	if len(dirs) == 0 {
		return compare.Run{}, fmt.Errorf("sessions %s: no session yet (rtload run --append %s adds one)", dir, dir)
	}
	if err := boundSessions(dir, dirs); err != nil {
		return compare.Run{}, err
	}
	sums := make([]*results.Summary, len(dirs))
	logs := make([]map[compare.ReaderIndex]wakelog.ReadStats, len(dirs))
	var notes, unread []string
	trials := 0
	for i, d := range dirs {
		s, err := store.ReadSummary(d)
		if err != nil {
			return compare.Run{}, fmt.Errorf("session %d: %w", i+1, err)
		}
		if trials += len(s.Trials); trials > results.MaxTrials {
			return compare.Run{}, fmt.Errorf("sessions %s: more than %d trials in all, the limit of one summary", dir, results.MaxTrials)
		}
		sums[i] = s
		logs[i] = map[compare.ReaderIndex]wakelog.ReadStats{}
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
				logs[i][compare.ReaderIndex{Trial: ti, Reader: ri}] = st
				if st.Torn != "" { // its last row not read: said, never silent
					notes = append(notes, "wakeup log: "+st.Torn)
				}
			}
		}
	}
	sum, sessions := mergeSessions(sums, dirs)
	for i := range sessions {
		sessions[i].Boot = x.Sessions[i].Boot
	}
	r := compare.Run{Label: label, Dir: dir, Summary: sum, WakeupLogs: map[compare.ReaderIndex]wakelog.ReadStats{}, Notes: notes, Unread: unread, Sessions: sessions}
	off := 0
	for i, s := range sums {
		for k, st := range logs[i] {
			r.WakeupLogs[compare.ReaderIndex{Trial: k.Trial + off, Reader: k.Reader}] = st
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
func mergeSessions(sums []*results.Summary, dirs []string) (*results.Summary, []compare.Session) {
	m := *sums[0]
	m.Trials, m.Processes, m.DegradedReasons = nil, nil, nil
	m.ProfiledTrials, m.Profiles, m.Auto = nil, nil, nil
	m.Degraded, m.Stopped, m.InProgress = false, false, false
	sessions := make([]compare.Session, len(sums))
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

// AppendSession is prior (a run loaded from a sessions directory, or any
// run: then its one session) with the run sum as one more session (its
// processes renumbered past prior's): check --append's candidate side
// while its new session runs. prior is not modified.
func AppendSession(prior compare.Run, sum *results.Summary) compare.Run {
	sums := []*results.Summary{prior.Summary, sum}
	dirs := []string{prior.Dir, ""}
	m, sessions := mergeSessions(sums, dirs)
	r := prior
	r.Summary = m
	if len(prior.Sessions) > 0 {
		// prior's own sessions keep their processes; the new one follows.
		r.Sessions = append(append([]compare.Session(nil), prior.Sessions...), compare.Session{Boot: results.BootOf(sum.Env), Processes: sessions[1].Processes})
	} else {
		sessions[0].Boot, sessions[1].Boot = results.BootOf(prior.Summary.Env), results.BootOf(sum.Env)
		r.Sessions = sessions
	}
	return r
}
