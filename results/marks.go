package results

import (
	"slices"
	"strconv"
	"strings"
)

// A run that was not the run asked for says so in marks, each with a
// kind and its text. A trial's marks are its own list (Trial.Marks);
// the run's own (degraded, stopped early, incomplete) are the Summary's
// fields; Summary.Marks gathers both, once, for every reader: the
// report's *** lines, compare's warnings and undecided verdicts, check's
// "cannot judge".

// MarkKind names one way a run or one of its trials was not the run
// asked for.
type MarkKind string

// The kinds of marks, in the order every output lists them. The first
// three are the run's (Summary.Marks makes them from the Summary's
// fields), the others a trial's (Trial.Marks).
const (
	// MarkDegraded: the run went on without a privilege or a requirement
	// it asked for (--allow-degraded); one mark per Summary.DegradedReasons.
	MarkDegraded MarkKind = "degraded"
	// MarkStopped: the run was interrupted (Summary.Stopped): its last
	// trial is partial and rounds may be missing.
	MarkStopped MarkKind = "stopped"
	// MarkIncomplete: summary.json is a checkpoint of a run that never
	// finished (Summary.InProgress).
	MarkIncomplete MarkKind = "incomplete"
	// MarkInvalid: the kernel changed what the trial measured (a
	// clocksource switch, an unstable clocksource or TSC, RT throttling
	// activated or its setting changed: Trial.Kernel holds the events; a
	// clocksource other than the run's first trial's), or rtload's own
	// garbage collection stopped its readers. Every verdict touching the
	// trial is undecided (Invalidates).
	MarkInvalid MarkKind = "invalid"
	// MarkEmpty: a reader measured nothing (no wakeup, no recv call on its
	// sockets, or every wakeup record dropped), Mark.Reader names it and
	// the text the cause. It invalidates the trial as MarkInvalid does.
	MarkEmpty MarkKind = "empty"
	// MarkStarved: a reader (Mark.Reader) was runnable but kept off its
	// CPU for more than 1% of the window (at least 10 ms) by the kernel's
	// own count, /proc/self/task/TID/schedstat's run-queue wait: RT
	// throttling or a thread of higher priority on its CPU. The kernel
	// logs "sched: RT throttling activated" only once per boot, so this
	// count is what catches every later throttling.
	MarkStarved MarkKind = "starved"
	// MarkShared: a reader's CPU was shared (Mark.Reader) with a thread of
	// another process that may run there at or above the reader's
	// priority (any SCHED_DEADLINE thread), or with another rtload's
	// reader: seen at the trial's start, during it (every second) or at
	// its end. Trial.Culprits names each (process, thread, policy,
	// priority, CPU). Such a thread can preempt the reader whenever it
	// runs, whether or not it did enough to starve it (MarkStarved):
	// two laight-450 runs on one CPU had a wakeup p99 2–8× a lone run's.
	MarkShared MarkKind = "shared"
	// MarkRtload: rtload itself may have disturbed the trial, from its
	// interval records (Interval.Mark): its RSS past the run's bound, its
	// metrics endpoint flooded. (Its own garbage collection is
	// MarkInvalid: the readers waited for it.)
	MarkRtload MarkKind = "rtload"
	// MarkTraffic: a traffic group (Mark.Endpoint) missed its thresholds:
	// its rate beyond traffic[].rate_tolerance, its send-lag p99 above
	// traffic[].max_send_lag.
	MarkTraffic MarkKind = "traffic"
)

// MarkKinds are every kind, in the order outputs list them.
var MarkKinds = []MarkKind{MarkDegraded, MarkStopped, MarkIncomplete, MarkInvalid, MarkEmpty, MarkStarved, MarkShared, MarkRtload, MarkTraffic}

// Phrase names the kind in a sentence, the one wording every output
// uses: a starved reader's kind reads as reader starved, MarkTraffic as
// traffic not as specified, MarkRtload as rtload itself, MarkStopped as
// stopped early; the others read as the kind itself (invalid, empty,
// degraded, incomplete).
func (k MarkKind) Phrase() string {
	switch k {
	case MarkStopped:
		return "stopped early"
	case MarkStarved:
		return "reader starved"
	case MarkShared:
		return "reader CPU shared"
	case MarkRtload:
		return "rtload itself"
	case MarkTraffic:
		return "traffic not as specified"
	}
	return string(k)
}

