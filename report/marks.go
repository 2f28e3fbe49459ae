package report

import (
	"fmt"
	"strings"

	"github.com/rtload/rtload/results"
)

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

// markBanners are the *** lines of the trials' marks (Summary.Marks):
// each trial invalid (the kernel changed what it measured, rtload's own
// garbage collection, a reader that measured nothing: one line), each
// starved reader, each disturbance by rtload's own process, each trial
// with traffic not as specified (one line), and why.
func markBanners(b *strings.Builder, s *results.Summary) {
	type line struct {
		t       *results.Trial
		invalid bool
	}
	once := map[line]bool{} // a trial's invalid and traffic marks make one line each
	for _, m := range s.Marks() {
		t := m.Trial
		if t == nil {
			continue // the run's own: printed above
		}
		switch l := (line{t, m.Kind.Invalidates()}); {
		case m.Kind.Invalidates() && !once[l]:
			once[l] = true
			fmt.Fprintf(b, "\n*** INVALID: %s: %s; its verdicts are undecided\n", t.Name(), t.MarkText(results.MarkInvalid, results.MarkEmpty))
		case m.Kind == results.MarkStarved:
			fmt.Fprintf(b, "\n*** READER STARVED: %s: %s\n", t.Name(), m.Text)
		case m.Kind == results.MarkShared:
			fmt.Fprintf(b, "\n*** READER CPU SHARED: %s: %s\n", t.Name(), m.Text)
		case m.Kind == results.MarkRtload:
			fmt.Fprintf(b, "\n*** RTLOAD ITSELF: %s: %s (see the marked records in intervals.jsonl)\n", t.Name(), m.Text)
		case m.Kind == results.MarkTraffic && !once[l]:
			once[l] = true
			fmt.Fprintf(b, "\n*** TRAFFIC NOT AS SPECIFIED: %s: %s\n", t.Name(), t.MarkText(results.MarkTraffic))
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
	fmt.Fprintf(b, "\nwarning: %s may run on a reader's CPU in %s", plural(len(w), "non-reader thread"), first.Name())
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
