package explain

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
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
	writeStarved(b, r)
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
		if r.OwnSoftIRQs > 0 {
			fmt.Fprintf(b, "  of those softirqs, up to %d NET_RX are the reader's own recv control (16 loopback datagrams it sends itself every tick after the drain, readers[].controls), not the machine's\n",
				r.OwnSoftIRQs)
		}
	}
	if len(r.Counters) > 0 {
		var cs []string
		for _, c := range r.Counters {
			cs = append(cs, counterText(c, r.WakeupCount))
		}
		fmt.Fprintf(b, "  reader thread counters (whole trial, warm-up and tail included): %s\n", strings.Join(cs, ", "))
	}
	for _, s := range r.CountersSkipped {
		fmt.Fprintf(b, "  not counted: %s\n", s)
	}
}

// counterUnits are the units of the reader thread's counters (engine's
// taskCounters, perf(1)'s names): a time in ns, or the noun of a count.
var counterUnits = map[string]string{
	"task-clock": "ns", "runqueue-wait": "ns",
	"context-switches": "switches", "context-switches-voluntary": "switches", "context-switches-involuntary": "switches",
	"page-faults": "faults", "major-faults": "faults", "minor-faults": "faults", "cpu-migrations": "migrations",
}

// counterText prints counter c with its unit, and per wakeup when
// wakeups > 0: "runqueue-wait 516.7 µs (2.6 µs per wakeup)",
// "context-switches 398 switches (2.0 per wakeup)". A counter whose unit
// is not known is a count of events.
func counterText(c results.Counter, wakeups uint64) string {
	unit, ok := counterUnits[c.Name]
	if !ok {
		unit = "events"
	}
	if unit == "ns" {
		l := c.Name + " " + duration(float64(c.Value))
		if wakeups > 0 {
			l += " (" + duration(float64(c.Value)/float64(wakeups)) + " per wakeup)"
		}
		return l
	}
	l := fmt.Sprintf("%s %d %s", c.Name, c.Value, unit)
	if wakeups > 0 {
		l += fmt.Sprintf(" (%.1f per wakeup)", float64(c.Value)/float64(wakeups))
	}
	return l
}

// duration prints ns in the unit that suits it: "3.2 ms", "516.7 µs", "820 ns".
func duration(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
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
	writeOwnNoise(b, w)
	writeMachine(b, w)
	if w.Unexplained > 0 {
		fmt.Fprintf(b, "    nothing recorded explains %d spike(s), %s of spikes; checked: %s%s\n", w.Unexplained, pct(uint64(w.Unexplained), n),
			strings.Join(w.Checked, ", "), unseen(w))
	}
}

// writeMachine prints what the machine did around the spikes: steal time
// and interrupts in their windows against the trial's rate, then the
// facts no record ties to a spike (the preemption model, a VM).
func writeMachine(b *strings.Builder, w *Wakeups) {
	n := uint64(w.Spikes)
	if w.MachineNote != "" {
		fmt.Fprintf(b, "    machine: %s\n", w.MachineNote)
	}
	if w.MachineKnown > 0 {
		fmt.Fprintf(b, "    with steal time on CPU %d in their window (%s): %d, %s of spikes, %s in those windows (%s per 100 ms over the trial)\n",
			w.MachineCPU, w.StealSource, w.Steal, pct(uint64(w.Steal), n), duration(float64(w.StealNs)), duration(w.StealPer100msNs))
		burst := ""
		if w.IRQBurst > 0 {
			burst = fmt.Sprintf(": %.0f interrupts and softirqs per 100 ms in their windows", w.SpikeIRQPer100ms)
			if w.BurstTop != "" {
				burst += fmt.Sprintf(" (most: %s, %d)", w.BurstTop, w.BurstTopCount)
			}
		}
		fmt.Fprintf(b, "    with more interrupts than usual on CPU %d in their window (/proc/interrupts, /proc/softirqs; usual: %.0f per 100 ms): %d, %s of spikes%s\n",
			w.MachineCPU, w.IRQPer100ms, w.IRQBurst, pct(uint64(w.IRQBurst), n), burst)
	}
	if w.Preemption != "" {
		fmt.Fprintf(b, "    preemption model: %s%s\n", w.Preemption, preemptionNote(w.Preemption))
	}
	if w.VM {
		b.WriteString("    a VM (cpuinfo's hypervisor flag): an exit to the host is not visible from inside the guest, but as steal time\n")
	}
}

