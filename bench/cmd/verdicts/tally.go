package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/view"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/verdict"
)

// tally prints one row per check (its exit code, verdict, processes,
// looks, stop, and each judged metric's change with its CI and smallest
// detectable change) and the counts of slower, not slower and
// undecided.
func tally(w io.Writer, files []string) error {
	counts := map[int]int{}
	fmt.Fprint(w, tallyHeader)
	for _, f := range files {
		doc, err := readCheck(f)
		if err != nil {
			return err
		}
		counts[doc.ExitCode]++
		fmt.Fprint(w, tallyRow(strings.TrimSuffix(filepath.Base(f), ".json"), doc, ""))
	}
	fmt.Fprintf(w, "\n%d checks: %d not slower (exit 0), %d slower (exit 1), %d undecided or cannot judge (exit 125)", len(files), counts[0], counts[1], counts[125])
	if other := len(files) - counts[0] - counts[1] - counts[125]; other > 0 {
		fmt.Fprintf(w, ", %d other", other)
	}
	fmt.Fprintf(w, "; slower in %s of them (exact 95%% Clopper–Pearson interval)\n", binomial(counts[1], len(files), 0.95))
	return nil
}

// readCheck reads one rtload check --format json output.
func readCheck(file string) (*verdict.Report, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc verdict.Report
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if doc.Schema != verdict.Schema {
		return nil, fmt.Errorf("%s: schema %q, not %s", file, doc.Schema, verdict.Schema)
	}
	return &doc, nil
}

// tallyHeader heads tallyRow's table.
const tallyHeader = "| check | exit | verdict | candidate processes | looks | stop | time | metric: change [CI] (level), smallest detectable |\n" +
	"|---|---|---|---|---|---|---|---|\n"

// tallyRow is check name's row; took is the check's wall time ("": the
// candidate run's, from the check itself).
func tallyRow(name string, doc *verdict.Report, took string) string {
	procs, looks, stop := "-", "-", "-"
	if q := doc.Sequential; q != nil {
		procs, looks, stop = fmt.Sprint(q.Processes), fmt.Sprintf("%d/%d", q.Looks, q.MaxLooks), q.Stop
		if took == "" {
			took = time.Duration(q.ElapsedNs).Round(time.Second).String()
		}
	}
	if took == "" {
		took = "-"
	}
	var ms []string
	for _, m := range doc.Gate.Metrics {
		s := m.Column + " " + m.Name + " (" + m.Unit + "): " + m.Verdict
		if iv := m.Interval; iv != nil && iv.LowPct != nil && iv.HighPct != nil && iv.PointPct != nil {
			s += fmt.Sprintf(" %+.1f%% [%+.1f%%, %+.1f%%] (%.2f%%)", *iv.PointPct, *iv.LowPct, *iv.HighPct, iv.Level*100)
		}
		if m.MinDetectablePct != nil {
			s += fmt.Sprintf(", %+.1f%%", *m.MinDetectablePct)
		}
		ms = append(ms, s)
	}
	if len(doc.Gate.Reasons) > 0 {
		ms = append(ms, "cannot judge: "+strings.Join(doc.Gate.Reasons, "; "))
	}
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s | %s |\n", name, doc.ExitCode, doc.Verdict, procs, looks, stop, took, mdCell(strings.Join(ms, "<br>")))
}

// mdCell makes s safe in a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

// pool merges the results directories before "--" into one run and those
// after it into another (each directory's processes kept apart), and
// prints the comparison's primary verdict lines and variance split: the
// true size of a change, from every process measured.
func pool(w io.Writer, args []string) error {
	var a, b []string
	side := &a
	for _, x := range args {
		if x == "--" {
			side = &b
			continue
		}
		*side = append(*side, x)
	}
	if len(a) == 0 || len(b) == 0 {
		return fmt.Errorf("usage: pool DIR... -- DIR")
	}
	ra, err := merged("A", a)
	if err != nil {
		return err
	}
	rb, err := merged("B", b)
	if err != nil {
		return err
	}
	res, err := facts.Compare([]compare.Run{ra, rb})
	if err != nil {
		return err
	}
	prim := res.Primary()
	fmt.Fprintf(w, "pooled: A = %d directories, B = %d directories\n", len(a), len(b))
	for i, m := range res.Metrics {
		if prim[i] && m.Verdict != compare.VerdictBaseline {
			fmt.Fprintln(w, "  "+view.VerdictLine(m, res.ThresholdPct))
		}
	}
	return nil
}

// merged is the trials of dirs as one run, each directory's processes
// numbered apart.
func merged(label string, dirs []string) (compare.Run, error) {
	var sum *results.Summary
	for i, d := range dirs {
		s, err := store.ReadSummary(d)
		if err != nil {
			continue // a check that ran nothing
		}
		if sum == nil {
			c := *s
			c.Trials = nil
			sum = &c
		}
		for _, t := range s.Trials {
			t.Process += 1000 * i
			sum.Trials = append(sum.Trials, t)
		}
	}
	if sum == nil {
		return compare.Run{}, fmt.Errorf("no results in %v", dirs)
	}
	return compare.Run{Label: label, Summary: sum}, nil
}
