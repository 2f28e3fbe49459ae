package explain

import (
	"fmt"
	"strings"
)

// writeOwnNoise prints how the spikes, and the drains, fall in the cycle
// of the run's own noise that may keep the reader off its CPU, and what
// that makes them.
func writeOwnNoise(b *strings.Builder, w *Wakeups) {
	x := w.OwnNoise
	if x == nil {
		return
	}
	n := x.Noise
	fmt.Fprintf(b, "    the run's own %s may keep the reader off its CPU; its on phases are not recorded, only its cycle, on the reader's clock: ", n)
	if x.Spikes == 0 {
		b.WriteString("no spike to set against it\n")
	} else {
		fmt.Fprintf(b, "the %s window of its %s cycle that holds the most spikes holds %d of %d, against %.1f by chance (that window holds %d of the wakeups' deadlines, %.1f%%%s; p %s, allowing for the window being fitted)\n",
			duration(float64(n.OnNs)), duration(float64(n.OnNs+n.OffNs)), x.WindowSpikes, x.Spikes, x.Chance, x.WindowWakeups, 100*x.WindowShare, dutyNote(x), pValue(x.P))
		writeWindow(b, x)
	}
	if d := x.Drains; d != nil && d.Coincide {
		fmt.Fprintf(b, "      its on phases fall in the reader's drains: the %d ticks whose deadline falls in the %s window of its cycle that holds the most long drains drained in %s on average, the others in %s; %d of them at or above the trial's drain p90 (%s), against %.1f by chance (p %s): calls it preempted are timed with its run in them (the per-call tail)\n",
			d.Ticks, duration(float64(n.OnNs)), duration(d.MeanInNs), duration(d.MeanOutNs), d.LongIn, duration(float64(d.LongNs)), d.Chance, pValue(d.P))
	}
}

// dutyNote sets the window's share of the deadlines against the duty,
// when one is 1.5 times the other or more; "" when they agree.
func dutyNote(x *OwnNoisePhase) string {
	d := x.Noise.Duty()
	if x.WindowShare < 1.5*d && x.WindowShare > d/1.5 {
		return ""
	}
	return fmt.Sprintf(", where its duty alone gives %.1f%%: the reader's period puts its deadlines on a few points of the cycle", 100*d)
}

// writeWindow prints the wakeups of the spikes' window and the verdict.
func writeWindow(b *strings.Builder, x *OwnNoisePhase) {
	if x.WindowWakeups > 0 {
		slow := ""
		if x.SlowNs > 0 {
			slow = fmt.Sprintf("; %d of them at or above the trial's p90 (%s), against %.1f by chance (p %s)", x.SlowIn, us(x.SlowNs), x.SlowChance, pValue(x.SlowP))
		}
		fmt.Fprintf(b, "      the %d wakeups with their deadline in that window: mean latency %s, the others' %s%s\n", x.WindowWakeups, duration(x.MeanInNs), duration(x.MeanOutNs), slow)
	}
	if !x.Coincide {
		fmt.Fprintf(b, "      the spikes do not gather in one stretch of its cycle more than chance: noise[%d] does not single them out\n", x.Noise.Index)
		return
	}
	fmt.Fprintf(b, "      these %d spikes coincide with the run's own noise[%d]: the workload's doing, not the kernel's or the machine's (%d of them nothing else recorded explains)\n",
		x.WindowSpikes, x.Noise.Index, x.Explained)
}

// long prints ns as duration does, and in s from 1 s on: "8.0 s".
func long(ns float64) string {
	if ns >= 1e9 {
		return fmt.Sprintf("%.1f s", ns/1e9)
	}
	return duration(ns)
}

