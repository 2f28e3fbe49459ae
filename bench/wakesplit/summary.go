package wakesplit

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Segment names, in wakeup order, then the totals. The last two need the
// program's own latencies (MatchOwn) and cover only matched wakeups.
var Segments = []string{"deadline → timer fire", "timer fire → waking", "waking → on CPU", "on CPU → sys_exit",
	"traced total (deadline → sys_exit)", "sys_exit → program's clock read", "program's own latency"}

// segment values of one wakeup, in Segments order; ok false where the
// value is unknown (no own latency).
func segments(w Wakeup) (v [7]float64, ok [7]bool) {
	v = [7]float64{w.ToFire, w.ToWaking, w.ToOnCPU, w.ToUser, w.Total(), w.Own - w.Total(), w.Own}
	ok = [7]bool{true, true, true, true, true, w.HasOwn, w.HasOwn}
	return v, ok
}

// Quantiles printed for every segment.
var Quantiles = []float64{0.50, 0.90, 0.99}

// Summary is the distribution of each segment over a set of wakeups and
// the per-wakeup counts, for one program.
type Summary struct {
	Wakeups, Matched int // Matched: wakeups with the program's own latency
	// Seg[i][j] is quantile Quantiles[j] of Segments[i] in ns; Max[i] its max.
	Seg [][]float64
	Max []float64
	// Fractions of wakeups, and means per wakeup, of the counts in Wakeup.
	FromIdle, WithFault, WithPreempt, WithSibling         float64
	Faults, Syscalls, SiblingRuns, OtherRuns, Preemptions float64
}

// Quantile is the nearest-rank q-quantile (q in (0, 1]) of sorted s: the
// smallest value with at least q·n values at or below it.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Summarize computes the Summary of ws.
func Summarize(ws []Wakeup) Summary {
	s := Summary{Wakeups: len(ws)}
	for k := range Segments {
		var v []float64
		for _, w := range ws {
			if x, ok := segments(w); ok[k] {
				v = append(v, x[k])
			}
		}
		slices.Sort(v)
		q := make([]float64, len(Quantiles))
		for j, p := range Quantiles {
			q[j] = Quantile(v, p)
		}
		s.Seg = append(s.Seg, q)
		m := math.NaN()
		if len(v) > 0 {
			m = v[len(v)-1]
		}
		s.Max = append(s.Max, m)
	}
	if len(ws) == 0 {
		return s
	}
	n := float64(len(ws))
	frac := func(b bool) float64 {
		if b {
			return 1 / n
		}
		return 0
	}
	for _, w := range ws {
		if w.HasOwn {
			s.Matched++
		}
		s.FromIdle += frac(w.FromIdle)
		s.WithFault += frac(w.Faults > 0)
		s.WithPreempt += frac(w.Preempted > 0)
		s.WithSibling += frac(w.SiblingRuns > 0)
		s.Faults += float64(w.Faults) / n
		s.Syscalls += float64(w.Syscalls) / n
		s.SiblingRuns += float64(w.SiblingRuns) / n
		s.OtherRuns += float64(w.OtherRuns) / n
		s.Preemptions += float64(w.Preempted) / n
	}
	return s
}

// WriteTable prints the segment table of one or two programs as markdown:
// each segment's p50, p90, p99 and max in µs per program, and for two
// programs the difference B − A of each.
func WriteTable(w io.Writer, names []string, sums []Summary) {
	fmt.Fprintf(w, "| segment (µs) |")
	for _, n := range names {
		fmt.Fprintf(w, " %s p50 | p90 | p99 | max |", n)
	}
	if len(sums) == 2 {
		fmt.Fprintf(w, " B − A p50 | p90 | p99 |")
	}
	fmt.Fprintln(w)
	cols := len(names)*4 + 3*btoi(len(sums) == 2)
	fmt.Fprintf(w, "|---|%s\n", repeat("---:|", cols))
	for i, seg := range Segments {
		fmt.Fprintf(w, "| %s |", seg)
		for _, s := range sums {
			for _, v := range s.Seg[i] {
				fmt.Fprintf(w, " %.1f |", v/1e3)
			}
			fmt.Fprintf(w, " %.1f |", s.Max[i]/1e3)
		}
		if len(sums) == 2 {
			for j := range Quantiles {
				fmt.Fprintf(w, " %+.1f |", (sums[1].Seg[i][j]-sums[0].Seg[i][j])/1e3)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n| per wakeup |")
	for _, n := range names {
		fmt.Fprintf(w, " %s |", n)
	}
	fmt.Fprintf(w, "\n|---|%s\n", repeat("---:|", len(names)))
	rows := []struct {
		name string
		f    func(Summary) string
	}{
		{"wakeups split (with the program's own latency)", func(s Summary) string { return fmt.Sprintf("%d (%d)", s.Wakeups, s.Matched) }},
		{"timer fired in the idle task", func(s Summary) string { return pct(s.FromIdle) }},
		{"page faults while awake (mean; wakeups with ≥ 1)", func(s Summary) string { return fmt.Sprintf("%.3f; %s", s.Faults, pct(s.WithFault)) }},
		{"other system calls while awake (mean)", func(s Summary) string { return fmt.Sprintf("%.2f", s.Syscalls) }},
		{"preempted while awake (mean; wakeups with ≥ 1)", func(s Summary) string { return fmt.Sprintf("%.3f; %s", s.Preemptions, pct(s.WithPreempt)) }},
		{"own process's other threads run on the CPU during the sleep (mean; sleeps with ≥ 1)", func(s Summary) string {
			return fmt.Sprintf("%.3f; %s", s.SiblingRuns, pct(s.WithSibling))
		}},
		{"other tasks run on the CPU during the sleep (mean)", func(s Summary) string { return fmt.Sprintf("%.2f", s.OtherRuns) }},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |", r.name)
		for _, s := range sums {
			fmt.Fprintf(w, " %s |", r.f(s))
		}
		fmt.Fprintln(w)
	}
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func repeat(s string, n int) string { return strings.Repeat(s, n) }

// Classes lists the classes of interrupted task, in print order.
var Classes = []string{ClassIdle, ClassSelf, ClassOwn, ClassOther}

// ByClass summarizes ws separately for each Class of interrupted task.
func ByClass(ws []Wakeup) map[string]Summary {
	parts := map[string][]Wakeup{}
	for _, w := range ws {
		parts[w.Class] = append(parts[w.Class], w)
	}
	out := map[string]Summary{}
	for _, c := range Classes {
		out[c] = Summarize(parts[c])
	}
	return out
}

// WriteClassTable prints, per class of task the timer interrupted and per
// program, the share of wakeups and the p50 and p99 of the segments that
// depend on it, µs.
func WriteClassTable(w io.Writer, names []string, byClass []map[string]Summary, totals []Summary) {
	fmt.Fprintf(w, "| timer interrupted | program | wakeups | waking → on CPU p50 | p99 | on CPU → sys_exit p50 | p99 | traced total p50 | p99 |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range Classes {
		for i, n := range names {
			s := byClass[i][c]
			if s.Wakeups == 0 {
				continue
			}
			share := float64(s.Wakeups) / float64(max(1, totals[i].Wakeups))
			fmt.Fprintf(w, "| %s | %s | %d (%s) | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", c, n, s.Wakeups, pct(share),
				s.Seg[2][0]/1e3, s.Seg[2][2]/1e3, s.Seg[3][0]/1e3, s.Seg[3][2]/1e3, s.Seg[4][0]/1e3, s.Seg[4][2]/1e3)
		}
	}
}
