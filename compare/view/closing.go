package view

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
)

// The closing blocks of run, report and compare (report.Closing), built
// only from a Result's fields and summary.json's (a gate's, from the
// verdict's: verdict.Closing): every
// number in them is one --format json prints.

// MarkCount is one kind of mark a run carries, named as a sentence says
// it (results.MarkKind.Phrase): Trials are
// the marked trials, numbered from 1 as the text outputs print them
// (empty for a run-wide mark: degraded, stopped early, incomplete).
type MarkCount struct {
	Kind   string `json:"kind"`
	Trials []int  `json:"trials,omitempty"`
}

// RunMarks lists what makes s not the run asked for: run-wide degraded,
// then the trials marked invalid (the kernel changed what was measured, or
// a reader measured nothing), with a starved reader, with a reader's CPU
// shared, or with traffic not as specified, then stopped early and
// incomplete; empty for a run as
// asked. These are the marks that make a verdict undecided or a run
// unjudgeable (verdict.Unjudgeable lists them with their reasons).
func RunMarks(s *results.Summary) []MarkCount {
	var out []MarkCount
	if s.Degraded {
		out = append(out, MarkCount{Kind: results.MarkDegraded.Phrase()})
	}
	for _, k := range []results.MarkKind{results.MarkInvalid, results.MarkStarved, results.MarkShared, results.MarkTraffic} {
		var trials []int
		for i := range s.Trials {
			if compare.MarkText(k, &s.Trials[i]) != "" {
				trials = append(trials, s.Trials[i].Index+1)
			}
		}
		if len(trials) > 0 {
			out = append(out, MarkCount{Kind: k.Phrase(), Trials: trials})
		}
	}
	if s.Stopped {
		out = append(out, MarkCount{Kind: results.MarkStopped.Phrase()})
	}
	if s.InProgress {
		out = append(out, MarkCount{Kind: results.MarkIncomplete.Phrase()})
	}
	return out
}

// MarksLine says in one line what RunMarks found: "marks: none (…)" for a
// run as asked, else a line that starts with "*** NOT THE RUN ASKED FOR"
// and counts each kind's trials of total.
func MarksLine(marks []MarkCount, total int) string {
	if len(marks) == 0 {
		return "marks: none: no trial invalid, starved or with traffic not as specified; not degraded"
	}
	parts := make([]string, len(marks))
	for i, m := range marks {
		parts[i] = m.Kind
		if len(m.Trials) > 0 {
			parts[i] = fmt.Sprintf("%d of %d trials %s (%s)", len(m.Trials), total, m.Kind, trialList(m.Trials))
		}
	}
	return "*** NOT THE RUN ASKED FOR: " + strings.Join(parts, "; ") + MarksHint
}

// MarksHint ends MarksLine: where to read why, and what --strict does.
const MarksHint = ": why in the *** lines (rtload report -v); --strict exits 4"

// trialList prints trial numbers as ranges: "1-2, 4".
func trialList(ts []int) string {
	var parts []string
	for i := 0; i < len(ts); {
		j := i
		for j+1 < len(ts) && ts[j+1] == ts[j]+1 {
			j++
		}
		switch {
		case j > i:
			parts = append(parts, strconv.Itoa(ts[i])+"–"+strconv.Itoa(ts[j]))
		default:
			parts = append(parts, strconv.Itoa(ts[i]))
		}
		i = j + 1
	}
	s := "trial "
	if len(ts) > 1 {
		s = "trials "
	}
	return s + strings.Join(parts, ", ")
}

// groupOf is the variant (":reader") of column label in r.
func groupOf(r *compare.Result, label string) string {
	for _, c := range r.Columns {
		if c.Label == label {
			return c.Group
		}
	}
	return label
}

// what names a metric inside a change line: "per call" for the mean
// per-call cost (seed 000's words), else its name.
func what(m compare.Metric) string {
	if m.Name == "mean per-call cost" {
		return "per call"
	}
	return m.Name
}

