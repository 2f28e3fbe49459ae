package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/stats"
)

// doc is the markdown being written, plus the rows that missed a target.
type doc struct {
	b    bytes.Buffer
	gaps []string
}

func (d *doc) p(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }
func (d *doc) h2(s string)                  { d.p("\n## %s\n\n", s) }
func (d *doc) gap(section, s string)        { d.gaps = append(d.gaps, section+": "+s) }

func fmtv(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

func yes(b bool) string {
	if b {
		return "met"
	}
	return "**not met**"
}

// verdictCell marks what is not met in bold.
func verdictCell(v stats.Target) string {
	switch v {
	case stats.NotMet, stats.Unknown:
		return "**" + string(v) + "**"
	}
	return string(v)
}

// pairTableHead starts the table of one or more comparisons.
func (d *doc) pairTableHead() {
	d.p("\n| measure | pairs | median A | median B | median B/A | B/A 95%% CI | B − A 95%% CI | target | verdict |\n|---|---:|---:|---:|---:|---|---|---|---|\n")
}

// rows writes one table row per stat of o.
func (d *doc) rows(section string, o *outcome) {
	for _, st := range o.cmp.stats {
		name := o.cmp.title + " " + st.label
		v, ratio, diff, err := o.verdict(st)
		ma, mb := stats.Median(o.a[st.key]), stats.Median(o.b[st.key])
		rci, dci := "–", "–"
		if err == nil {
			rci = fmt.Sprintf("[%.3f, %.3f]", ratio.Lo, ratio.Hi)
			dci = fmt.Sprintf("[%s, %s]", fmtv(diff.Lo, st.prec), fmtv(diff.Hi, st.prec))
		}
		d.p("| %s | %d | %s | %s | %.3f | %s | %s | %s | %s |\n", name, o.pairs, fmtv(ma, st.prec), fmtv(mb, st.prec),
			stats.Median(o.ratios(st.key)), rci, dci, st.target(), verdictCell(v))
		if st.targeted() && v != stats.Met {
			why := fmt.Sprintf("B/A %.3f, 95%% CI [%.3f, %.3f]", stats.Median(o.ratios(st.key)), ratio.Lo, ratio.Hi)
			if err != nil {
				why = err.Error()
			}
			d.gap(section, fmt.Sprintf("%s: %s over %d pairs (target %s): %s", name, v, o.pairs, st.target(), why))
		}
	}
}

// pairNotes writes, below a table, how each comparison ran: the commands,
// the stop, and every pair's ratio in run order.
func (d *doc) pairNotes(outs []*outcome) {
	d.p("\n")
	for _, o := range outs {
		c := o.cmp
		d.p("- **%s**: A `%s`; B `%s`", c.title, shell(c.a.argv), shell(c.b.argv))
		if c.noise != nil {
			d.p("; noise around each run `%s`", shell(c.noise.argv))
		}
		d.p(". %d pairs in %s, stopped by %s (rule: CIs within ±%.0f%%, at least %d pairs", o.pairs, o.elapsed.Round(time.Second), o.reason,
			100*c.rule.MaxRelHalfWidth, c.rule.MinPairs)
		if c.minWakeups > 0 {
			d.p(" and %d wakeups per side", c.minWakeups)
		}
		d.p(", cap %s).", c.rule.Cap)
		for _, st := range c.stats {
			if !st.targeted() {
				continue
			}
			r := o.ratios(st.key)
			s := make([]string, len(r))
			for i, x := range r {
				s[i] = fmt.Sprintf("%.3f", x)
			}
			d.p(" Per-pair B/A of %s: %s", st.label, strings.Join(s, " "))
			if w := o.warmup[st.key]; len(w) > 0 {
				ws := make([]string, len(w))
				for i, x := range w {
					ws[i] = fmt.Sprintf("%.3f", x)
				}
				d.p(" (warm-up, not counted: %s)", strings.Join(ws, " "))
			}
			d.p(".")
		}
		d.p("\n")
	}
}

func (d *doc) intro(c config) {
	d.p("# rtload benchmarks\n\n")
	if c.label != "" {
		d.p("> **%s**\n\n", c.label)
	}
	if c.baseline != "" {
		d.p("> **A/B of two rtload builds**: in sections 1b and 2, A is `%s` and B is `%s` (not drain450 and cyclictest as described there); the targets there do not apply.\n\n", c.baseline, c.rtload)
	}
	d.p("Written by `make bench` (`bin/benchrun`, source in `bench/`, a module of its own) on %s. ", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	d.p("Section 1 compares rtload's drain (B) with the C loop of `bench/drain450.c` (A) inside one process, in alternating blocks (its method is in the section). ")
	d.p("Section 2 (and the opt-in 1b) compares rtload (B) with a baseline (A: cyclictest; drain450 in 1b) on this machine in one invocation: it runs **pairs** of runs, one per side, alternating the order (A B, B A, A B, …) so that a drift of the machine weighs on both sides, after %d warm-up pair(s) that are run and reported but not counted; ", c.warmupPairs)
	d.p("each pair gives a ratio B/A per measure. Pairs are added until the %.0f%% confidence interval of every targeted ratio is within ±%.0f%% of its center ", 100*Level, 100*c.precision)
	d.p("(Student's t on the logarithms of the per-pair ratios: the CI of their geometric mean; the `stats` package) or the comparison's time cap is reached. ")
	d.p("A row is **met** when its whole CI is inside the target, **not met** when all of it is outside, and **undecided** when the CI straddles the target (more pairs or a quieter machine could still decide it). ")
	d.p("\"median B/A\" is the median of the per-pair ratios; \"B − A\" is the t interval of the per-pair differences. ")
	d.p("Rows without noise (quiet) and under spin noise are both kept. Absolute times are context only: this is a 2-CPU VM without hardware performance counters, so per-call costs are TSC ticks (the TSC's nominal rate, not core cycles). `make bench-quick` runs the same with short caps.\n")
}

func (d *doc) gapsSection() {
	d.h2("Gaps and causes")
	if len(d.gaps) == 0 {
		d.p("Every target was met in this run.\n")
	} else {
		d.p("Targeted rows that are not met, or undecided, in this run:\n\n")
		for _, g := range d.gaps {
			d.p("- %s\n", g)
		}
	}
	if b, err := os.ReadFile("bench/GAPS.md"); err == nil {
		d.p("\n%s", b)
	}
}

func hostInfo() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if i := strings.IndexByte(l, ':'); i >= 0 {
				k, _ := os.ReadFile("/proc/sys/kernel/osrelease")
				return strings.TrimSpace(l[i+1:]) + ", Linux " + strings.TrimSpace(string(k))
			}
		}
	}
	return "unknown CPU"
}