// Invalidates reports whether a trial marked k measured something other
// than what was asked for, so that no verdict may rest on it: MarkInvalid
// and MarkEmpty.
func (k MarkKind) Invalidates() bool { return k == MarkInvalid || k == MarkEmpty }

// Mark is one way a trial (or the run) was not the run asked for.
type Mark struct {
	Kind MarkKind `json:"kind"`
	// Reader names the reader a reader's mark is about (MarkStarved,
	// MarkEmpty), Endpoint the traffic group of a MarkTraffic; "" for a
	// mark of the whole trial.
	Reader   string `json:"reader,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	// Text says what happened, with its numbers, for a person; it names
	// its reader or group: "reader rt runnable but off CPU 1 for 412ms
	// (…)", "lo450: send lag p99 7.2ms > max_send_lag 1ms", "clocksource
	// changed (tsc → hpet at 12.3 s)".
	Text string `json:"text"`
}

// RunMark is a mark with what it marks: Trial, or nil for the run's own.
type RunMark struct {
	Mark
	Trial *Trial
}

// Marks gathers every mark of the run, in MarkKinds order and, within a
// kind, in run order: the run's own (one MarkDegraded per degraded reason,
// or one without a reason; MarkStopped; MarkIncomplete) and each timed
// trial's (Trial.Marks; profiled trials are never judged). Every output
// that says a run or a trial was not as asked for reads this list.
func (s *Summary) Marks() []RunMark {
	var out []RunMark
	if s.Degraded {
		if len(s.DegradedReasons) == 0 {
			out = append(out, RunMark{Mark: Mark{Kind: MarkDegraded, Text: "run without some privileges (--allow-degraded)"}})
		}
		for _, r := range s.DegradedReasons {
			out = append(out, RunMark{Mark: Mark{Kind: MarkDegraded, Text: r}})
		}
	}
	if s.Stopped {
		out = append(out, RunMark{Mark: Mark{Kind: MarkStopped, Text: "interrupted: trials are missing or partial"}})
	}
	if s.InProgress {
		out = append(out, RunMark{Mark: Mark{Kind: MarkIncomplete, Text: "summary.json is a checkpoint of a run that never finished"}})
	}
	for _, k := range MarkKinds[3:] {
		for i := range s.Trials {
			t := &s.Trials[i]
			for _, m := range t.Marks {
				if m.Kind == k {
					out = append(out, RunMark{Mark: m, Trial: t})
				}
			}
		}
	}
	return out
}

// Marked reports whether t holds a mark of one of kinds (of any kind
// when none is given).
func (t *Trial) Marked(kinds ...MarkKind) bool {
	for _, m := range t.Marks {
		if len(kinds) == 0 || slices.Contains(kinds, m.Kind) {
			return true
		}
	}
	return false
}

// MarkText is the text of t's marks of kinds, in order, "; "-joined; ""
// when it holds none.
func (t *Trial) MarkText(kinds ...MarkKind) string {
	var parts []string
	for _, m := range t.Marks {
		if slices.Contains(kinds, m.Kind) {
			parts = append(parts, m.Text)
		}
	}
	return strings.Join(parts, "; ")
}

// Valid reports whether no mark of t invalidates it (Invalidates).
func (t *Trial) Valid() bool {
	for _, m := range t.Marks {
		if m.Kind.Invalidates() {
			return false
		}
	}
	return true
}

// InvalidReason is why t is not valid, as compare and check print it:
// "invalid: " and the text of every mark that invalidates it, "; "-joined;
// "" for a valid trial.
func (t *Trial) InvalidReason() string {
	if t.Valid() {
		return ""
	}
	return "invalid: " + t.MarkText(MarkInvalid, MarkEmpty)
}

// Name names the trial as every output counts it, from 1: "trial 3
// (recvmsg, round 2)"; "run" stands for a variant without a name.
func (t *Trial) Name() string {
	v := t.Variant
	if v == "" {
		v = "run"
	}
	return "trial " + strconv.Itoa(t.Index+1) + " (" + v + ", round " + strconv.Itoa(t.Round+1) + ")"
}

// Judged reports whether a trial mark of kind k makes a trial not the
// trial asked for in a verdict's eyes: MarkInvalid, MarkEmpty,
// MarkStarved, MarkShared and MarkTraffic (compare.TrialMarkKinds quotes
// them). MarkRtload is reported, never judged.
func (k MarkKind) Judged() bool {
	return k == MarkInvalid || k == MarkEmpty || k == MarkStarved || k == MarkShared || k == MarkTraffic
}