// pValue prints a probability: "0.036", "< 0.001".
func pValue(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// writeStarved prints each starved mark of the reader, who may have kept
// it off its CPU, and what that leaves explain to attribute.
func writeStarved(b *strings.Builder, r Reader) {
	for _, s := range r.Starved {
		fmt.Fprintf(b, "  reader starved: %s\n", s.Mark)
		for _, n := range s.OwnNoise {
			fmt.Fprintf(b, "    by the run's own %s\n", n)
		}
		if len(s.OwnNoise) > 0 {
			fmt.Fprintf(b, "      its duty cycle keeps it on at most %s of the %s window: %s\n", duration(float64(s.OwnOnNs)), long(float64(s.WindowNs)), roomFor(s))
		}
		for _, o := range s.OwnReaders {
			fmt.Fprintf(b, "    by the run's own %s, on its CPU at or above its priority\n", o)
		}
		for _, f := range s.Foreign {
			fmt.Fprintf(b, "    by another process's thread on its CPU (reader CPU shared): %s\n", f)
		}
		if s.Throttled != "" {
			fmt.Fprintf(b, "    the kernel logged RT throttling at %s of the trial: real-time threads were stopped\n", s.Throttled)
		}
		if !s.own() && len(s.Foreign) == 0 && s.Throttled == "" {
			b.WriteString("    by nothing the results name: none of the run's own threads at or above its priority on its CPU, no other process's thread seen there: RT throttling, or a thread the scans missed (short-lived, or a kernel thread)\n")
		}
		fmt.Fprintf(b, "    what explain can attribute: %s\n", starvedBound(r, s))
	}
}

// own reports whether the run's own noise or readers may have starved it.
func (s Starved) own() bool { return len(s.OwnNoise) > 0 || len(s.OwnReaders) > 0 }

// roomFor sets the own noise's on time against the reader's run-queue wait.
func roomFor(s Starved) string {
	if s.RunqueueWaitNs == 0 {
		return "the reader's run-queue wait was not counted"
	}
	wait := duration(float64(s.RunqueueWaitNs))
	if uint64(s.OwnOnNs) >= s.RunqueueWaitNs {
		return fmt.Sprintf("room for all %s the reader waited in its run queue (runqueue-wait, the whole trial)", wait)
	}
	return fmt.Sprintf("room for %s of the %s the reader waited in its run queue: the rest was something else", duration(float64(s.OwnOnNs)), wait)
}

// starvedBound says what a starved mark leaves explain to attribute.
func starvedBound(r Reader, s Starved) string {
	l := "a reader kept from waking counts no involuntary context switch, and its late wakeups time the thread that held its CPU, not the kernel's wakeup path"
	w := r.Wakeups
	switch {
	case len(s.Foreign) > 0 && !s.own():
		return l + "; the foreign thread's on and off times are not recorded, so explain cannot tell which spikes it caused: this trial's spikes say little about the kernel"
	case w != nil && w.OwnNoise != nil && w.OwnNoise.Coincide:
		return l + fmt.Sprintf("; %d of the %d spikes fall in noise[%d]'s window and are the workload's: only the other %d can be set against the kernel and the machine",
			w.OwnNoise.WindowSpikes, w.Spikes, w.OwnNoise.Noise.Index, w.Spikes-w.OwnNoise.WindowSpikes)
	case w != nil && w.OwnNoise != nil && w.OwnNoise.Drains != nil && w.OwnNoise.Drains.Coincide:
		return fmt.Sprintf("noise[%d]'s on phases fell in the reader's drains, not its wakeups: a reader preempted mid-drain counts an involuntary context switch, and the wait is in the per-call times of those %d ticks (the per-call tail), while the wakeup spikes are not its",
			w.OwnNoise.Noise.Index, w.OwnNoise.Drains.Ticks)
	case s.own():
		return l + "; which spikes the run's own threads caused is not recorded, nor found in the wakeup log: every spike of this trial may be the workload's"
	}
	return l + "; which spikes it hit is not recorded: every spike of this trial may be the starving thread's"
}

// ownNoiseBrief is the brief line of the spikes and drains against the
// run's own noise, "" without one.
func ownNoiseBrief(w *Wakeups) string {
	x := w.OwnNoise
	if x == nil {
		return ""
	}
	n := x.Noise
	l := fmt.Sprintf("  own noise[%d] %s (SCHED_%s %d, %s every %s):", n.Index, n.Kind, strings.ToUpper(n.Policy), n.Priority,
		duration(float64(n.OnNs)), duration(float64(n.OnNs+n.OffNs)))
	if x.Spikes > 0 {
		verdict := "not singled out"
		if x.Coincide {
			verdict = "the workload's"
		}
		l += fmt.Sprintf(" %d of %d spikes in one %s window of its cycle, %.1f by chance (p %s); that window's wakeups: %d of %d ≥ p90, %.1f by chance (p %s): %s",
			x.WindowSpikes, x.Spikes, duration(float64(n.OnNs)), x.Chance, pValue(x.P), x.SlowIn, x.WindowWakeups, x.SlowChance, pValue(x.SlowP), verdict)
	}
	if d := x.Drains; d != nil && d.Coincide {
		l += fmt.Sprintf("; its on phases fall in %d drains (mean %s, the others %s; p %s)", d.Ticks, duration(d.MeanInNs), duration(d.MeanOutNs), pValue(d.P))
	}
	return l + "\n"
}

// starvedBrief is the brief line of a starved mark.
func starvedBrief(s Starved) string {
	var by []string
	for _, n := range s.OwnNoise {
		by = append(by, fmt.Sprintf("its own noise[%d] (on at most %s)", n.Index, duration(float64(s.OwnOnNs))))
	}
	by = append(by, s.OwnReaders...)
	for _, f := range s.Foreign {
		by = append(by, "a foreign thread, "+f)
	}
	if s.Throttled != "" {
		by = append(by, "RT throttling (logged at "+s.Throttled+")")
	}
	if len(by) == 0 {
		by = []string{"nothing the results name (RT throttling, or a thread the scans missed)"}
	}
	wait := "run-queue wait not counted"
	if s.RunqueueWaitNs > 0 {
		wait = fmt.Sprintf("off its CPU %s of %s", duration(float64(s.RunqueueWaitNs)), long(float64(s.WindowNs)))
	}
	return fmt.Sprintf("  reader starved (%s): by %s\n", wait, strings.Join(by, "; "))
}

// ownNoiseLine sums the spikes that coincide with the run's own noise
// over the reader trials, per noise: "" when none does.
func ownNoiseLine(rs []Reader) string {
	var parts []string
	seen := map[string]int{}
	var spikes, trials []int
	for _, r := range rs {
		x := (*OwnNoisePhase)(nil)
		if r.Wakeups != nil {
			x = r.Wakeups.OwnNoise
		}
		if x == nil || !x.Coincide {
			continue
		}
		n := x.Noise
		n.DutyObserved = 0 // it varies from trial to trial
		name := n.String()
		i, ok := seen[name]
		if !ok {
			i, seen[name] = len(parts), len(parts)
			parts, spikes, trials = append(parts, name), append(spikes, 0), append(trials, 0)
		}
		spikes[i] += x.WindowSpikes
		trials[i]++
	}
	for i := range parts {
		parts[i] = fmt.Sprintf("%d spikes in %d of %d reader trials coincide with the on phases of the run's own %s", spikes[i], trials[i], len(rs), parts[i])
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": the workload's doing, not the kernel's or the machine's"
}