// ChangeLine is a metric's change against its baseline in one line, as
// seed 000 would quote it: "recvmsg +8.3% per call [+5.1, +11.6] vs
// recvfrom, n = 600 ABBA block pairs", names from name (a column label to
// the name to print), its numbers the Interval's (Metric.Interval: the
// verdicts' rule); "…: no interval (why)" without one.
func ChangeLine(m compare.Metric, name func(string) string) string {
	iv := m.Interval
	if iv == nil || iv.PointPct == nil || iv.LowPct == nil || iv.HighPct == nil {
		why := m.MethodNote
		if iv != nil && len(iv.Notes) > 0 {
			why = strings.Join(iv.Notes, "; ")
		}
		why = strings.ReplaceAll(why, ": no interval", "")
		return fmt.Sprintf("%s vs %s, %s: no interval: %s", name(m.Column), name(m.Baseline), what(m), why)
	}
	l := fmt.Sprintf("%s %+.1f%% %s [%+.1f, %+.1f] vs %s", name(m.Column), *iv.PointPct, what(m), *iv.LowPct, *iv.HighPct, name(m.Baseline))
	if iv.N != "" {
		l += ", n = " + iv.N
	}
	return l
}

// verdictWords is how a closing block says m's verdict at threshold thr.
func verdictWords(m compare.Metric, thr float64) string { return VerdictWords(m, thr, "±") }

// VerdictWords is how a closing block says m's verdict at threshold thr
// (in %; sign as VerdictAt), and, when it is undecided at the threshold
// while its interval lies wholly on the worse side of 0, both answers
// the run gives (issue 31: "+3.8% [+2.8, +4.8] … undecided at ±3%" read
// as "we don't know"): "slower (CI excludes 0); beyond +3%: undecided".
// A metric undecided for an invalid trial stays "undecided at …".
func VerdictWords(m compare.Metric, thr float64, sign string) string {
	if !WorseNotBeyond(m) {
		return VerdictAt(m.Verdict, thr, sign)
	}
	if m.HigherIsBetter {
		return "worse (CI excludes 0); beyond -" + fmtPct(thr) + "%: undecided"
	}
	return "slower (CI excludes 0); beyond +" + fmtPct(thr) + "%: undecided"
}

// MachineGuardWords begin the note of a verdict the machine guard held
// undecided (verdict's machineGuard): its interval is not read as slower.
const MachineGuardWords = "machine guard:"

// WorseNotBeyond reports whether m is undecided at its threshold while
// its whole interval lies on the worse side of 0 (and no invalid trial
// nor the machine guard made it undecided): slower, not shown beyond the
// threshold.
func WorseNotBeyond(m compare.Metric) bool {
	iv := m.Interval
	if m.Verdict != compare.VerdictUndecided || iv == nil || iv.LowPct == nil || iv.HighPct == nil || strings.Contains(m.MethodNote, ": invalid: ") ||
		strings.HasPrefix(m.MethodNote, MachineGuardWords) {
		return false
	}
	if m.HigherIsBetter {
		return *iv.HighPct < 0
	}
	return *iv.LowPct > 0
}

// VerdictAt is how a closing block says a metric's verdict (Metric.Verdict)
// at threshold thr (in %), with the undecided threshold's sign: "±" for
// compare's three-way verdicts, "+" for a gate's: "slower: the whole CI
// beyond +3%", "undecided at +3%".
func VerdictAt(verdict string, thr float64, sign string) string {
	t := fmtPct(thr)
	switch verdict {
	case compare.VerdictSlower:
		return "slower: the whole CI beyond +" + t + "%"
	case compare.VerdictNotSlower:
		return "not slower: the whole CI below +" + t + "%"
	case compare.VerdictSame:
		return "same: the whole CI within ±" + t + "%"
	}
	return "undecided at " + sign + t + "%"
}

