package report

import (
	"fmt"
	"strings"

	"github.com/rtload/rtload/results"
)

// trialName names trial t as a person counts: "trial 3 (recvmsg, round 2)".
func trialName(t results.Trial) string {
	v := t.Variant
	if v == "" {
		v = "run"
	}
	return fmt.Sprintf("trial %d (%s, round %d)", t.Index+1, v, t.Round+1)
}

// kernelLine names the kernel clocksource every wakeup latency was read
// through (current_clocksource at each trial's start; each one with its
// trials when they differ) and the RT throttling setting, from the
// trials' kernel watch; "" when no trial recorded one.
func kernelLine(s *results.Summary) string {
	var order []string
	trials := map[string][]int{}
	var first *results.KernelWatch
	for _, t := range s.Trials {
		k := t.Kernel
		if k == nil || k.ClocksourceStart == "" {
			continue
		}
		if first == nil {
			first = k
		}
		if _, ok := trials[k.ClocksourceStart]; !ok {
			order = append(order, k.ClocksourceStart)
		}
		trials[k.ClocksourceStart] = append(trials[k.ClocksourceStart], t.Index+1)
	}
	if first == nil {
		return ""
	}
	cs := order[0]
	if len(order) > 1 {
		parts := make([]string, len(order))
		for i, c := range order {
			parts[i] = fmt.Sprintf("%s (trials %s)", c, cpuList(trials[c]))
		}
		cs = "DIFFERS between trials: " + strings.Join(parts, ", ")
	}
	l := "kernel clocksource: " + cs
	if len(first.Available) > 0 {
		l += "\n  available: " + strings.Join(first.Available, ", ")
	}
	l += "\n"
	rt := first.RTThrottlingStart
	switch {
	case rt == (results.RTThrottling{}):
	case rt.RuntimeUs < 0:
		l += "RT throttling: off (sched_rt_runtime_us -1)\n"
	default:
		l += fmt.Sprintf("RT throttling: %d µs of every %d µs (sched_rt_runtime_us, sched_rt_period_us)\n", rt.RuntimeUs, rt.PeriodUs)
	}
	if !first.KmsgWatched {
		l += "kernel log NOT watched: only clocksource changes seen by polling count\n"
		for _, n := range first.Notes {
			l += "  " + n + "\n"
		}
	}
	return l
}

// housekeepingLine says where rtload's own threads ran: the first
// trial's confinement, or why they were not confined.
func housekeepingLine(s *results.Summary) string {
	for _, t := range s.Trials {
		switch h := t.Housekeeping; {
		case h != nil:
			l := fmt.Sprintf("housekeeping: rtload's own threads confined to CPU %s (%d moved, %d born there; %d exempt",
				cpuList(h.CPUs), h.Threads, h.Inherited, h.Exempt)
			if n := len(h.Errors) + h.ErrorsDropped; n > 0 {
				l += fmt.Sprintf("; %d errors, the first: %s", n, h.Errors[0])
			}
			return l + ")\n"
		case t.HousekeepingNote != "":
			return "housekeeping: " + t.HousekeepingNote + "\n"
		}
	}
	return ""
}

// markBanners are the *** lines of the trials marked invalid, with a
// starved reader, disturbed by rtload's own process, or with traffic not
// as specified: each trial, and why.
func markBanners(b *strings.Builder, s *results.Summary) {
	for _, t := range s.Trials {
		if t.Invalid != "" {
			fmt.Fprintf(b, "\n*** INVALID: %s: %s; its verdicts are undecided\n", trialName(t), strings.TrimPrefix(t.Invalid, "invalid: "))
		}
	}
	for _, t := range s.Trials {
		for _, r := range t.Readers {
			if r.Starved != "" {
				fmt.Fprintf(b, "\n*** READER STARVED: %s: reader %s %s\n", trialName(t), r.Name, r.Starved)
			}
		}
	}
	for _, t := range s.Trials {
		for _, m := range t.ProcessMarks {
			if !strings.Contains(t.Invalid, m) { // its own GC is INVALID above
				fmt.Fprintf(b, "\n*** RTLOAD ITSELF: %s: %s (see the marked records in intervals.jsonl)\n", trialName(t), m)
			}
		}
	}
	for _, t := range s.Trials {
		if t.TrafficNotAsSpecified != "" {
			fmt.Fprintf(b, "\n*** TRAFFIC NOT AS SPECIFIED: %s: %s\n", trialName(t), strings.TrimPrefix(t.TrafficNotAsSpecified, "traffic not as specified: "))
		}
	}
}

// maxThreadWarnings is how many thread warnings the report prints.
const maxThreadWarnings = 4

// threadWarnings warns, for the first trial with any, about the threads
// other than readers that could run on a reader's CPU.
func threadWarnings(b *strings.Builder, s *results.Summary) {
	others := 0
	var first *results.Trial
	for i := range s.Trials {
		if len(s.Trials[i].ThreadWarnings) == 0 {
			continue
		}
		if first == nil {
			first = &s.Trials[i]
		} else {
			others++
		}
	}
	if first == nil {
		return
	}
	w := first.ThreadWarnings
	fmt.Fprintf(b, "\nwarning: %s may run on a reader's CPU in %s", plural(len(w), "non-reader thread"), trialName(*first))
	if others > 0 {
		fmt.Fprintf(b, "\n  (and in %s)", plural(others, "other trial"))
	}
	b.WriteString(":\n")
	for _, l := range w[:min(len(w), maxThreadWarnings)] {
		fmt.Fprintf(b, "  %s\n", l)
	}
	if len(w) > maxThreadWarnings {
		fmt.Fprintf(b, "  … and %d more (thread_warnings in summary.json)\n", len(w)-maxThreadWarnings)
	}
}
