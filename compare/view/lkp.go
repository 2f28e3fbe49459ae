package view

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/report"
)

// The widths of lkp-tests' compare table (lib/compare.rb: ABS_WIDTH,
// REL_WIDTH, ERR_WIDTH).
const (
	lkpAbsWidth = 10
	lkpRelWidth = 10
	lkpErrWidth = 6
)

// LKPRule states the change rule `lkp compare` applies by default, which
// LKPChanged implements; --format lkp prints it under the table.
const LKPRule = `change rule (lkp-tests' default, lib/stats.rb and lib/changed_stat.rb): a metric
  changed when one run has at least 3 samples (rounds), the medians differ by more
  than 5%, and the samples separate: min(new) > median(base) and median(new) >
  max(base), or the mirror (median: the sorted sample at n/2, after n/32 samples,
  at most 3, are dropped from each end). lkp compare prints only changed metrics;
  rtload prints every headline metric and marks the changed ones below.
  avg is the mean of the per-round values; %stddev their standard deviation (over
  n) in % of avg, shown above 2%; %change the change of avg against the base.
`

// LKP writes r in the layout of the 0-day robot's `lkp compare`: a "===="
// line, the axes the runs share, the runs compared, then per headline
// metric of every column group one row "base-avg ± sd%  %change  new-avg
// ± sd%  name" (%stddev in % of the mean, shown when above 2%, as LKP
// does), with one "%change new" pair per further run; under it the change
// rule LKP uses (LKPRule) and the metrics it calls changed (LKPChanged).
// Values are the means of each column's per-round values (the metric's
// merged value when it has none). A run lacking a column shows "-".
func LKP(w io.Writer, r *compare.Result) error {
	r = termsafe.Copy(r) // strings from results, escaped for the terminal
	var b strings.Builder
	runs := r.Runs
	b.WriteString(strings.Repeat("=", 89) + "\n")
	keys, vals := lkpAxes(r)
	fmt.Fprintf(&b, "%s:\n  %s\n\n", strings.Join(keys, "/"), strings.Join(vals, "/"))
	b.WriteString("run: \n")
	for _, ri := range runs {
		if ri.Kernel != compare.None && ri.Kernel != "" {
			fmt.Fprintf(&b, "  %s (%q)\n", ri.Label, ri.Kernel)
		} else {
			fmt.Fprintf(&b, "  %s\n", ri.Label)
		}
	}
	b.WriteByte('\n')
	first := lkpAbsWidth + lkpErrWidth
	width := first + lkpRelWidth + 1
	for i, ri := range runs {
		if i == 0 {
			fmt.Fprintf(&b, "%*s ", first, truncate(ri.Label, first))
		} else {
			fmt.Fprintf(&b, "%*s ", width, truncate(ri.Label, width))
		}
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat("-", first) + " ")
	for range runs[min(1, len(runs)):] {
		b.WriteString(strings.Repeat("-", width) + " ")
	}
	b.WriteByte('\n')
	n := max(len(runs)-1, 0)
	fmt.Fprintf(&b, "         %%stddev%s\n", strings.Repeat("     %change         %stddev", n))
	fmt.Fprintf(&b, "             \\  %s\n", strings.Repeat("        |                \\  ", n))
	var changed []string
	for _, row := range lkpRows(r) {
		var base []float64
		for i := range runs {
			c := row.cells[i]
			if i > 0 {
				switch {
				case c == nil || row.cells[0] == nil:
					fmt.Fprintf(&b, "%*s  ", lkpRelWidth+1, "")
				default:
					fmt.Fprintf(&b, "%s ", lkpChange(c.avg, row.cells[0].avg))
				}
			}
			if c == nil {
				fmt.Fprintf(&b, "%*s%*s", lkpAbsWidth, "-", lkpErrWidth, "")
				continue
			}
			b.WriteString(lkpValue(c.avg, c.rounds))
			if i == 0 {
				base = c.rounds
			} else if LKPChanged(base, c.rounds) {
				changed = append(changed, row.stat+" ("+runs[i].Label+")")
			}
		}
		fmt.Fprintf(&b, "  %s\n", row.stat)
	}
	b.WriteString("\n" + LKPRule)
	if len(changed) == 0 {
		b.WriteString("changed by that rule: none\n")
	} else {
		b.WriteString("changed by that rule: " + strings.Join(changed, ", ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lkpCell is one run's values of one metric.
type lkpCell struct {
	avg    float64
	rounds []float64
}

// lkpRow is one metric of one column group, a cell per run (nil: the run
// lacks that column).
type lkpRow struct {
	stat  string
	cells []*lkpCell
}

// lkpRows lays the headline metrics out by (group, metric), in the order
// Metrics has them.
func lkpRows(r *compare.Result) []lkpRow {
	runIndex := map[string]int{}
	for i, ri := range r.Runs {
		runIndex[ri.Label] = i
	}
	group := map[string]compare.Column{}
	for _, c := range r.Columns {
		group[c.Label] = c
	}
	var rows []lkpRow
	at := map[string]int{}
	for _, m := range r.Metrics {
		var g, run string
		if c, known := group[m.Column]; known {
			g, run = c.Group, c.Run
		} else if i := strings.LastIndex(m.Column, "/"); i >= 0 {
			g, run = m.Column[:i], m.Column[i+1:] // a probe: "variant:probe/run"
		}
		ri, known := runIndex[run]
		if !known {
			continue
		}
		stat := lkpStat(g, m.Name, m.Unit)
		k, seen := at[stat]
		if !seen {
			k = len(rows)
			at[stat] = k
			rows = append(rows, lkpRow{stat: stat, cells: make([]*lkpCell, len(r.Runs))})
		}
		c := &lkpCell{avg: m.Value, rounds: m.Rounds}
		if len(m.Rounds) > 0 {
			c.avg = report.Summarize(m.Rounds).Mean
		}
		rows[k].cells[ri] = c
	}
	return rows
}

// lkpAxes are the facts every run shares, LKP's common axes: scenario,
// clock, CPU count and model, where the runs agree on them.
func lkpAxes(r *compare.Result) (keys, vals []string) {
	same := func(get func(ri compare.RunInfo) string) (string, bool) {
		if len(r.Runs) == 0 {
			return "", false
		}
		v := get(r.Runs[0])
		for _, ri := range r.Runs[1:] {
			if get(ri) != v {
				return "", false
			}
		}
		return v, v != "" && v != compare.None
	}
	for _, a := range []struct {
		key string
		get func(ri compare.RunInfo) string
	}{
		{"scenario", func(ri compare.RunInfo) string { return ri.Scenario }},
		{"clock", func(ri compare.RunInfo) string { return ri.Clock.Kind }},
		{"tick_unit", func(compare.RunInfo) string { return r.TickUnit }},
	} {
		if v, ok := same(a.get); ok {
			keys, vals = append(keys, a.key), append(vals, v)
		}
	}
	if len(keys) == 0 {
		keys, vals = []string{"runs"}, []string{fmt.Sprint(len(r.Runs))}
	}
	return keys, vals
}

// lkpStat names a metric as LKP names its stats, "testcase.field":
// group and metric in lower case, words joined by "_", the unit last
// ("recvfrom.mean_per-call_cost_ns", "base.hb.messaging_time_s").
func lkpStat(group, name, unit string) string {
	slug := func(s string) string {
		s = strings.Map(func(c rune) rune {
			switch {
			case c == 'µ':
				return 'u'
			case unicode.IsLetter(c) || unicode.IsDigit(c) || c == '-' || c == '.':
				return unicode.ToLower(c)
			}
			return '_'
		}, s)
		for strings.Contains(s, "__") {
			s = strings.ReplaceAll(s, "__", "_")
		}
		return strings.Trim(s, "_")
	}
	u := map[string]string{"TSC ticks": "ticks", "messages": ""}
	us, ok := u[unit]
	if !ok {
		us = slug(unit)
	}
	stat := slug(strings.ReplaceAll(group, ":", ".")) + "." + slug(name)
	if us != "" {
		stat += "_" + us
	}
	return stat
}

// lkpValue prints avg as LKP does: "%10.2f" below 1000, "%10.4g" above
// 1e8, else "%10d" (truncated, as Ruby's %d of a Float), then " ±NN%" when
// the standard deviation (over n) of rounds is above 2% of avg, else six
// spaces. One round has no standard deviation.
func lkpValue(avg float64, rounds []float64) string {
	var s string
	switch a := math.Abs(avg); {
	case a < 1000:
		s = fmt.Sprintf("%*.2f", lkpAbsWidth, avg)
	case a > 100_000_000:
		s = fmt.Sprintf("%*.4g", lkpAbsWidth, avg)
	default:
		s = fmt.Sprintf("%*d", lkpAbsWidth, int64(avg))
	}
	sd := -1.0
	if len(rounds) > 1 {
		sd = report.Summarize(rounds).Std
	}
	if avg != 0 {
		sd = 100 * sd / avg
	}
	if sd > 2 {
		return s + fmt.Sprintf(" ±%*d%%", lkpErrWidth-3, int64(sd))
	}
	return s + strings.Repeat(" ", lkpErrWidth)
}

// lkpChange prints the change of avg against base in %, as LKP does:
// "%+10.1f%%" (".2g" from 100000% on); a zero base counts as 1e-100.
func lkpChange(avg, base float64) string {
	if base == 0 {
		base = 1e-100
	}
	p := 100 * (avg - base) / base
	if math.Abs(p) < 100_000 {
		return fmt.Sprintf("%+*.1f%%", lkpRelWidth, p)
	}
	return fmt.Sprintf("%+*.2g%%", lkpRelWidth, p)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

// LKPChanged reports whether lkp-tests' default rule calls the change from
// base to x (per-round samples) a change (LKPRule): one side has at least
// 3 samples; after dropping min(n/32, 3) samples from each end of each
// sorted side, the sides separate (min(x) > median(base) and median(x) >
// max(base), or the mirror, median the sample at index n/2); and the
// larger median exceeds the smaller by more than 5% (any amount when the
// smaller is ≤ 0, where LKP takes the ratio as 5).
func LKPChanged(base, x []float64) bool {
	if len(base) < 3 && len(x) < 3 {
		return false
	}
	if len(base) == 0 || len(x) == 0 {
		return false
	}
	trim := func(v []float64) []float64 {
		s := slices.Sorted(slices.Values(v))
		m := min(len(s)>>5, 3)
		return s[m : len(s)-m]
	}
	a, b := trim(x), trim(base)
	minA, medA, maxA := a[0], a[len(a)/2], a[len(a)-1]
	minB, medB, maxB := b[0], b[len(b)/2], b[len(b)-1]
	if !(minB > medA && medB > maxA) && !(minA > medB && medA > maxB) {
		return false
	}
	hi, lo := max(medA, medB), min(medA, medB)
	ratio := 5.0
	if lo > 0 {
		ratio = hi / lo
	}
	return ratio > 1.05
}
