package explain

import (
	"fmt"
	"io"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
)

// Write prints the explanations as text: one block per reader and trial.
// Every sentence carries its count and its share.
func Write(w io.Writer, rs []Reader) error {
	rs = termsafe.Copy(rs) // strings from results, escaped for the terminal
	var b strings.Builder
	fmt.Fprintf(&b, "modes: local maxima of the bucket counts with prominence ≥ max(%.0f%% of the peak, %.0f√peak) and ≥ %.1f%% of the calls in their span\n",
		100*MinRelProminence, NoiseSigmas, 100*MinShare)
	for i, r := range rs {
		if i > 0 {
			b.WriteString("\n")
		}
		writeReader(&b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pct(n, d uint64) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

func writeReader(b *strings.Builder, r Reader) {
	unit := r.Unit
	if unit == "" {
		unit = "ticks"
	}
	// Numbered from 1 as run, report and check print them (the JSON's
	// trial and round stay summary.json's 0-based index and round).
	fmt.Fprintf(b, "trial %d (%s, round %d), reader %s (%s): %d calls\n", r.Trial+1, r.Variant, r.Round+1, r.Reader, r.Method, r.All.Count)
	for _, n := range r.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
	if r.FirstCalls > 0 {
		fmt.Fprintf(b, "  overall: %s; %s (%d) of all calls are among the first %d after a wakeup\n",
			classSplit(r, r.All), pct(r.All.First, r.All.Count), r.All.First, r.FirstCalls)
	}
	switch len(r.Modes) {
	case 0:
		b.WriteString("  per-call modes: none (empty histogram)\n")
	default:
		fmt.Fprintf(b, "  per-call modes (all calls): %d\n", len(r.Modes))
	}
	for _, m := range r.Modes {
		fmt.Fprintf(b, "    peak at ~%d %s (span [%d, %d)): %d calls, %s of all calls\n", m.PeakAt, unit, m.Mode.From, m.Mode.To, m.Parts.Count, pct(m.Parts.Count, r.All.Count))
		fmt.Fprintf(b, "      class: %s\n", classLine(r, m.Parts))
		if r.FirstCalls > 0 {
			fmt.Fprintf(b, "      position: %s\n", positionLine(r, m.Parts))
		}
	}
	if r.Tail != nil && r.Tail.Count > 0 {
		fmt.Fprintf(b, "  tail: calls ≥ %d %s (the 99th-percentile bucket and above, overflow included): %d calls, %s of all calls\n",
			r.Tail.From, unit, r.Tail.Count, pct(r.Tail.Count, r.All.Count))
		fmt.Fprintf(b, "      class: %s\n", classLine(r, *r.Tail))
		if r.FirstCalls > 0 {
			fmt.Fprintf(b, "      position: %s\n", positionLine(r, *r.Tail))
		}
	}
	if r.Overflow != nil {
		fmt.Fprintf(b, "  overflow: calls ≥ %d %s: %d calls, %s of all calls\n", r.Overflow.From, unit, r.Overflow.Count, pct(r.Overflow.Count, r.All.Count))
		fmt.Fprintf(b, "      class: %s\n", classLine(r, *r.Overflow))
		if r.FirstCalls > 0 {
			fmt.Fprintf(b, "      position: %s\n", positionLine(r, *r.Overflow))
		}
	}
	if len(r.Classes) > 0 {
		b.WriteString("  modes of each class's own histogram:\n")
	}
	for _, c := range r.Classes {
		if c.Total == 0 {
			fmt.Fprintf(b, "    %s: no calls\n", c.Class)
			continue
		}
		var ps []string
		for _, m := range c.Modes {
			ps = append(ps, fmt.Sprintf("~%d (%d calls, %s)", m.PeakAt, m.Count, pct(m.Count, c.Total)))
		}
		fmt.Fprintf(b, "    %s (%d calls): %d peak(s): %s\n", c.Class, c.Total, len(c.Modes), strings.Join(ps, ", "))
	}
	if r.Wakeups != nil {
		writeWakeups(b, r.Wakeups)
	}
	writeKernel(b, r)
}

// writeKernel prints the trial's kernel context: interrupts on the
// reader's CPU and the reader thread's perf counters.
func writeKernel(b *strings.Builder, r Reader) {
	perWakeup := func(n uint64) string {
		if r.WakeupCount == 0 {
			return ""
		}
		return fmt.Sprintf(" (%.1f per wakeup)", float64(n)/float64(r.WakeupCount))
	}
	if ci := r.CPUInterrupts; ci != nil {
		var top []string
		for i, s := range ci.Sources {
			if i == 4 {
				break
			}
			of := ci.IRQs
			if strings.HasPrefix(s.Name, "softirq:") {
				of = ci.SoftIRQs
			}
			top = append(top, fmt.Sprintf("%s %d (%s)", s.Name, s.Value, pct(s.Value, of)))
		}
		fmt.Fprintf(b, "  reader CPU %d over the measured window: %d interrupts%s, %d softirqs%s; largest: %s (sampled every 50 ms: not tied to single wakeups)\n",
			ci.CPU, ci.IRQs, perWakeup(ci.IRQs), ci.SoftIRQs, perWakeup(ci.SoftIRQs), strings.Join(top, ", "))
	}
	if len(r.Counters) > 0 {
		var cs []string
		for _, c := range r.Counters {
			if c.Name == "task-clock" {
				cs = append(cs, fmt.Sprintf("task-clock %.1f ms", float64(c.Value)/1e6))
				continue
			}
			cs = append(cs, fmt.Sprintf("%s %d%s", c.Name, c.Value, perWakeup(c.Value)))
		}
		fmt.Fprintf(b, "  reader thread perf counters (whole trial, warm-up and tail included): %s\n", strings.Join(cs, ", "))
	}
	for _, s := range r.CountersSkipped {
		fmt.Fprintf(b, "  not counted: %s\n", s)
	}
}

// classes lists a range's classes, largest first.
func classes(r Reader, p Parts) []struct {
	name string
	n    uint64
} {
	cs := []struct {
		name string
		n    uint64
	}{{"data", p.Data}}
	if r.FirstCalls > 0 {
		cs = append(cs, struct {
			name string
			n    uint64
		}{"warm EAGAIN", p.Warm}, struct {
			name string
			n    uint64
		}{"cold EAGAIN", p.Cold})
	} else {
		cs = append(cs, struct {
			name string
			n    uint64
		}{"EAGAIN", p.EAGAIN})
	}
	for i := 1; i < len(cs); i++ { // stable insertion sort, largest first
		for j := i; j > 0 && cs[j].n > cs[j-1].n; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	return cs
}

func classSplit(r Reader, p Parts) string {
	var s []string
	for _, c := range classes(r, p) {
		s = append(s, fmt.Sprintf("%s %s (%d)", pct(c.n, p.Count), c.name, c.n))
	}
	return strings.Join(s, ", ")
}

// classLine names the dominant class of a range, or says none dominates.
func classLine(r Reader, p Parts) string {
	cs := classes(r, p)
	if p.Count == 0 {
		return "no calls"
	}
	lead := fmt.Sprintf("mostly %s: ", cs[0].name)
	// "Mostly" means at least 60%: a 50/49 warm/cold split is not "mostly warm".
	if 5*cs[0].n < 3*p.Count {
		lead = "no class makes up most of it: "
		if r.FirstCalls > 0 && 5*(p.Warm+p.Cold) >= 3*p.Count {
			lead = fmt.Sprintf("mostly EAGAIN, %s (%d), warm and cold alike: ", pct(p.Warm+p.Cold, p.Count), p.Warm+p.Cold)
		}
	}
	return lead + classSplit(r, p)
}

// positionLine compares a range's share of first calls with the overall one.
func positionLine(r Reader, p Parts) string {
	in := fmt.Sprintf("%s (%d) are among the first %d calls after a wakeup, against %s of all calls",
		pct(p.First, p.Count), p.First, r.FirstCalls, pct(r.All.First, r.All.Count))
	if p.Count == 0 || r.All.First == 0 {
		return in
	}
	ratio := (float64(p.First) / float64(p.Count)) / (float64(r.All.First) / float64(r.All.Count))
	switch {
	case ratio >= 2:
		return fmt.Sprintf("%s: first calls are %.1f× over-represented", in, ratio)
	case ratio <= 0.5:
		return fmt.Sprintf("%s: first calls are under-represented (%.2f×)", in, ratio)
	}
	return in + ": position does not set it apart"
}

func us(ns int64) string { return fmt.Sprintf("%.1f µs", float64(ns)/1e3) }

func writeWakeups(b *strings.Builder, w *Wakeups) {
	fmt.Fprintf(b, "  wakeup latency: %d wakeups logged, p50 %s, p99 %s, max %s\n", w.Rows, us(w.P50), us(w.P99), us(w.Max))
	n := uint64(w.Spikes)
	rows := uint64(w.Rows)
	fmt.Fprintf(b, "    spikes (latency ≥ %s, %s): %d wakeups, %s of wakeups\n", us(w.Threshold), w.ThresholdFrom, w.Spikes, pct(n, rows))
	if w.Spikes == 0 {
		return
	}
	fmt.Fprintf(b, "    with an overrun (missed ticks): %d, %s of spikes (%s of all wakeups)\n", w.Overrun, pct(uint64(w.Overrun), n), pct(uint64(w.OverrunAll), rows))
	if w.HasCS {
		fmt.Fprintf(b, "    with an involuntary context switch since the previous wakeup: %d, %s of spikes (%s of all wakeups)\n",
			w.InvolCS, pct(uint64(w.InvolCS), n), pct(uint64(w.InvolCSAll), rows))
	} else {
		b.WriteString("    context switches: not recorded in this log\n")
	}
	switch {
	case w.NoiseAlways != "":
		fmt.Fprintf(b, "    noise (%s) was on throughout (duty ≥ 99%%): it coincided with all %d spikes and every other wakeup alike, so it does not single them out\n", w.NoiseAlways, w.Spikes)
	case w.NoiseKnown > 0:
		fmt.Fprintf(b, "    noise on when the writer saw the spike: %d of %d spikes with a recorded state (%s)\n", w.NoiseOn, w.NoiseKnown, pct(uint64(w.NoiseOn), uint64(w.NoiseKnown)))
	default:
		b.WriteString("    noise state: not recorded per spike (spikes.jsonl is written only above a reader threshold)\n")
	}
	if w.Unexplained > 0 {
		fmt.Fprintf(b, "    nothing recorded explains %d spike(s), %s of spikes\n", w.Unexplained, pct(uint64(w.Unexplained), n))
	}
}
