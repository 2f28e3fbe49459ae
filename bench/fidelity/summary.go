package fidelity

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/rtload/rtload/stats"
)

// Level is the confidence level of every interval: 95%.
const Level = 0.95

// Precision is the band a per-call row decides at: rtload/C within
// [1 − Precision, 1 + Precision] is "the same" (issue 24).
const Precision = 0.03

// Target is what a row's ratio must satisfy: ratio ≤ Hi, and ≥ Lo when Lo
// > 0. The zero Target is none (context).
type Target struct{ Lo, Hi float64 }

// Targets of the rows: issue 13's p50 ≤ 1.05× and p99 ≤ 1.10× the C loop
// (rtload must not inflate the per-call cost), the mean at most
// 1 + Precision (issue 24's ±3%, one-sided like them: the C loop's window
// also holds glibc's recv wrapper, which rtload's raw system call does
// not, so rtload may read lower), and seed 000's gap (recvmsg over
// recvfrom) of rtload within 0.95–1.05 of the C loop's (issue 13: both
// methods inflated alike, two-sided).
var (
	TargetP50  = Target{Hi: 1.05}
	TargetP99  = Target{Hi: 1.10}
	TargetMean = Target{Hi: 1 + Precision}
	TargetGap  = Target{Lo: 0.95, Hi: 1.05}
)

func (t Target) String() string {
	switch {
	case t.Hi == 0:
		return ""
	case t.Lo > 0:
		return fmt.Sprintf("%.2f ≤ B/A ≤ %.2f", t.Lo, t.Hi)
	}
	return fmt.Sprintf("B/A ≤ %.2f", t.Hi)
}

// Decide is the verdict of ci (a ratio interval) against t: met when the
// whole CI satisfies t, not met when none of it does, undecided otherwise;
// "–" without a target.
func (t Target) Decide(ci stats.CI) stats.Target {
	switch {
	case t.Hi == 0:
		return "–"
	case t.Lo > 0:
		return stats.Within(ci, t.Lo, t.Hi)
	}
	return stats.AtMost(ci, t.Hi)
}

// Row is one comparison of a run: B/A over the half-cycles.
type Row struct {
	// Measure names the row ("recvfrom p50 ticks/call"); A and B the two
	// sides of the ratio ("C", "rtload").
	Measure, A, B string
	// GeoA and GeoB are the geometric means of the per-half values of A
	// and B (for a gap-over-gap row, of the two gaps).
	GeoA, GeoB float64
	// Change is stats.Paired's B/A − 1 over the pairs (one per half, in
	// run order): t on the per-pair log ratios' batch means.
	Change stats.Change
	// Pairs is the number of pairs; Lag1 and SDLog the lag-1
	// autocorrelation and the standard deviation of the per-pair log
	// ratios (the noise of one pair, before any averaging).
	Pairs       int
	Lag1, SDLog float64
	Target      Target
	Verdict     stats.Target
}

// CI is the row's ratio interval: Center, Lo and Hi as B/A.
func (r Row) CI() stats.CI {
	return stats.CI{N: r.Pairs, Level: r.Change.Level, Center: 1 + r.Change.Point, Lo: 1 + r.Change.Lo, Hi: 1 + r.Change.Hi}
}

// Defined reports whether the row has an interval (else Change.Notes say why).
func (r Row) Defined() bool { return r.Change.Defined() }

// Same reports whether the whole CI lies within ±Precision of 1.
func (r Row) Same() bool {
	return r.Defined() && r.CI().Lo >= 1-Precision && r.CI().Hi <= 1+Precision
}

// Lower reports whether the whole CI lies below 1 − Precision: B reads
// lower than A by more than the band.
func (r Row) Lower() bool { return r.Defined() && r.CI().Hi < 1-Precision }

// Qualifier is what a verdict cell adds: "same ±3%" or "B lower by > 3%"
// (for a met row), "" otherwise.
func (r Row) Qualifier() string {
	switch {
	case r.Verdict != stats.Met:
		return ""
	case r.Same():
		return fmt.Sprintf("same ±%.0f%%", 100*Precision)
	case r.Lower():
		return fmt.Sprintf("B lower by > %.0f%%", 100*Precision)
	}
	return ""
}

// Targeted reports whether the row has a target.
func (r Row) Targeted() bool { return r.Target.Hi > 0 }

func row(measure, a, b string, xa, xb []float64, t Target) Row {
	r := Row{Measure: measure, A: a, B: b, GeoA: geoMean(xa), GeoB: geoMean(xb), Target: t, Pairs: len(xa)}
	r.Change = stats.Paired(xa, xb)
	r.Verdict = stats.Unknown
	if !r.Targeted() {
		r.Verdict = "–"
	}
	if !r.Defined() {
		return r
	}
	logs := make([]float64, len(xa))
	var m float64
	for i := range xa {
		logs[i] = math.Log(xb[i] / xa[i])
		m += logs[i] / float64(len(xa))
	}
	var ss float64
	for _, l := range logs {
		ss += (l - m) * (l - m)
	}
	r.Lag1, r.SDLog = stats.Lag1(logs), math.Sqrt(ss/float64(len(logs)-1))
	r.Verdict = t.Decide(r.CI())
	return r
}