// preemptionNote says what a preemption model means for a SCHED_FIFO
// reader's wakeup.
func preemptionNote(model string) string {
	switch {
	case strings.Contains(model, "realtime"):
		return ""
	case strings.Contains(model, "none"), strings.Contains(model, "voluntary"):
		return ": a SCHED_FIFO reader waits for a kernel task on its CPU to reach a preemption point, which no record here shows"
	}
	return ""
}

// unseen names what could explain the unexplained spikes but cannot be
// seen from the results: "; not visible here: …".
func unseen(w *Wakeups) string {
	var parts []string
	if note := preemptionNote(w.Preemption); note != "" {
		parts = append(parts, "non-preemptible kernel sections (preemption "+strings.SplitN(w.Preemption, " (", 2)[0]+")")
	}
	if w.VM {
		parts = append(parts, "exits to the host beyond steal time (a VM)")
	}
	if len(parts) == 0 {
		return ""
	}
	return "; not visible here: " + strings.Join(parts, ", ")
}

// WriteBrief prints what a person reads of the explanations: per reader
// and trial, its peaks in one line, its tail in one, its spikes and what
// coincided with them in one. Write prints every sentence.
func WriteBrief(w io.Writer, rs []Reader) error {
	rs = termsafe.Copy(rs)
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteString("\n")
		}
		unit := r.Unit
		if unit == "" {
			unit = "ticks"
		}
		fmt.Fprintf(&b, "trial %d (%s, round %d), reader %s (%s): %d calls\n", r.Trial+1, r.Variant, r.Round+1, r.Reader, r.Method, r.All.Count)
		var peaks []string
		for _, m := range r.Modes {
			cs := classes(r, m.Parts)
			peaks = append(peaks, fmt.Sprintf("~%d %s %s (%s %s)", m.PeakAt, unit, pct(m.Parts.Count, r.All.Count), pct(cs[0].n, m.Parts.Count), cs[0].name))
		}
		if len(peaks) > 0 {
			fmt.Fprintf(&b, "  peaks: %s\n", strings.Join(peaks, "; "))
		}
		if t := r.Tail; t != nil && t.Count > 0 {
			cs := classes(r, *t)
			l := fmt.Sprintf("  tail ≥ %d %s: %s of calls, %s %s", t.From, unit, pct(t.Count, r.All.Count), pct(cs[0].n, t.Count), cs[0].name)
			if r.FirstCalls > 0 && r.All.First > 0 && t.Count > 0 {
				l += fmt.Sprintf("; first %d calls after a wakeup %.1f× their share", r.FirstCalls,
					(float64(t.First)/float64(t.Count))/(float64(r.All.First)/float64(r.All.Count)))
			}
			b.WriteString(l + "\n")
		}
		if wk := r.Wakeups; wk != nil {
			fmt.Fprintf(&b, "  spikes ≥ %s (%s): %d of %d wakeups; %s\n", us(wk.Threshold), wk.ThresholdFrom, wk.Spikes, wk.Rows, strings.Join(causeWords(causesOf(wk)), ", "))
			b.WriteString(ownNoiseBrief(wk))
		}
		for _, s := range r.Starved {
			b.WriteString(starvedBrief(s))
		}
		for _, n := range r.Notes {
			if strings.Contains(n, "wakeup") {
				fmt.Fprintf(&b, "  note: %s\n", n)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cause is one thing that coincided with spikes (short: in a few
// letters), and how many.
type cause struct {
	what, short string
	n           int
}

// causesOf lists what coincided with w's spikes, and the unexplained.
func causesOf(w *Wakeups) []cause {
	cs := []cause{{"an overrun", "overrun", w.Overrun}}
	if w.HasCS {
		cs = append(cs, cause{"an involuntary context switch", "preempted", w.InvolCS})
	}
	if w.NoiseKnown > 0 && w.NoiseAlways == "" {
		cs = append(cs, cause{"noise on", "noise on", w.NoiseOn})
	}
	if x := w.OwnNoise; x != nil && x.Coincide {
		cs = append(cs, cause{"the on phases of the run's own noise", "own noise", x.WindowSpikes})
	}
	if w.MachineKnown > 0 || w.MachineCPU != 0 {
		cs = append(cs, cause{"steal time on the reader's CPU", "steal", w.Steal}, cause{"an interrupt burst on the reader's CPU", "irq burst", w.IRQBurst})
	}
	return append(cs, cause{"nothing recorded", "unexplained", w.Unexplained})
}

func causeWords(cs []cause) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s %d", c.short, c.n)
	}
	return out
}

// Closing is explain's closing block: every reader's spikes together, the
// causes that coincided with them by share (a spike may have several),
// what nothing recorded explains and what cannot be seen from the
// results, and the per-call tail's make-up.
func Closing(rs []Reader) report.Closing {
	var c report.Closing
	total, trials := 0, 0
	counts := map[string]int{}
	var order []string
	var last *Wakeups
	for i := range rs {
		w := rs[i].Wakeups
		if w == nil {
			continue
		}
		trials++
		total += w.Spikes
		last = w
		for _, k := range causesOf(w) {
			if _, ok := counts[k.what]; !ok {
				order = append(order, k.what)
			}
			counts[k.what] += k.n
		}
	}
	switch {
	case trials == 0:
		c.Add("spikes: no per-wakeup log in these results: wakeup spikes not explained")
	case total == 0:
		c.Add(fmt.Sprintf("spikes: none in %d reader trials", trials))
	default:
		c.Add(fmt.Sprintf("spikes (wakeup latency ≥ each trial's p99, or its reader's threshold): %d in %d reader trials; what coincided, a spike may have several:", total, trials))
		order = slices.DeleteFunc(order, func(k string) bool { return k == "nothing recorded" }) // on a line of its own
		slices.SortStableFunc(order, func(a, b string) int { return counts[b] - counts[a] })
		var parts []string
		for _, k := range order {
			if counts[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s: %d (%s)", k, counts[k], pct(uint64(counts[k]), uint64(total))))
			}
		}
		if len(parts) == 0 {
			parts = []string{"none of what was checked"}
		}
		c.Add("  " + strings.Join(parts, "; "))
		if n := counts["nothing recorded"]; n > 0 {
			c.Add(fmt.Sprintf("  nothing recorded explains %d (%s): checked %s%s", n, pct(uint64(n), uint64(total)), strings.Join(last.Checked, ", "), unseen(last)))
		}
	}
	if l := ownNoiseLine(rs); l != "" {
		c.Add(l)
	}
	if l := starvedLine(rs); l != "" {
		c.Add(l)
	}
	if l := tailLine(rs); l != "" {
		c.Add(l)
	}
	return c
}

// starvedLine counts the reader trials marked starved and by whom, "" when
// none was.
func starvedLine(rs []Reader) string {
	var n, own, foreign, none int
	for _, r := range rs {
		if len(r.Starved) == 0 {
			continue
		}
		n++
		s := r.Starved[0]
		switch {
		case s.own():
			own++
		case len(s.Foreign) > 0:
			foreign++
		default:
			none++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("reader starved in %d of %d reader trials: by the run's own threads (noise or readers) in %d, by another process's thread in %d, by nothing the results name in %d; their late wakeups time the thread that held the CPU, not the kernel",
		n, len(rs), own, foreign, none)
}

// tailLine sums every reader's per-call tail (calls at or above its p99
// bucket): its share of the calls, its largest class, and how far the
// first calls after a wakeup are over-represented in it.
func tailLine(rs []Reader) string {
	var tail Parts
	var all, first uint64
	ctx := true
	for _, r := range rs {
		if r.Tail == nil {
			continue
		}
		t := r.Tail
		tail.Count += t.Count
		tail.Data += t.Data
		tail.EAGAIN += t.EAGAIN
		tail.Warm += t.Warm
		tail.Cold += t.Cold
		tail.First += t.First
		all += r.All.Count
		first += r.All.First
		ctx = ctx && r.FirstCalls > 0
	}
	if tail.Count == 0 || all == 0 {
		return ""
	}
	r := Reader{}
	if ctx {
		r.FirstCalls = 1
	}
	cs := classes(r, tail)
	l := fmt.Sprintf("per-call tail (calls ≥ each trial's p99 bucket): %d calls, %s of all, %s %s", tail.Count, pct(tail.Count, all), pct(cs[0].n, tail.Count), cs[0].name)
	if ctx && first > 0 {
		l += fmt.Sprintf("; first calls after a wakeup %.1f× their share", (float64(tail.First)/float64(tail.Count))/(float64(first)/float64(all)))
	}
	return l
}
