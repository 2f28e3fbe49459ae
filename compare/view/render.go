package view

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
)

// Formats are the output formats Write accepts.
var Formats = []string{"text", "json", "csv", "markdown", "lkp"}

// Write renders r to w in format: "text" (aligned, the seed's table
// first), "json" (Result, indented), "csv" (one row per column × metric),
// "markdown" (tables, the histogram in a code block) or "lkp" (the 0-day
// robot's `lkp compare` layout, see LKP).
func Write(w io.Writer, r *compare.Result, format string) error {
	switch format {
	case "text", "":
		return Text(w, r)
	case "json":
		return JSON(w, r)
	case "csv":
		return CSV(w, r)
	case "markdown", "md":
		return Markdown(w, r)
	case "lkp":
		return LKP(w, r)
	}
	return fmt.Errorf("compare: format %q unknown (allowed: %s)", format, strings.Join(Formats, ", "))
}

// JSON writes r as indented JSON.
func JSON(w io.Writer, r *compare.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// CSVHeader is the first row of CSV output.
var CSVHeader = []string{"metric", "unit", "higher_is_better", "column", "baseline", "value", "baseline_value",
	"change_pct", "diff", "ci_low", "ci_high", "confidence", "method", "method_note", "verdict"}

// CSV writes one row per column × headline metric under CSVHeader; empty
// cells mean "none" (no change for a baseline, no interval). change_pct
// and diff are the values' (Metric.ChangePct, Diff), ci_low and ci_high
// the interval's mapped onto the baseline value (CILow, CIHigh). A gate
// adds its own row after them (CSVGateRow).
func CSV(w io.Writer, r *compare.Result) error {
	r = termsafe.Copy(r) // strings from results, escaped for the terminal
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', 10, 64)
	}
	for _, m := range r.Metrics {
		conf := ""
		if m.CILow != nil {
			conf = strconv.FormatFloat(compare.Confidence, 'g', -1, 64)
		}
		if err := cw.Write([]string{m.Name, m.Unit, strconv.FormatBool(m.HigherIsBetter), m.Column, m.Baseline,
			strconv.FormatFloat(m.Value, 'g', 10, 64), strconv.FormatFloat(m.BaselineValue, 'g', 10, 64),
			opt(m.ChangePct), opt(m.Diff), opt(m.CILow), opt(m.CIHigh), conf, m.Method, m.MethodNote, m.Verdict}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// CSVGateRow is the row a gate (compare --fail-on) adds under CSV's
// rows, in CSVHeader's columns: metric "gate", unit "exit code", value
// the code the gate exits with, confidence the per-metric level it judged
// at (0.975 for two metrics: 95% family-wise), method "fail-on slower",
// method_note note (the threshold first: "threshold +3%; …") and verdict
// the gate's ("not slower", "slower", "undecided", "cannot judge").
func CSVGateRow(verdict string, exitCode int, level float64, note string) []string {
	row := make([]string, len(CSVHeader))
	for i, h := range CSVHeader {
		switch h {
		case "metric":
			row[i] = "gate"
		case "unit":
			row[i] = "exit code"
		case "value":
			row[i] = strconv.Itoa(exitCode)
		case "confidence":
			row[i] = strconv.FormatFloat(level, 'g', 10, 64)
		case "method":
			row[i] = "fail-on slower"
		case "method_note":
			row[i] = note
		case "verdict":
			row[i] = verdict
		}
	}
	return row
}

// Text writes r as aligned text: the runs and what differs between them,
// the seed's histogram table, the percentile tables, the probes' runs in
// seed 001's layout and the headline metrics. Tables with nothing in them
// are left out: wakeup-only runs (and other tools' files) have no per-call
// table.
//
// Text, Markdown, CSV and LKP escape every string of r for the terminal
// first (termsafe.Copy): names, notes and facts read from results other
// people wrote cannot move the cursor, retitle the terminal or forge a
// line. JSON needs no escaping.
func Text(w io.Writer, r *compare.Result) error {
	r = termsafe.Copy(r)
	var b strings.Builder
	writeHead(r, &b, "")
	if len(r.Columns) > 0 {
		labels := labels(r)
		if hasPerCall(r) {
			b.WriteByte('\n')
			if err := histogram(r, &b); err != nil {
				fmt.Fprintf(&b, "per-call histogram table skipped: %v\n", err)
			}
			b.WriteByte('\n')
			report.Grid(&b, "per-call cost percentiles ("+r.TickUnit+"; "+pctSource(r, func(c compare.Column) compare.Percentiles { return c.PerCallTicks })+")",
				labels, pctRows(r, func(c compare.Column) compare.Percentiles { return c.PerCallTicks }, "%.0f"))
		}
		if hasWakeups(r) {
			b.WriteByte('\n')
			report.Grid(&b, "wakeup latency percentiles (µs, wake − deadline; "+pctSource(r, func(c compare.Column) compare.Percentiles { return c.WakeupUs })+")",
				labels, pctRows(r, func(c compare.Column) compare.Percentiles { return c.WakeupUs }, "%.1f"))
		}
	}
	writeProbeRuns(r, &b)
	if len(r.Metrics) > 0 {
		b.WriteByte('\n')
		fmt.Fprintf(&b, "headline metrics: change against the first run of each variant, %.0f%% CI of the change, verdict at ±%s%%\n", compare.Confidence*100, fmtPct(r.ThresholdPct))
		b.WriteString(changeNote)
		rows := [][]string{{"metric", "column", "value", "change", fmt.Sprintf("%.0f%% CI", compare.Confidence*100), "verdict", "method"}}
		for _, name := range metricNames(r) {
			first := true
			for _, m := range r.Metrics {
				if m.Key() != name {
					continue
				}
				label := ""
				if first {
					label = name
				}
				first = false
				rows = append(rows, []string{label, m.Column, fmtVal(m.Value, m.Unit), change(m), ci(m), m.Verdict, m.MethodNote})
			}
		}
		report.Aligned(&b, rows, []bool{false, false, true, true, true, false, false})
		b.WriteString(methodsNote)
		writeVerdicts(r, &b)
		writeVariance(r, &b)
	}
	interleavedText(r, &b)
	profileText(r, &b)
	_, err := io.WriteString(w, b.String())
	return err
}

// hasPerCall reports whether any column holds per-call samples.
func hasPerCall(r *compare.Result) bool {
	for _, c := range r.Columns {
		if c.PerCall.Total > 0 || c.PerCallTicks.Count > 0 {
			return true
		}
	}
	return false
}

// hasWakeups reports whether any column holds wakeup-latency samples.
func hasWakeups(r *compare.Result) bool {
	for _, c := range r.Columns {
		if c.WakeupUs.Count > 0 {
			return true
		}
	}
	return false
}

// probeFormats print a probe metric's per-round values as report does.
var probeFormats = map[string]string{"s": "%.3f", "KB/s": "%.0f", "ns": "%.0f"}

// writeProbeRuns prints, for every probe metric (hackbench time and sys
// time, fstime KB/s, tap ns per write), seed 001's block per column:
// "Runs: …", "Min: … Max: … Mean: … Std Dev: …" (Std Dev over n, as the
// seed) and, against the baseline, its % change line ("4.57% slower than
// …", "(within the std dev noise)"), with report's seed 001 printer.
func writeProbeRuns(r *compare.Result, b *strings.Builder) {
	for _, name := range metricNames(r) {
		var ms []compare.Metric
		for _, m := range r.Metrics {
			if m.Probe != "" && m.Key() == name && len(m.Rounds) > 0 {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			continue
		}
		format := probeFormats[ms[0].Unit]
		if format == "" {
			format = "%.1f"
		}
		fmt.Fprintf(b, "\n%s probe: %s, every run (seed 001's layout; Std Dev over n)\n", ms[0].Probe, name)
		tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
		for _, m := range ms {
			var base []float64
			if m.Verdict != compare.VerdictBaseline {
				for _, x := range r.Metrics {
					if x.Column == m.Baseline && x.Key() == name {
						base = x.Rounds
					}
				}
			}
			report.WriteSamples(tw, m.Column, format, m.Rounds, base, m.Baseline, m.HigherIsBetter)
		}
		tw.Flush()
	}
}

// changeNote says what the table's change and interval are: one
// computation, the verdicts' (change), not the merged values'.
const changeNote = `  change and CI: B/A − 1 in %, both from the samples the method names, as the
  verdicts print them; value: rounds merged; a change with no CI is the values'
`

// methodsNote states how every interval and verdict is computed.
const methodsNote = `methods: t = Student's t on log values of independent units (processes when
  both sides have ≥ 2; a paired t on per-process differences when the columns
  ran in the same processes; else rounds, with a note that the process level
  was not measured), as a change B/A − 1; poisson = exact conditional binomial
  interval of a rate ratio. Calls and wakeups are never samples: they share
  the machine's state of the moment. Verdict against the threshold T: slower =
  whole CI beyond +T in the worse direction; not slower = whole CI on the
  better side of +T; same = whole CI within ±T; undecided = anything else.
`

// Markdown writes r as Markdown: a runs table, warnings, the seed's table
// in a code block, percentile tables and the metrics table.
func Markdown(w io.Writer, r *compare.Result) error {
	r = termsafe.Copy(r) // strings from results, escaped for the terminal
	var b strings.Builder
	b.WriteString("# rtload compare\n\n| run | dir | scenario | kernel | start | trials |\n|---|---|---|---|---|---|\n")
	for _, ri := range r.Runs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d |\n", md(ri.Label), md(ri.Dir), md(ri.Scenario), md(ri.Kernel), startString(ri.Start), ri.Trials)
	}
	if len(r.Warnings)+len(r.Info)+len(r.Notes) > 0 {
		b.WriteByte('\n')
		for _, d := range r.Warnings {
			if isMark(d) {
				for _, l := range markLines(r, d) {
					fmt.Fprintf(&b, "- **WARNING**: %s\n", md(strings.TrimPrefix(l, "WARNING: ")))
				}
				continue
			}
			fmt.Fprintf(&b, "- **WARNING**: runs differ in %s: %s\n", md(d.Field), md(values(r, d)))
		}
		for _, d := range r.Info {
			fmt.Fprintf(&b, "- info: runs differ in %s (expected): %s\n", md(d.Field), md(values(r, d)))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- note: %s\n", md(n))
		}
	}
	if len(r.Metadata) > 0 {
		b.WriteString("\n## Metadata that differs\n\n| fact |")
		for _, ri := range r.Runs {
			if !ri.Foreign {
				fmt.Fprintf(&b, " %s |", md(ri.Label))
			}
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Metadata[0].Values)) + "\n")
		for _, d := range r.Metadata {
			b.WriteString("| " + md(d.Field) + " |")
			for _, v := range d.Values {
				b.WriteString(" " + md(v) + " |")
			}
			b.WriteByte('\n')
		}
	}
	if len(r.Columns) > 0 {
		type pctTable struct {
			title  string
			get    func(c compare.Column) compare.Percentiles
			format string
		}
		var tables []pctTable
		if hasPerCall(r) {
			b.WriteString("\n## Per-call cost histogram\n\n```text\n")
			if err := histogram(r, &b); err != nil {
				fmt.Fprintf(&b, "skipped: %v\n", err)
			}
			b.WriteString("```\n")
			tables = append(tables, pctTable{"Per-call cost percentiles (" + r.TickUnit + ")", func(c compare.Column) compare.Percentiles { return c.PerCallTicks }, "%.0f"})
		}
		if hasWakeups(r) {
			tables = append(tables, pctTable{"Wakeup latency percentiles (µs)", func(c compare.Column) compare.Percentiles { return c.WakeupUs }, "%.1f"})
		}
		for _, t := range tables {
			fmt.Fprintf(&b, "\n## %s\n\n|  |", t.title)
			for _, l := range labels(r) {
				fmt.Fprintf(&b, " %s |", md(l))
			}
			b.WriteString("\n|---|" + strings.Repeat("---:|", len(r.Columns)) + "\n")
			for _, row := range pctRows(r, t.get, t.format) {
				b.WriteString("| " + strings.Join(row, " | ") + " |\n")
			}
		}
	}
	if len(r.Metrics) > 0 {
		fmt.Fprintf(&b, "\n## Headline metrics\n\n| metric | column | value | change | %.0f%% CI | verdict | method |\n|---|---|---:|---:|---:|---|---|\n", compare.Confidence*100)
		for _, name := range metricNames(r) {
			for _, m := range r.Metrics {
				if m.Key() == name {
					fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", md(name), md(m.Column), fmtVal(m.Value, m.Unit), change(m), ci(m), m.Verdict, md(m.MethodNote))
				}
			}
		}
		b.WriteString("\n" + strings.TrimSpace(strings.ReplaceAll(changeNote, "\n  ", " ")) + "\n")
		b.WriteString("\n" + strings.ReplaceAll(methodsNote, "\n  ", " "))
		var vb strings.Builder
		writeVerdicts(r, &vb)
		writeVariance(r, &vb)
		if vb.Len() > 0 {
			b.WriteString("\n## Verdicts and variance split\n\n```" + vb.String() + "```\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func md(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func writeHead(r *compare.Result, b *strings.Builder, _ string) { head(r, b, true) }

// head is writeHead; unit says which clock the per-call unit is (Brief
// leaves it to the table's title).
func head(r *compare.Result, b *strings.Builder, unit bool) {
	fmt.Fprintf(b, "rtload compare: %d runs\n", len(r.Runs))
	rows := make([][]string, 0, len(r.Runs))
	for _, ri := range r.Runs {
		desc := "scenario " + compare.OrNone(ri.Scenario) + ", kernel " + ri.Kernel + fmt.Sprintf(", %d trials", ri.Trials)
		if s := startString(ri.Start); s != "" {
			desc += ", " + s
		}
		if ri.Degraded {
			desc += ", DEGRADED"
		}
		if ri.Stopped {
			desc += ", STOPPED EARLY"
		}
		if ri.InProgress {
			desc += ", INCOMPLETE (checkpoint of a run that never finished)"
		}
		rows = append(rows, []string{"  " + ri.Label, ri.Dir, desc})
	}
	report.Aligned(b, rows, []bool{false, false, false})
	if unit && len(r.Runs) > 0 && hasPerCall(r) {
		fmt.Fprintf(b, "  per-call unit: %s (%s)\n", r.TickUnit, clockString(r.Runs[0].Clock))
	}
	writeMetadata(r, b)
	warnings, info, folded := splitWarnings(r)
	if len(info)+len(warnings)+len(r.Notes) > 0 || folded != "" {
		b.WriteByte('\n')
	}
	for _, d := range info {
		fmt.Fprintf(b, "info: runs differ in %s (expected): %s\n", d.Field, values(r, d))
	}
	b.WriteString(folded)
	for _, d := range warnings {
		if isMark(d) {
			for _, l := range markLines(r, d) {
				b.WriteString(l + "\n")
			}
			continue
		}
		fmt.Fprintf(b, "WARNING: runs differ in %s: %s\n", d.Field, values(r, d))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
}

func startString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

func clockString(c results.ClockInfo) string {
	switch {
	case c.Kind == "tsc" && c.Hz > 0:
		return fmt.Sprintf("tsc at %.3f MHz; TSC ticks are not core cycles", c.Hz/1e6)
	case c.Kind == "":
		return "clock unknown"
	}
	return c.Kind
}

// values prints a Difference as label="value" pairs.
func values(r *compare.Result, d compare.Difference) string {
	parts := make([]string, len(d.Values))
	for i, v := range d.Values {
		l := strconv.Itoa(i)
		if i < len(r.Runs) {
			l = r.Runs[i].Label
		}
		parts[i] = l + "=" + strconv.Quote(v)
	}
	return strings.Join(parts, " ")
}

func labels(r *compare.Result) []string {
	l := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		l[i] = c.Label
	}
	return l
}

// histogram prints the seed's table: the all-calls per-call histogram,
// one column per (variant, run).
func histogram(r *compare.Result, b *strings.Builder) error { return table(r, b, 0) }

// table is histogram, its sparse tail folded into one row after at most
// rows bucket rows when rows > 0 (report.FoldBelow, as report.Brief folds
// it); 0 prints every row.
func table(r *compare.Result, b *strings.Builder, rows int) error {
	cols := make([]report.Column, len(r.Columns))
	merged := false
	for i, c := range r.Columns {
		cols[i] = report.Column{Label: c.Label, Hist: c.PerCall}
		merged = merged || c.Rounds > 1
	}
	unit := report.ShortUnit(r.TickUnit)
	title := "per-call cost in " + r.TickUnit + ", all calls (data + EAGAIN)"
	if merged {
		title += ", rounds merged"
	}
	opt := report.TableOptions{Title: title, Unit: unit}
	if rows > 0 {
		opt.FoldBelow, opt.MaxRows, opt.FoldHint = report.FoldBelow, rows, report.FoldHint
	}
	return report.Table(b, cols, opt)
}

func pctSource(r *compare.Result, get func(c compare.Column) compare.Percentiles) string {
	var srcs []string
	for _, c := range r.Columns {
		if s := get(c).Source; s != "" && !slices.Contains(srcs, s) {
			srcs = append(srcs, s)
		}
	}
	names := map[string]string{
		"hdr": "HdrHistogram", "hdr worst round": "HdrHistogram, worst round (no HDR to merge)",
		"linear": "bucket lower edges",
	}
	for i, s := range srcs {
		srcs[i] = names[s]
	}
	if len(srcs) == 0 {
		return "no samples"
	}
	return strings.Join(srcs, " / ")
}

func pctRows(r *compare.Result, get func(c compare.Column) compare.Percentiles, format string) [][]string {
	names := []string{"count", "p50", "p90", "p99", "p99.9", "max"}
	rows := make([][]string, len(names))
	for i, n := range names {
		rows[i] = []string{n}
		for _, c := range r.Columns {
			p := get(c)
			if p.Count == 0 {
				rows[i] = append(rows[i], "-")
				continue
			}
			v := []float64{float64(p.Count), p.P50, p.P90, p.P99, p.P999, p.Max}[i]
			f := format
			if i == 0 {
				f = "%.0f"
			}
			cell := fmt.Sprintf(f, v)
			if i > 0 && i < 5 && p.Source == "linear" && c.PerCall.Total > 0 && v >= float64(c.PerCall.Overflow) {
				cell += "+" // the overflow bucket, as the table prints it
			}
			rows[i] = append(rows[i], cell)
		}
	}
	return rows
}

func metricNames(r *compare.Result) []string { return compare.MetricNames(r.Metrics) }

// fmtVal prints v with the precision its unit deserves.
func fmtVal(v float64, unit string) string {
	switch unit {
	case "s":
		return strconv.FormatFloat(v, 'f', 3, 64)
	case "KB/s":
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// change prints m's change in the headline table: the interval's own
// point (Metric.Interval.PointPct, B/A − 1 from the samples the method
// names: per-process means, block pairs, event counts) when m has an
// interval, so that change and interval come from one computation; else
// the change of the values, rounds merged (Metric.ChangePct), with no
// interval beside it.
func change(m compare.Metric) string {
	switch {
	case m.Verdict == compare.VerdictBaseline:
		return "baseline"
	case hasInterval(m) && m.Interval.PointPct != nil:
		return fmt.Sprintf("%+.2f%%", *m.Interval.PointPct)
	case hasInterval(m) || m.ChangePct == nil:
		return "-" // no finite point (a rate over no baseline event)
	}
	return fmt.Sprintf("%+.2f%%", *m.ChangePct)
}

// ci prints m's interval in % (Metric.Interval: the one the verdict lines
// print), "-" without one; "+∞" is a rate's missing upper bound.
func ci(m compare.Metric) string {
	if !hasInterval(m) {
		return "-"
	}
	hi := "+∞"
	if h := m.Interval.HighPct; h != nil {
		hi = fmt.Sprintf("%+.2f%%", *h)
	}
	return fmt.Sprintf("[%+.2f%%, %s]", *m.Interval.LowPct, hi)
}

// hasInterval reports whether m has a change with its interval (a lower
// bound at least: a rate over no baseline event has no upper one).
func hasInterval(m compare.Metric) bool {
	return m.Verdict != compare.VerdictBaseline && m.Interval != nil && m.Interval.LowPct != nil
}
