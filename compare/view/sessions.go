package view

import (
	"fmt"
	"math"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/stats"
)

// SessionSizing says, for every primary metric judged over sessions, how
// many sessions per side a comparison of this design needs to find each
// of SizingChanges slower beyond threshold with 80% power at the noise
// measured (stats.SessionsToDetect on the pooled components of both
// sides), and whether more processes per session would help. One line
// per metric; none when nothing was pooled.
func SessionSizing(r *compare.Result, threshold float64) []string {
	prim := r.Primary()
	var out []string
	for i, m := range r.Metrics {
		v, pooled := m.SessionComponents()
		if !prim[i] || m.Verdict == compare.VerdictBaseline || !pooled {
			continue
		}
		p := max(int(math.Round(v.ProcessesPerSession)), 1)
		rounds := max(int(math.Round(v.Rounds)), 1)
		var need []string
		for _, c := range compare.SizingChanges {
			if n, ok := stats.SessionsToDetect(v, p, rounds, c, threshold, compare.Confidence, stats.DefaultPower); ok {
				need = append(need, fmt.Sprintf("%d to find %+.0f%%", n, c*100))
			} else {
				need = append(need, fmt.Sprintf("none can find %+.0f%%", c*100))
			}
		}
		l := fmt.Sprintf("sizing: %s %s: log-SD %s between sessions, %s between processes, %s between rounds: this design (%d processes × %d rounds a session) needs about %s, sessions per side (slower beyond +%s%%, 80%% power)",
			m.Column, m.Key(), sdOr(v.BetweenSessions), sdOr(v.BetweenProcesses), sdOr(v.BetweenRounds), p, rounds,
			strings.Join(need, ", "), fmtPct(threshold*100))
		if w := v.SessionVar(p, rounds); w > 0 && !math.IsNaN(v.BetweenSessions) && v.BetweenSessions/w > 0.5 {
			l += "; the boot dominates: more sessions help, more processes a session hardly do"
		}
		out = append(out, l)
	}
	return out
}

func sdOr(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", math.Sqrt(v))
}

// writeSessions prints, for a comparison pooling sessions, each primary
// metric's n and variance split with the session level, and the sizing
// in sessions (SessionSizing): Brief's few lines on it.
func writeSessions(r *compare.Result, b *strings.Builder) {
	prim := r.Primary()
	var lines []string
	for i, m := range r.Metrics {
		v, pooled := m.SessionComponents()
		if !prim[i] || m.Verdict == compare.VerdictBaseline || !pooled {
			continue
		}
		n := "-"
		if m.Interval != nil {
			n = m.Interval.N
		}
		lines = append(lines, fmt.Sprintf("%s %s vs %s: n = %s; log-SD between sessions %s, between processes %s, between rounds %s (both sides)",
			m.Column, m.Key(), m.Baseline, n, sdOr(v.BetweenSessions), sdOr(v.BetweenProcesses), sdOr(v.BetweenRounds)))
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\npooled over sessions (the session the unit; variance split, log-SD of one unit: 0.10 ≈ ±10%):\n")
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	for _, l := range SessionSizing(r, r.ThresholdPct/100) {
		b.WriteString("  " + l + "\n")
	}
}