// RunClosing is the closing block of `rtload run` and `rtload report`
// for the one-run Result r of summary s in dir: each column's headline
// figure (its primary metric's value, with its wakeup latency p99), every
// other variant's change against the first (ChangeLine: seed 000's
// recvmsg against recvfrom, with its interval and n) and its verdict, the
// marks (MarksLine), and the results directory. saveErr, when the summary
// could not be saved in full, ends it instead of the path.
func RunClosing(r *compare.Result, s *results.Summary, dir, saveErr string) report.Closing {
	var c report.Closing
	prim := r.Primary()
	name := func(label string) string { return groupOf(r, label) }
	var figures, changes []string
	for i, m := range r.Metrics {
		if !prim[i] {
			continue
		}
		figures = append(figures, fmt.Sprintf("%s: %s %s %s%s", name(m.Column), m.Name, fmtVal(m.Value, m.Unit), m.Unit, wakeupOf(r, m.Column, m.Name)))
		if m.Verdict != compare.VerdictBaseline {
			changes = append(changes, ChangeLine(m, name)+": "+verdictWords(m, r.ThresholdPct))
		}
	}
	const most = 3
	if len(figures) > most {
		figures = append(figures[:most-1], fmt.Sprintf("… and %d more columns (rtload report -v)", len(figures)-most+1))
	}
	if len(changes) > most {
		changes = append(changes[:most-1], fmt.Sprintf("… and %d more changes (rtload compare %s)", len(changes)-most+1, dir))
	}
	for _, l := range figures {
		c.Add(l)
	}
	for _, l := range changes {
		c.Add(l)
	}
	never := NeverRan(s)
	if len(changes) == 0 && len(figures) > 0 && len(never) == 0 {
		c.Add("one variant: nothing compared (variants: in the scenario compare them in one run)")
	}
	if len(never) > 0 {
		c.Add(NeverRanLine(s, never))
	}
	c.Add(MarksLine(RunMarks(s), len(s.Trials)))
	if saveErr != "" {
		c.Add("results NOT saved in full: " + saveErr)
		return c
	}
	c.Add("results: " + dir)
	return c
}

// NeverRan lists the variants of s's scenario (Summary.Spec) that no
// trial ran: a soak stopped before its first slice ended, a run stopped
// in its first round. Empty when every variant ran, or when the summary
// records no scenario.
func NeverRan(s *results.Summary) []string {
	var spec struct {
		Variants []struct {
			Name string `json:"name"`
		} `json:"variants"`
	}
	if b, err := json.Marshal(s.Spec); err != nil || json.Unmarshal(b, &spec) != nil {
		return nil
	}
	var out []string
	for _, v := range spec.Variants {
		if !slices.ContainsFunc(s.Trials, func(t results.Trial) bool { return t.Variant == v.Name }) {
			out = append(out, v.Name)
		}
	}
	return out
}

// NeverRanLine says which variants never ran, and why they might not
// have: the run stopped before their turn (a soak's slice, a round).
func NeverRanLine(s *results.Summary, never []string) string {
	var spec struct {
		Duration, Slice any
	}
	if b, err := json.Marshal(s.Spec); err == nil {
		_ = json.Unmarshal(b, &spec)
	}
	why := "the run stopped before their turn"
	if d, ok := durationOf(spec.Duration); ok && d == 0 {
		if sl, ok := durationOf(spec.Slice); ok && sl > 0 {
			why = fmt.Sprintf("the soak stopped before its slice of %v ended (--set slice=… alternates sooner)", sl)
		} else {
			why = "a soak without slices runs its first variant only (--set slice=… alternates them)"
		}
	}
	noun, them := "variant "+strings.Join(never, ", ")+" never ran", "it"
	if len(never) > 1 {
		noun, them = "variants "+strings.Join(never, ", ")+" never ran", "them"
	}
	return "*** " + strings.ToUpper(noun[:1]) + noun[1:] + ": " + why + "; nothing compares with " + them
}

// durationOf reads a duration as summary.json holds the scenario's:
// "1m0s", or nanoseconds.
func durationOf(v any) (time.Duration, bool) {
	switch x := v.(type) {
	case string:
		d, err := time.ParseDuration(x)
		return d, err == nil
	case float64:
		return time.Duration(x), true
	}
	return 0, false
}

