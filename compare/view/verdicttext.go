package view

import (
	"fmt"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/stats"
)

// writeVerdicts prints, for every primary metric against its baseline,
// the three-way verdict with its CI, n, the smallest change it could
// have detected and how many more units would decide it.
func writeVerdicts(r *compare.Result, b *strings.Builder) {
	prim := r.Primary()
	var lines []string
	for i, m := range r.Metrics {
		if (!prim[i] && m.Rate == nil) || m.Verdict == compare.VerdictBaseline {
			continue
		}
		lines = append(lines, "  "+VerdictLine(m, r.ThresholdPct))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\nverdicts (primary metrics and spike rates, threshold ±%s%%):\n%s\n", fmtPct(r.ThresholdPct), strings.Join(lines, "\n"))
	if len(r.Machine) > 0 {
		b.WriteString("\ndrift controls' own change (the machine's, or the system-call entry's; a gate adjusts per-call costs on the null syscall unless --control names another):\n")
		for _, l := range MachineLines(r) {
			b.WriteString("  " + l + "\n")
		}
	}
}

// VerdictLine is one metric's verdict in one line: "recvmsg/new mean
// per-call cost (ns): undecided: +2.10% [−4.01%, +8.60%] (95% CI, n = 6
// processes × 8 rounds, unit process, df 9.8); smallest detectable
// change +12.3%; 14 more processes per side would decide it".
func VerdictLine(m compare.Metric, thresholdPct float64) string {
	l := fmt.Sprintf("%s %s: %s", m.Column, m.Key(), m.Verdict)
	iv := m.Interval
	if iv == nil {
		return l + ": " + m.MethodNote
	}
	var what []string
	if iv.LowPct != nil {
		hi := "+∞"
		if iv.HighPct != nil {
			hi = fmt.Sprintf("%+.2f%%", *iv.HighPct)
		}
		l += fmt.Sprintf(": %s [%+.2f%%, %s]", pctOr(iv.PointPct), *iv.LowPct, hi)
		what = append(what, levelPct(iv.Level)+" CI")
	} else {
		l += ": no interval"
	}
	if iv.N != "" {
		what = append(what, "n = "+iv.N)
	}
	if iv.Unit != "" {
		what = append(what, "unit "+iv.Unit)
	}
	if iv.DF != nil {
		what = append(what, fmt.Sprintf("df %.1f", *iv.DF))
	}
	if len(what) > 0 {
		l += " (" + strings.Join(what, ", ") + ")"
	}
	if m.MinDetectablePct != nil {
		l += fmt.Sprintf("; smallest detectable change %+.1f%%", *m.MinDetectablePct)
	}
	clear := iv.LowPct != nil && iv.HighPct != nil && (*iv.LowPct > thresholdPct || *iv.HighPct < thresholdPct)
	switch {
	case m.Verdict == compare.VerdictUndecided && clear:
		// The interval decides, something else does not let it.
		if i := strings.Index(m.MethodNote, "invalid"); i >= 0 {
			l += "; undecided whatever the interval says: a trial is invalid (" + strings.TrimSpace(m.MethodNote[strings.LastIndex(m.MethodNote[:i], ";")+1:]) + ")"
		}
	case m.MoreUnits != nil && *m.MoreUnits > 0:
		l += fmt.Sprintf("; %d more %s per side would decide it", *m.MoreUnits, unitPlural(iv.Unit, *m.MoreUnits))
	case m.Verdict == compare.VerdictUndecided && iv.LowPct != nil && iv.Unit != "event":
		l += "; no number of samples would decide it at the change measured: it lies within the noise of the threshold, or the side that cannot grow (a check's baseline) is too noisy alone"
	}
	if r := m.Rate; r != nil {
		l += fmt.Sprintf("; %d events in %.3g h: %.3g/h [%.3g, %.3g]", r.Count, r.Hours, r.PerH, r.LowPerH, r.HighPerH)
		if r.MTBFH != nil && r.MTBFLowH != nil {
			hi := "∞"
			if r.MTBFHighH != nil {
				hi = fmt.Sprintf("%.3g", *r.MTBFHighH)
			}
			l += fmt.Sprintf(", MTBF %.3g h [%.3g, %s]", *r.MTBFH, *r.MTBFLowH, hi)
		}
	}
	for _, n := range iv.Notes {
		l += "; " + n
	}
	return l
}

func levelPct(l float64) string { return LevelPct(l) }

// LevelPct prints a confidence level as outputs do: 0.975 → "97.5%".
func LevelPct(l float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", l*100), "0"), ".") + "%"
}

func fmtPct(v float64) string { return Pct(v) }

// Pct prints a percentage (3 → "3", 2.5 → "2.5") as outputs do, without
// the sign.
func Pct(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

func pctOr(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", *p)
}

func unitPlural(u string, n int) string {
	switch {
	case n == 1:
		return u
	case u == "process":
		return "processes"
	case u == "":
		return "units"
	}
	return u + "s"
}

// writeVariance prints the variance split of every primary metric's
// columns: where the noise is, and Kalibera & Jones' rounds per process.
func writeVariance(r *compare.Result, b *strings.Builder) {
	prim := r.Primary()
	rows := [][]string{{"metric", "column", "n", "between processes", "between rounds", "within round", "lag-1", "K&J rounds/process"}}
	pooled := false
	for i, m := range r.Metrics {
		pooled = pooled || prim[i] && m.Variance != nil && m.Variance.Sessions > 1
	}
	if pooled {
		rows[0] = append([]string{rows[0][0], rows[0][1], rows[0][2], "between sessions"}, rows[0][3:]...)
	}
	for i, m := range r.Metrics {
		v := m.Variance
		if !prim[i] || v == nil {
			continue
		}
		lag := sd(v.Lag1)
		if v.Lag1High {
			lag += " HIGH: rounds are not independent"
		}
		kj := "-"
		if v.RoundsPerProcess > 0 {
			kj = fmt.Sprint(v.RoundsPerProcess)
		}
		row := []string{m.Key(), m.Column, shapeOf(m), sdNote(v.BetweenProcessesLogSD, "1 process"),
			sdNote(v.BetweenRoundsLogSD, "1 round"), sdNote(v.WithinRoundLogSD, "no blocks"), lag, kj}
		if pooled {
			row = append([]string{row[0], row[1], row[2], sdNote(v.BetweenSessionsLogSD, "1 session")}, row[3:]...)
		}
		rows = append(rows, row)
	}
	if len(rows) == 1 {
		return
	}
	b.WriteString("\nvariance split (log-SD of one unit: 0.10 ≈ ±10%; K&J: Kalibera & Jones' rounds per process, a process costing a round):\n")
	right := []bool{false, false, false, true, true, true, false, true}
	if pooled {
		right = append([]bool{false, false, false, true}, right[3:]...)
	}
	report.Aligned(b, rows, right)
	for _, l := range SessionSizing(r, r.ThresholdPct/100) {
		b.WriteString(l + "\n")
	}
}

// shapeOf names a metric's samples: "6 processes × 8 rounds", "3
// sessions × 4 processes × 2 rounds" for a column pooled over sessions.
func shapeOf(m compare.Metric) string {
	if len(m.RoundSessions) == len(m.Rounds) && len(m.Rounds) > 0 {
		groups := map[int]map[int][]float64{}
		for i, v := range m.Rounds {
			s, p := m.RoundSessions[i], 0
			if i < len(m.RoundProcesses) {
				p = m.RoundProcesses[i]
			}
			if groups[s] == nil {
				groups[s] = map[int][]float64{}
			}
			groups[s][p] = append(groups[s][p], v)
		}
		var g [][][]float64
		for _, procs := range groups {
			var ps [][]float64
			for _, r := range procs {
				ps = append(ps, r)
			}
			g = append(g, ps)
		}
		return stats.SessionShape(g)
	}
	procs := map[int]int{}
	for i := range m.Rounds {
		p := 0
		if i < len(m.RoundProcesses) {
			p = m.RoundProcesses[i]
		}
		procs[p]++
	}
	lo, hi := 0, 0
	for _, n := range procs {
		if lo == 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	r := fmt.Sprint(hi)
	if lo != hi {
		r = fmt.Sprintf("%d–%d", lo, hi)
	}
	return fmt.Sprintf("%d %s × %s %s", len(procs), unitPlural("process", len(procs)), r, unitPlural("round", hi))
}

func sd(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}

func sdNote(p *float64, why string) string {
	if p == nil {
		return "- (" + why + ")"
	}
	return fmt.Sprintf("%.3f", *p)
}
