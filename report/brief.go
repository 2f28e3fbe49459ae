package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
)

// Level is how much a text output says. Every command that measures or
// judges prints at one of them, and ends on its closing block at every
// level; nothing is lost at any (summary.json and each --format json hold
// everything).
type Level int

const (
	// Quiet prints only the closing block.
	Quiet Level = iota - 1
	// Normal prints what a person reads: the seed's table once, the
	// headline statistics, the marks, the closing block.
	Normal
	// Verbose prints everything the results hold (Report).
	Verbose
)

// FoldBelow is the share of a column's calls below which the default
// view folds the sparse tail of the seed's table into one row
// (TableOptions.FoldBelow): 0.1%. On laight-450 here that keeps the rows
// from the first populated one to about 4200 ticks, the body of both
// peaks; BriefRows may fold a little more.
const FoldBelow = 0.001

// BriefRows is the most bucket rows the default view prints before the
// folded one (TableOptions.MaxRows): 28 rows of 128 ticks hold both of
// laight-450's peaks here and keep `compare A B` on one screen.
const BriefRows = 28

// FoldHint says how to see every row of a folded table.
const FoldHint = "-v prints every row"

// Brief writes what a person reads of s, built only from s: a short
// header (scenario, run window and shape, what one clock tick is), the
// banners and marks (degraded, incomplete, stopped, invalid, starved,
// traffic not as specified, one line each), the seed's table once (all
// calls, its sparse tail folded: FoldBelow), and the headline statistics
// per column: calls, mean cost per call, p50 and p99, wakeup latency p99
// and max, overruns, loss and whether the traffic was as specified; a
// profiled run's profiler cost and profile files. A probe-only run prints
// its probes' runs. Report prints the rest.
// Every string taken from s is escaped for the terminal.
func Brief(w io.Writer, s *results.Summary) error {
	s = termsafe.Copy(s)
	var b strings.Builder
	briefHeader(&b, s)
	cols, err := columns(s)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		if hasProbes(s) {
			b.WriteByte('\n')
			writeProbes(&b, s)
		} else {
			b.WriteString("\nno readers: nothing measured\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	unitLong := s.Clock.TickUnit()
	unit := ShortUnit(unitLong)
	timerOnly := true
	for _, c := range cols {
		timerOnly = timerOnly && c.sockets == 0
	}
	if !timerOnly {
		tc := make([]Column, len(cols))
		for i := range cols {
			tc[i] = Column{Label: cols[i].label, Hist: cols[i].all}
		}
		b.WriteByte('\n')
		title := "per-call cost in " + unitLong + ", all calls (data + EAGAIN)" + roundsNote(cols)
		if err := Table(&b, tc, TableOptions{Title: title, Unit: unit, FoldBelow: FoldBelow, MaxRows: BriefRows, FoldHint: FoldHint}); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	b.WriteByte('\n')
	writeBlocks(&b, labels(cols), []*kv{headline(s, cols, unit, timerOnly)})
	if hasProbes(s) {
		b.WriteByte('\n')
		writeProbes(&b, s)
	}
	briefGC(&b, s)
	writeProfiled(&b, s)
	_, err = io.WriteString(w, b.String())
	return err
}

// briefHeader is the header of Brief: three lines (four for rounds:
// auto, five when the clocksource changed), then one line per banner and
// mark.
func briefHeader(b *strings.Builder, s *results.Summary) {
	writeTitle(b, s)
	if !s.Start.IsZero() && !s.End.IsZero() {
		fmt.Fprintf(b, "run: %s, %s; ", s.Start.Format(time.RFC3339), s.End.Sub(s.Start).Round(time.Millisecond))
	}
	fmt.Fprintf(b, "%s: %s", plural(len(s.Trials), "trial"), trialShape(s))
	for _, t := range s.Trials {
		if il := t.Interleave; il != nil {
			fmt.Fprintf(b, ", variants interleaved in %s ABBA blocks", time.Duration(il.BlockNs))
			break
		}
	}
	b.WriteByte('\n')
	b.WriteString(clockLine(s.Clock))
	b.WriteByte('\n')
	for _, f := range s.Clock.Fallbacks {
		fmt.Fprintf(b, "  not used: %s\n", f)
	}
	if l := clockRateLine(s); l != "" {
		fmt.Fprintf(b, "  %s\n", l)
	}
	if cs := kernelLine(s); strings.Contains(cs, "DIFFERS") {
		b.WriteString(strings.SplitAfter(cs, "\n")[0])
	}
	if a := s.Auto; a != nil {
		b.WriteString(autoLine(a))
	}
	if s.Degraded {
		fmt.Fprintf(b, "*** DEGRADED: run without some privileges (--allow-degraded): %s\n", orText(strings.Join(s.DegradedReasons, "; "), "not comparable to a privileged run"))
	}
	if s.InProgress {
		fmt.Fprintf(b, "*** INCOMPLETE: summary.json is a checkpoint written at %s by a run that had not finished\n", s.End.Format(time.RFC3339))
	}
	if s.Stopped {
		b.WriteString("*** STOPPED EARLY: interrupted; last trial partial, rounds may be missing\n")
	}
	var marks strings.Builder
	markBanners(&marks, s)
	for _, l := range strings.Split(marks.String(), "\n") {
		if l != "" {
			b.WriteString(l + "\n")
		}
	}
	for _, t := range s.Trials {
		for _, r := range t.Readers {
			if r.TracingStopped != "" {
				fmt.Fprintf(b, "*** TRACING STOPPED (trial %d, %s): %s\n", t.Index+1, t.Variant, r.TracingStopped)
			}
		}
	}
	briefThreadWarnings(b, s)
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// briefThreadWarnings says in one line how many non-reader threads could
// run on a reader's CPU, and in how many trials.
func briefThreadWarnings(b *strings.Builder, s *results.Summary) {
	most, trials := 0, 0
	for _, t := range s.Trials {
		if n := len(t.ThreadWarnings); n > 0 {
			most, trials = max(most, n), trials+1
		}
	}
	if most == 0 {
		return
	}
	fmt.Fprintf(b, "warning: up to %s may run on a reader's CPU, in %d of %s (-v lists them)\n",
		plural(most, "non-reader thread"), trials, plural(len(s.Trials), "trial"))
}

// headline is the headline statistics block: per column the figures a
// person compares first, each as the full report prints it.
func headline(s *results.Summary, cols []column, unit string, timerOnly bool) *kv {
	k := &kv{title: "headline statistics"}
	if !timerOnly {
		pc := make([]results.TickStats, len(cols))
		for i, c := range cols {
			pc[i], _ = results.MergeTickStats(c.perCall...)
		}
		k.add("calls (data + EAGAIN)", cells(cols, func(c *column) string { return u(c.calls) })...)
		if s.Clock.Kind == "tsc" && s.Clock.Hz > 0 {
			k.add("mean ns/call", cells(cols, func(c *column) string { return f1(c.all.Mean() * 1e9 / s.Clock.Hz) })...)
		} else {
			k.add("mean "+unit+"/call", cells(cols, func(c *column) string { return f1(c.all.Mean()) })...)
		}
		for _, q := range []results.Quantity{results.P50, results.P99} {
			row := make([]string, len(cols))
			for i := range cols {
				row[i] = perCallQuantity(&cols[i], pc[i], q)
			}
			k.add(q.String()+" "+unit+"/call", row...)
		}
	}
	wake := make([]results.Latency, len(cols))
	for i, c := range cols {
		wake[i], _ = results.MergeLatency(c.wake...)
	}
	for _, q := range []results.Quantity{results.P99, results.Max} {
		row := make([]string, len(cols))
		for i, l := range wake {
			row[i] = "-"
			if l.Count > 0 {
				row[i] = Microseconds(l.Ns(q))
			}
		}
		k.add("wakeup latency "+q.String()+" (µs)", row...)
	}
	k.add("wakeups / overruns", cells(cols, func(c *column) string { return u(c.wakeups) + " / " + u(c.overruns) })...)
	if !timerOnly {
		k.add("lost / kernel drops", cells(cols, func(c *column) string { return u(c.lost) + " / " + u(c.drops) })...)
		if slices.ContainsFunc(cols, func(c column) bool { return len(c.traffic) > 0 }) {
			k.add("traffic as specified", cells(cols, func(c *column) string {
				if len(c.traffic) == 0 {
					return "-"
				}
				bad := 0
				for _, m := range c.trafficMissed {
					if m {
						bad++
					}
				}
				return asSpecified(bad, len(c.traffic))
			})...)
		}
	}
	k.add("policy, CPU (read back)", cells(cols, func(c *column) string { return policy(c.applied) + " cpu " + cpuList(c.applied.CPUs) })...)
	if anySeccomp(cols) {
		k.add("seccomp (read back)", cells(cols, func(c *column) string { return c.seccompLine() })...)
	}
	return k
}

// briefGC warns, in one line, of garbage collection in a measured window;
// nothing when none ran (or in a soak, which keeps GC on).
func briefGC(b *strings.Builder, s *results.Summary) {
	var total int
	for _, t := range s.Trials {
		for _, r := range t.Readers {
			if r.Intervals > 0 {
				return
			}
		}
		total += int(t.GCDuring)
	}
	if total > 0 {
		fmt.Fprintf(b, "\nWARNING: %s during measured windows (want 0): -v says where\n", plural(total, "GC cycle"))
	}
}