// geoMean is the geometric mean of x (every value > 0), NaN for none or
// for a value ≤ 0.
func geoMean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		if !(v > 0) {
			return math.NaN()
		}
		s += math.Log(v)
	}
	return math.Exp(s / float64(len(x)))
}

// Rows is every comparison of run: per method, rtload/C of p50, p99 and
// mean; with recvfrom and recvmsg both run, seed 000's quantity (recvmsg
// over recvfrom, p50 and mean) of each side, and rtload's over the C
// loop's.
func Rows(run *Run) []Row {
	hs, _, _ := run.Halves()
	var rows []Row
	for _, m := range run.Header.Methods {
		for _, st := range []struct {
			stat string
			t    Target
		}{{"p50", TargetP50}, {"p99", TargetP99}, {"mean", TargetMean}} {
			a, b := Pairs(hs, Variant{C, m}, Variant{RTload, m}, st.stat)
			rows = append(rows, row(m+" "+st.stat+" ticks/call", "C", "rtload", a, b, st.t))
		}
	}
	if !hasMethods(run.Header.Methods, "recvfrom", "recvmsg") {
		return rows
	}
	for _, stat := range []string{"p50", "mean"} {
		gaps := map[Side][]float64{}
		for _, s := range []Side{C, RTload} {
			f, m := Pairs(hs, Variant{s, "recvfrom"}, Variant{s, "recvmsg"}, stat)
			name := "C"
			if s == RTload {
				name = "rtload"
			}
			rows = append(rows, row(fmt.Sprintf("%s recvmsg/recvfrom %s", name, stat), name+" recvfrom", name+" recvmsg", f, m, Target{}))
			for i := range f {
				gaps[s] = append(gaps[s], m[i]/f[i])
			}
		}
		rows = append(rows, row("recvmsg/recvfrom "+stat+", rtload's over C's", "C gap", "rtload gap", gaps[C], gaps[RTload], TargetGap))
	}
	return rows
}

func hasMethods(ms []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, m := range ms {
			found = found || m == w
		}
		if !found {
			return false
		}
	}
	return true
}

// BlockDuration is the length of one block.
func (h Header) BlockDuration() time.Duration {
	return time.Duration(int64(h.BlockTicks) * h.PeriodNs)
}

// Method names how a row's interval was made: "in-process ABBA, 100ms
// blocks, n = 300 pairs (t on 30 batch means of 10)".
func (r Row) Method(h Header) string {
	s := fmt.Sprintf("in-process ABBA, %s blocks, n = %d pairs", h.BlockDuration(), r.Pairs)
	if nb := r.Change.Units[0]; r.Defined() && nb > 0 && nb < r.Pairs {
		s += fmt.Sprintf(" (t on %d batch means of %d)", nb, r.Pairs/nb)
	}
	return s
}

// Totals counts the run's counted blocks, their recorded ticks and calls
// and the ticks missed, per side.
type Totals struct {
	Blocks, Ticks, Missed, Calls, Unrecorded, Errors uint64
}

// Totals sums the counted blocks by side.
func (r *Run) Totals() map[Side]Totals {
	t := map[Side]Totals{}
	for _, b := range r.Blocks {
		if b.Warmup {
			continue
		}
		s := t[b.Side]
		s.Blocks++
		s.Ticks += b.Ticks
		s.Missed += b.Missed
		s.Calls += b.Calls
		s.Unrecorded += b.Unrecorded
		s.Errors += b.Errors
		t[b.Side] = s
	}
	return t
}

// WriteText writes rows as a plain table (the command's summary on stderr).
func WriteText(w io.Writer, run *Run, rows []Row) {
	h := run.Header
	hs, dropped, dirty := run.Halves()
	cs := h.CSyscall
	if cs == "" {
		cs = "glibc" // written before the flag existed
	}
	if h.AA != "" {
		fmt.Fprintf(w, "fidelity: A/A control: both sides ran the %s loop (labels C and rtload as usual)\n", h.AA)
	}
	fmt.Fprintf(w, "fidelity: %d sockets, %s blocks (%d settle ticks), %d spin threads, C side's recv via %s, %d halves counted, %d left out (blocks not clean: C %d, rtload %d)\n",
		h.Sockets, h.BlockDuration(), h.SettleTicks, h.Spin, cs, len(hs), dropped, dirty[C], dirty[RTload])
	for _, r := range rows {
		ci := "no interval"
		if c := r.CI(); r.Defined() {
			ci = fmt.Sprintf("%.3f [%.3f, %.3f] ±%.1f%% lag-1 %+.2f", c.Center, c.Lo, c.Hi, 100*c.RelHalfWidth(), r.Lag1)
		}
		v := string(r.Verdict)
		if q := r.Qualifier(); q != "" {
			v += " (" + q + ")"
		}
		fmt.Fprintf(w, "  %-44s A %8.1f  B %8.1f  B/A %s  %s %s\n", r.Measure, r.GeoA, r.GeoB, ci, r.Target, v)
		for _, n := range r.Change.Notes {
			fmt.Fprintf(w, "    note: %s\n", n)
		}
	}
	fmt.Fprintln(w, "  "+strings.Repeat("-", 40))
}
