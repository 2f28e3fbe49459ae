package report

import (
	"fmt"
	"slices"
	"strconv"
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

// markBanners are the *** lines of the trials' marks (Summary.Marks), one
// per cause (markGroups) with how many trials it marked and which: a
// marked baseline of 40 trials printed 77 lines, each mark twice for an
// interleaved pair (issue 34 row 13). A cause in one trial keeps its
// trial's name: "*** READER STARVED: trial 1 (recvfrom, round 1): …"; one
// in several counts them: "*** READER STARVED in 38 of 40 trials (1–38):
// …", with its first trial's text. A starved, invalid or empty cause
// names its likely culprit: the other process's thread at or above the
// reader's priority on its CPU that the trials saw most (Trial.Culprits),
// or, in results written before those were kept, the first other
// process's real-time thread in the trials' thread warnings.
func markBanners(b *strings.Builder, s *results.Summary) {
	total := len(s.Trials)
	for _, g := range markGroups(s) {
		head := markHead(g.kind)
		var l string
		if len(g.trials) == 1 {
			l = fmt.Sprintf("\n*** %s: %s: %s", head, g.first.Name(), g.mark.Text)
		} else {
			l = fmt.Sprintf("\n*** %s in %d of %d trials (%s): %s", head, len(g.trials), total, trialNumbers(g.trials), g.mark.Text)
			if g.differ {
				l += fmt.Sprintf(" (%s; each trial's in summary.json)", g.first.Name())
			}
		}
		switch g.kind {
		case results.MarkInvalid, results.MarkEmpty:
			if len(g.trials) == 1 {
				l += "; its verdicts are undecided"
			} else {
				l += "; their verdicts are undecided"
			}
		case results.MarkRtload:
			l += " (see the marked records in intervals.jsonl)"
		}
		if c := g.culprit(s); c != "" {
			l += "; " + c
		}
		b.WriteString(l + "\n")
	}
}

// markHead is the *** line's head for a kind of mark.
func markHead(k results.MarkKind) string {
	switch k {
	case results.MarkInvalid, results.MarkEmpty:
		return "INVALID"
	case results.MarkStarved:
		return "READER STARVED"
	case results.MarkShared:
		return "READER CPU SHARED"
	case results.MarkRtload:
		return "RTLOAD ITSELF"
	case results.MarkTraffic:
		return "TRAFFIC NOT AS SPECIFIED"
	}
	return strings.ToUpper(k.Phrase())
}

// markGroup is one cause of trial marks: marks of one kind, about one
// reader or traffic group, whose texts differ at most in their numbers
// (causeKey). mark is the first one, in the first trial marked (first);
// trials are the trials marked, numbered from 1, each once; differ says
// whether their texts differ (in their numbers).
type markGroup struct {
	kind   results.MarkKind
	key    string
	mark   results.Mark
	first  *results.Trial
	trials []int
	differ bool
	reader string
}

// markGroups groups the trials' marks by cause, in Summary.Marks' order
// (by kind, then as first found in run order).
func markGroups(s *results.Summary) []markGroup {
	var groups []markGroup
	at := map[string]int{}
	for _, m := range s.Marks() {
		t := m.Trial
		if t == nil {
			continue // the run's own: printed above
		}
		k := causeKey(m.Mark)
		i, ok := at[k]
		if !ok {
			i, at[k] = len(groups), len(groups)
			groups = append(groups, markGroup{kind: m.Kind, key: k, mark: m.Mark, first: t, reader: m.Reader})
		}
		g := &groups[i]
		if n := t.Index + 1; !slices.Contains(g.trials, n) {
			g.trials = append(g.trials, n)
		}
		g.differ = g.differ || m.Text != g.mark.Text
	}
	return groups
}

// causeKey is what tells causes apart: the kind (invalid and empty as
// one), the reader or traffic group, and the text with every run of
// digits taken as one (the same cause measured at other numbers).
func causeKey(m results.Mark) string {
	k := string(m.Kind)
	if m.Kind.Invalidates() {
		k = string(results.MarkInvalid)
	}
	var b strings.Builder
	digits := false
	for _, r := range m.Text {
		if r >= '0' && r <= '9' || (digits && r == '.') {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return k + "\x00" + m.Reader + "\x00" + m.Endpoint + "\x00" + b.String()
}

// culprit names the likely culprit of a starved, invalid or empty cause,
// "" for other kinds or when the trials saw none: the culprit of the
// cause's reader (any reader for a mark of the whole trial) seen in the
// most of its trials (Trial.Culprits), "culprit: process 4321 (hog)
// thread 4321 (hog) SCHED_FIFO 80 on CPUs 1, in 38 of them"; else the
// first real-time thread of another process in their thread warnings.
func (g markGroup) culprit(s *results.Summary) string {
	if g.kind != results.MarkStarved && !g.kind.Invalidates() {
		return ""
	}
	type seen struct {
		c      results.Culprit
		trials int
	}
	var order []string
	count := map[string]*seen{}
	var warning string
	warned := 0
	for i := range s.Trials {
		t := &s.Trials[i]
		if !slices.Contains(g.trials, t.Index+1) {
			continue
		}
		once := map[string]bool{}
		for _, c := range t.Culprits {
			if g.reader != "" && c.Reader != g.reader {
				continue
			}
			k := fmt.Sprint(c.PID, "/", c.TID)
			if once[k] {
				continue
			}
			once[k] = true
			if count[k] == nil {
				count[k] = &seen{c: c}
				order = append(order, k)
			}
			count[k].trials++
		}
		for _, w := range t.ThreadWarnings {
			if strings.HasPrefix(w, "process ") {
				if warning == "" {
					warning = w
				}
				if w == warning {
					warned++
				}
				break
			}
		}
	}
	if len(order) > 0 {
		best := count[order[0]]
		for _, k := range order[1:] {
			if count[k].trials > best.trials {
				best = count[k]
			}
		}
		l := "culprit: " + best.c.ForeignThread.String()
		if len(g.trials) > 1 {
			l += fmt.Sprintf(", in %d of them", best.trials)
		}
		if n := len(order) - 1; n > 0 {
			l += fmt.Sprintf(" (and %s: culprits in summary.json)", plural(n, "other"))
		}
		return l
	}
	if warning != "" {
		l := "a likely culprit: " + warning
		if len(g.trials) > 1 {
			l += fmt.Sprintf(", in %d of them", warned)
		}
		return l
	}
	return ""
}

// trialNumbers prints trial numbers as ranges: "1–38", "3, 9".
func trialNumbers(ts []int) string {
	var parts []string
	for i := 0; i < len(ts); {
		j := i
		for j+1 < len(ts) && ts[j+1] == ts[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(ts[i])+"–"+strconv.Itoa(ts[j]))
		} else {
			parts = append(parts, strconv.Itoa(ts[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
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