// wakeupOf is ", wakeup latency p99 X µs" for column col from its
// headline metric, "" when it has none or it is the primary metric.
func wakeupOf(r *compare.Result, col, primary string) string {
	if primary == "wakeup latency p99" {
		return ""
	}
	for _, m := range r.Metrics {
		if m.Column == col && m.Name == "wakeup latency p99" {
			return fmt.Sprintf(", wakeup latency p99 %s %s", fmtVal(m.Value, m.Unit), m.Unit)
		}
	}
	return ""
}

// Closing is the closing block of `rtload compare` without a gate: one
// line per primary metric of every column against its baseline with its
// three-way verdict, the marks of any run that was not the run asked for
// (marked: one entry per run and kind), the machine's own change
// (MachineLines), and last the overall verdict:
// what the primary metrics' verdicts add up to. A gate's closing block is
// verdict.Closing.
func Closing(r *compare.Result, marked []string) report.Closing {
	lines, verdicts := closingMetrics(r)
	head := fmt.Sprintf("verdicts at ±%s%% (95%% CI of each change):", fmtPct(r.ThresholdPct))
	return ClosingBlock(head, lines, marked, MachineLines(r), overallLine(verdicts, r.ThresholdPct))
}

// ClosingBlock is a comparison's closing block: head (when there are
// metric lines) and the metric lines, as many as fit report.MaxClosingLines
// with the rest ("… and N more"; at least one verdict line), the runs not
// as asked for (marked), extra lines (a check's sampling, where its new
// results went) and last, the verdict line.
func ClosingBlock(head string, lines, marked, extra []string, last string) report.Closing {
	var c report.Closing
	most := report.MaxClosingLines - 2 - len(extra)
	if len(marked) > 0 {
		most--
	}
	switch {
	case len(lines) > 1 && most < 2:
		// Room for one line: a verdict, not only "… and N more".
		lines = []string{lines[0] + fmt.Sprintf(" (and %d more: -v prints every verdict)", len(lines)-1)}
	case len(lines) > most:
		lines = append(lines[:most-1:most-1], fmt.Sprintf("… and %d more (-v prints every verdict)", len(lines)-most+1))
	}
	if len(lines) > 0 {
		c.Add(head)
	}
	for _, l := range lines {
		c.Add("  " + l)
	}
	if len(marked) > 0 {
		c.Add("*** NOT THE RUNS ASKED FOR: " + strings.Join(marked, "; "))
	}
	for _, l := range extra {
		c.Add(l)
	}
	c.Add(last)
	return c
}

// closingMetrics are the metric lines of a compare closing block and
// their verdicts: every column's primary metric against its baseline.
func closingMetrics(r *compare.Result) (lines, verdicts []string) {
	name := func(l string) string { return l }
	prim := r.Primary()
	for i, m := range r.Metrics {
		if !prim[i] || m.Verdict == compare.VerdictBaseline {
			continue
		}
		lines = append(lines, ChangeLine(m, name)+": "+verdictWords(m, r.ThresholdPct))
		v := m.Verdict
		if WorseNotBeyond(m) {
			v = verdictWorseNotBeyond
		}
		verdicts = append(verdicts, v)
	}
	return lines, verdicts
}

// verdictWorseNotBeyond stands, among overallLine's verdicts, for an
// undecided one whose interval excludes 0 on the worse side.
const verdictWorseNotBeyond = compare.VerdictUndecided + ", worse"

// overallLine adds up the primary metrics' verdicts without a gate: slower
// when one is slower, same when every one is the same, not slower when
// every one is not slower or the same, else undecided. Each verdict is at
// 95% on its own: a gate (--fail-on slower) holds them together.
func overallLine(verdicts []string, thr float64) string {
	if len(verdicts) == 0 {
		return "verdict: none: no column has a baseline to compare with"
	}
	n := func(v ...string) int {
		k := 0
		for _, x := range verdicts {
			if slices.Contains(v, x) {
				k++
			}
		}
		return k
	}
	counts := fmt.Sprintf("%d slower, %d not slower, %d same, %d undecided of %d", n(compare.VerdictSlower), n(compare.VerdictNotSlower), n(compare.VerdictSame), n(compare.VerdictUndecided, verdictWorseNotBeyond), len(verdicts))
	if k := n(verdictWorseNotBeyond); k > 0 {
		counts += fmt.Sprintf(", %d of them slower with the CI excluding 0", k)
	}
	var v string
	switch {
	case n(compare.VerdictSlower) > 0:
		v = "SLOWER"
	case n(compare.VerdictSame) == len(verdicts):
		v = "SAME"
	case n(compare.VerdictNotSlower, compare.VerdictSame) == len(verdicts):
		v = "NOT SLOWER"
	default:
		v = "UNDECIDED"
	}
	return fmt.Sprintf("verdict: %s at ±%s%% (%s; each at 95%%: --fail-on slower gates them together)", v, fmtPct(thr), counts)
}

