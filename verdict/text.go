package verdict

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/view"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/report"
)

// Text writes the gate's verdict: one line, then one line per judged
// metric (its three-way verdict, CI, n, smallest detectable change and
// the samples that would decide it) and per reason it cannot judge.
func (g Gate) Text(w io.Writer) error {
	reasons := g.Reasons // split into lines before they are escaped
	g = termsafe.Copy(g) // strings from results, escaped for the terminal
	var b strings.Builder
	slower, notSlower, n := g.judgedCounts()
	undecided := n - slower - notSlower
	level := view.LevelPct(g.Level)
	if n > 1 {
		level += " each, 95% family-wise"
	}
	thr := view.Pct(g.ThresholdPct)
	counts := fmt.Sprintf("%d slower, %d not slower, %d undecided at +%s%% (CI %s)", slower, notSlower, undecided, thr, level)
	if tails, clear, tthr := g.tailCounts(); tails > 0 {
		counts += fmt.Sprintf("; of them %d %s (spike rates, wakeup latency p99), judged by the tail guard at +%s%%: %d clear (not shown higher: counted as not slower)",
			tails, plural(tails, "tail metric", "tail metrics"), view.Pct(tthr), clear)
	}
	switch g.Verdict {
	case NotSlower:
		fmt.Fprintf(&b, "gate: NOT SLOWER: %s is proven not slower beyond +%s%%%s (%s)\n", g.provenSubject(), thr, g.clearNote(), counts)
	case Slower:
		fmt.Fprintf(&b, "gate: SLOWER: %d judged metric(s) proven slower beyond %s, the whole CI beyond it (%s)\n", slower, g.slowerBeyond(), counts)
	case Undecided:
		fmt.Fprintf(&b, "gate: UNDECIDED: not proven slower, not proven not slower (%s): more samples or a larger --threshold\n", counts)
	default:
		b.WriteString("gate: CANNOT JUDGE")
		if n > 0 {
			fmt.Fprintf(&b, " (%s)", counts)
		}
		b.WriteByte('\n')
	}
	for _, m := range g.Metrics {
		l := view.VerdictLine(m.compareMetric(), m.threshold(g.ThresholdPct))
		if m.Tail {
			l += "; tail guard: " + m.Judged
		} else if a := m.Adjustment; a != nil && a.Judged == JudgedAdjusted { // θ and r are in the interval's notes
			l += "; the raw change " + view.IntervalWords(a.Raw)
		} else if a != nil {
			l += "; " + a.Long()
		}
		fmt.Fprintf(&b, "  %s\n", l)
	}
	for _, r := range g.Marked {
		fmt.Fprintf(&b, "  marked, the workload's own (never a pass; what it proves slower stands): %s\n", r)
	}
	for _, r := range reasons {
		for _, l := range report.TextLines("  cannot judge: " + r) {
			fmt.Fprintf(&b, "%s\n", termsafe.Escape(l))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// worseNotBeyond counts g's undecided metrics whose interval lies on the
// worse side of 0 (view.WorseNotBeyond).
func (g Gate) worseNotBeyond() int {
	k := 0
	for _, m := range g.Metrics {
		if view.WorseNotBeyond(m.compareMetric()) {
			k++
		}
	}
	return k
}

// compareMetric is m as compare's views read a metric.
func (m Metric) compareMetric() compare.Metric {
	return compare.Metric{Name: m.Name, Unit: m.Unit, HigherIsBetter: m.HigherIsBetter, Column: m.Column, Baseline: m.Baseline, Verdict: m.Verdict,
		Interval: m.Interval, MinDetectablePct: m.MinDetectablePct, MoreUnits: m.MoreUnits, MethodNote: m.MethodNote}
}

// judgedCounts is how many of g's judged metrics are proven slower and
// proven not slower (a spike rate: clear), of n judged; the rest are
// undecided.
func (g Gate) judgedCounts() (slower, notSlower, n int) {
	for _, m := range g.Metrics {
		switch {
		case m.Judged == JudgedSlower:
			slower++
		case m.clear():
			notSlower++
		}
	}
	return slower, notSlower, len(g.Metrics)
}

// slowerBeyond names the thresholds g's slower metrics are proven slower
// beyond: "+3%", "+100% in the tail (…)", or both.
func (g Gate) slowerBeyond() string {
	var metric, tail bool
	for _, m := range g.Metrics {
		if m.Judged == JudgedSlower {
			metric, tail = metric || !m.Tail, tail || m.Tail
		}
	}
	_, _, tthr := g.tailCounts()
	t := "+" + view.Pct(tthr) + "% in the tail (a spike rate or the wakeup latency p99)"
	switch {
	case tail && metric:
		return "+" + view.Pct(g.ThresholdPct) + "%, and " + t
	case tail:
		return t
	}
	return "+" + view.Pct(g.ThresholdPct) + "%"
}

// provenSubject is what a passed gate proved not slower: "every judged
// metric", or with tail metrics "every judged metric outside the tail"
// (the tail guard never proves a tail not slower: clearNote).
func (g Gate) provenSubject() string {
	if tails, _, _ := g.tailCounts(); tails > 0 {
		return "every judged metric outside the tail"
	}
	return "every judged metric"
}

// clearNote is what the tail guard said when g judged a tail metric (all
// clear when g passed): "; the tail guard holds nothing (…)", "" without
// tail metrics.
func (g Gate) clearNote() string {
	if tails, _, _ := g.tailCounts(); tails > 0 {
		return "; the tail guard holds nothing (not shown higher, nor measured beyond its threshold: a guard, not a proof)"
	}
	return ""
}

// tailCounts is how many of g's judged metrics are tail metrics (spike
// rates, wakeup latency p99: Metric.Tail), how many
// of them the tail guard found clear, and its threshold (%).
func (g Gate) tailCounts() (tails, clear int, thresholdPct float64) {
	for _, m := range g.Metrics {
		if m.Tail {
			tails++
			thresholdPct = m.ThresholdPct
			if m.clear() {
				clear++
			}
		}
	}
	return tails, clear, thresholdPct
}

// threshold is the threshold m was read against (%), gate's when m does
// not say (a report written before metrics carried their own).
func (m Metric) threshold(gate float64) float64 {
	if m.ThresholdPct != 0 {
		return m.ThresholdPct
	}
	return gate
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Line is the gate's verdict in one line, headed by who ("gate",
// "check"), with exit, the code the command is about to return:
// "check: UNDECIDED at +3% (…): exit 125 (git bisect: skip)".
func (g Gate) Line(who string, exit int) string {
	slower, notSlower, n := g.judgedCounts()
	counts := fmt.Sprintf("%d slower, %d not slower, %d undecided of %d judged", slower, notSlower, n-slower-notSlower, n)
	if k := g.worseNotBeyond(); k > 0 {
		counts += fmt.Sprintf(", %d of them slower with the CI excluding 0", k)
	}
	if tails, clear, _ := g.tailCounts(); tails > 0 {
		counts += fmt.Sprintf("; %d of them %s, %d clear", tails, plural(tails, "tail metric", "tail metrics"), clear)
	}
	code := fmt.Sprintf("exit %d", exit)
	switch exit {
	case ExitNotSlower:
		code += " (git bisect: good)"
	case ExitSlower:
		code += " (git bisect: bad)"
	case ExitCannotJudge:
		code += " (git bisect: skip)"
	}
	thr := view.Pct(g.ThresholdPct)
	switch g.Verdict {
	case NotSlower:
		return fmt.Sprintf("%s: NOT SLOWER: %s proven not slower beyond +%s%%%s (%s): %s", who, g.provenSubject(), thr, g.clearNote(), counts, code)
	case Slower:
		return fmt.Sprintf("%s: SLOWER: proven slower beyond %s (%s): %s", who, g.slowerBeyond(), counts, code)
	case Undecided:
		return fmt.Sprintf("%s: UNDECIDED at +%s%% (%s): %s", who, thr, counts, code)
	}
	why := ""
	if len(g.Reasons) > 0 {
		first, more, _ := strings.Cut(g.Reasons[0], "\n")
		why = ": " + strings.TrimSuffix(first, ":")
		if more != "" {
			why += " (…)"
		}
		if len(g.Reasons) > 1 {
			why += fmt.Sprintf(" (and %d more)", len(g.Reasons)-1)
		}
	}
	return who + ": CANNOT JUDGE" + why + ": " + code
}

// Closing is the closing block of a gate (compare --fail-on, check) over
// the comparison it judged: the gate's metrics at its level, each with
// its change (view.ChangeLine) and verdict, the runs not as asked for
// (marked), extra lines, and the gate's verdict line with exit.
func (g Gate) Closing(who string, marked, extra []string, exit int) report.Closing {
	name := func(l string) string { return l }
	var lines []string
	// What holds the verdict first (slower, then undecided), then what
	// passed: a full block cuts its last lines.
	ms := slices.Clone(g.Metrics)
	rank := func(m Metric) int {
		switch {
		case m.Judged == JudgedSlower:
			return 0
		case !m.clear():
			return 1
		}
		return 2
	}
	slices.SortStableFunc(ms, func(a, b Metric) int { return rank(a) - rank(b) })
	for _, m := range ms {
		cm := m.compareMetric()
		cl := view.ChangeLine(cm, name)
		if w := m.Adjustment.Words(); w != "" {
			cl += ", " + w
		}
		v := view.VerdictWords(cm, m.threshold(g.ThresholdPct), "+")
		if m.Tail {
			v = "tail guard at +" + view.Pct(m.ThresholdPct) + "%: " + m.Judged
		}
		lines = append(lines, cl+": "+v)
	}
	head := fmt.Sprintf("verdicts at +%s%% (the gate's CI: %s per metric):", view.Pct(g.ThresholdPct), view.LevelPct(g.Level))
	return view.ClosingBlock(head, lines, marked, extra, g.Line(who, exit))
}

// Write writes c in format (view.Formats): the comparison's own view,
// then, in text, markdown and lkp, the gate's verdict after a blank line
// (Gate.Text); in json the comparison with "gate"; csv has no gate.
// Without a gate it is view.Write.
func (c Compared) Write(w io.Writer, format string) error {
	if format == "json" && c.Gate != nil {
		return compare.WriteJSON(w, c)
	}
	if err := view.Write(w, c.Result, format); err != nil {
		return err
	}
	if c.Gate != nil && format == "csv" {
		return c.Gate.CSV(w)
	}
	if c.Gate == nil {
		return nil
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return c.Gate.Text(w)
}

// CSV writes g as one row in the CSV view's columns (view.CSVGateRow),
// to follow the comparison's rows: its verdict, the code it exits with,
// the per-metric level it judged at, and a note with the threshold, the
// counts, the metrics proven slower and why it cannot judge.
func (g Gate) CSV(w io.Writer) error {
	reasons := g.Reasons
	g = termsafe.Copy(g) // strings from results, escaped for the terminal
	slower, notSlower, n := g.judgedCounts()
	note := fmt.Sprintf("threshold +%s%%; %d judged at %s CI each: %d slower, %d not slower, %d undecided",
		view.Pct(g.ThresholdPct), n, view.LevelPct(g.Level), slower, notSlower, n-slower-notSlower)
	if tails, clear, tthr := g.tailCounts(); tails > 0 {
		note += fmt.Sprintf("; of them %d %s judged by the tail guard at +%s%%: %d clear",
			tails, plural(tails, "tail metric", "tail metrics"), view.Pct(tthr), clear)
	}
	if len(g.Slower) > 0 {
		note += "; slower: " + strings.Join(g.Slower, ", ")
	}
	for _, r := range reasons { // one cell: a reason's lines joined, then escaped
		note += "; cannot judge: " + termsafe.Escape(strings.Join(strings.Fields(r), " "))
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(view.CSVGateRow(string(g.Verdict), g.ExitCode(), g.Level, note)); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// Write prints the check's report: JSON (Schema), or text at level,
// ending on the closing block: each judged metric's verdict, how the
// check sampled, where the new results are, and the verdict with the
// exit code.
func (r *Report) Write(w io.Writer, format string, level report.Level) error {
	if format == "json" {
		return compare.WriteJSON(w, r)
	}
	w = termsafe.Writer(w)
	var extra []string
	if r.Compare != nil {
		extra = append(extra, view.MachineLines(r.Compare.Result)...)
	}
	if q := r.Sequential; q != nil {
		extra = append(extra, q.Short())
	}
	if d := r.Replaced; d.judged() {
		extra = append(extra, d.Line(false))
	}
	if d := r.BaselineDropped; d.judged() {
		extra = append(extra, d.Line(true))
	}
	if d := r.PriorDropped; d.judged() {
		extra = append(extra, d.LineOf("earlier sessions of the new run"))
	}
	switch {
	case r.Results != "" && r.ResultsRemoved:
		extra = append(extra, "new run: "+r.Results+" (removed: --keep or --out keeps it)")
	case r.Results != "":
		extra = append(extra, "new run: "+r.Results)
	}
	if r.Compare == nil {
		return r.reasonsClosing(extra).Write(w, true)
	}
	for i, reason := range r.Gate.Reasons {
		if i == 2 {
			extra = append(extra, fmt.Sprintf("  … and %d more reasons (-v, --format json)", len(r.Gate.Reasons)-i))
			break
		}
		extra = append(extra, report.TextLines("cannot judge: "+reason)...)
	}
	switch level {
	case report.Verbose:
		if err := (Compared{Result: r.Compare.Result, Gate: &r.Gate}).Write(w, "text"); err != nil {
			return err
		}
		if q := r.Sequential; q != nil {
			if _, err := fmt.Fprintf(w, "\n%s\n", q.Line()); err != nil {
				return err
			}
		}
	case report.Normal:
		if err := view.Brief(w, r.Compare.Result); err != nil {
			return err
		}
	}
	return r.Gate.Closing("check", nil, extra, r.ExitCode).Write(w, level == report.Quiet)
}

// reasonsClosing is the closing block of a check with nothing compared:
// why it cannot judge (the first few reasons), extra, and the verdict.
func (r *Report) reasonsClosing(extra []string) report.Closing {
	var c report.Closing
	c.Add("rtload check: baseline " + r.Baseline)
	const most = 4
	for i, reason := range r.Gate.Reasons {
		if i == most && len(r.Gate.Reasons) > most+1 {
			c.Add(fmt.Sprintf("  … and %d more reasons (--format json lists them)", len(r.Gate.Reasons)-most))
			break
		}
		c.AddText("  cannot judge: " + reason)
	}
	for _, l := range extra {
		c.Add(l)
	}
	c.Add(r.Gate.Line("check", r.ExitCode))
	return c
}