// Brief writes what a person reads of r: the runs and what differs
// between them (with every warning), the seed's table once (its sparse
// tail folded: report.FoldBelow), each column's headline values (mean and
// p99 per-call cost, wakeup latency p99 and max, as the headline metrics
// hold them), and the probes' runs. Text prints the rest; the closing
// block (Closing) follows either.
func Brief(w io.Writer, r *compare.Result) error {
	r = termsafe.Copy(r)
	var top, grid strings.Builder
	head(r, &top, false)
	if rows := headlineRows(r); len(rows) > 0 {
		grid.WriteByte('\n')
		report.Grid(&grid, "headline values, rounds merged (-v: each change with its CI and method, percentiles, variance split)", labels(r), rows)
	}
	writeProbeRuns(r, &grid)
	var b strings.Builder
	b.WriteString(top.String())
	if len(r.Columns) > 0 && hasPerCall(r) {
		// The table gives up rows to a long header (a kernel A/B's
		// metadata) so that the whole fits BriefLines with its closing
		// block, but keeps at least minBriefRows.
		rows := BriefLines - strings.Count(top.String(), "\n") - strings.Count(grid.String(), "\n") - briefClosingLines - briefTableLines
		b.WriteByte('\n')
		if err := table(r, &b, max(minBriefRows, min(report.BriefRows, rows))); err != nil {
			fmt.Fprintf(&b, "per-call histogram table skipped: %v\n", err)
		}
	}
	b.WriteString(grid.String())
	writeSessions(r, &b)
	_, err := io.WriteString(w, b.String())
	return err
}

// BriefLines is the screen Brief and its closing block aim to fit:
// `rtload compare A B` prints at most about this many lines by default.
const BriefLines = 60

// The parts of Brief's screen beside the table's bucket rows: the
// closing block with its blank line (two metrics, the verdict, one line
// spare), the table's own lines (a blank line, title, rows line, fold
// line, two header lines, two rules, the folded, overflow and Total rows),
// and the fewest bucket rows it keeps.
const (
	briefClosingLines = 6
	briefTableLines   = 11
	minBriefRows      = 12
)

// briefMetrics are the metrics Brief prints a row of, by name.
var briefMetrics = []string{"mean per-call cost", "p99 per-call cost", "wakeup latency p99", "wakeup latency max"}

// headlineRows are Brief's rows: one per briefMetrics entry (and unit)
// some column has, a cell per column with its value; the mean per-call
// cost in ticks is left out where it is in ns too.
func headlineRows(r *compare.Result) [][]string {
	var rows [][]string
	ns := slices.ContainsFunc(r.Metrics, func(m compare.Metric) bool { return m.Name == "mean per-call cost" && m.Unit == "ns" })
	for _, key := range metricNames(r) {
		if ns && strings.HasPrefix(key, "mean per-call cost (") && key != "mean per-call cost (ns)" {
			continue
		}
		var row []string
		for _, c := range r.Columns {
			cell := "-"
			for _, m := range r.Metrics {
				if m.Column == c.Label && m.Key() == key && m.Probe == "" && slices.Contains(briefMetrics, m.Name) {
					cell = fmtVal(m.Value, m.Unit)
				}
			}
			row = append(row, cell)
		}
		if slices.ContainsFunc(row, func(c string) bool { return c != "-" }) {
			rows = append(rows, append([]string{key}, row...))
		}
	}
	return rows
}
