package compare

import (
	"strings"

	"github.com/rtload/rtload/results"
)

// Trial-marker fields of Result.Warnings. Unlike the other warnings they
// are not differences between runs: one is listed whenever a run holds a
// trial so marked, even when every run does. Each value is that run's
// marked trials ("trial 3 (recvmsg, round 2): invalid: clocksource
// changed (tsc → hpet at 1.2 s)"), "; "-joined, or "(none)". The marks
// themselves are results' (results.MarkKind, the one vocabulary); these
// are only the warnings' field names.
const (
	// WarnInvalid: trials the kernel changed, or with a reader that
	// measured nothing (results.Trial.Valid); every verdict touching one
	// is VerdictUndecided.
	WarnInvalid = "invalid trials"
	// WarnTraffic: trials whose traffic missed the scenario's thresholds
	// (results.MarkTraffic).
	WarnTraffic = "traffic not as specified"
	// WarnStarved: trials with a reader runnable but kept off its CPU
	// (results.MarkStarved): RT throttling or a higher-priority thread.
	WarnStarved = "starved readers"
	// WarnShared: trials with a reader's CPU shared with another process's
	// thread at or above its priority, or another rtload's reader
	// (results.MarkShared).
	WarnShared = "shared reader CPUs"
)

// TrialMarkKinds are the kinds of trial marks that make a run not the
// run asked for in compare's and check's eyes, in the order per trial
// they are quoted (MarkText): MarkInvalid stands for every kind that
// invalidates a trial (results.MarkKind.Invalidates: MarkEmpty too).
// MarkRtload is not among them: it is reported, never judged.
var TrialMarkKinds = []results.MarkKind{results.MarkInvalid, results.MarkTraffic, results.MarkStarved, results.MarkShared}

// trialWarnings are the trial-marker warnings' fields, one per
// TrialMarkKinds entry.
var trialWarnings = map[results.MarkKind]string{results.MarkInvalid: WarnInvalid, results.MarkTraffic: WarnTraffic, results.MarkStarved: WarnStarved, results.MarkShared: WarnShared}

// MarkText is how compare and check quote trial t's marks of kind k (one
// of TrialMarkKinds): "invalid: clocksource changed (…)" (every mark that
// invalidates t: results.Trial.InvalidReason), "traffic not as
// specified: lo450: send lag p99 …", "reader rt runnable but off CPU 1
// for …" (a starved reader's text names it), each kind's marks
// "; "-joined; "" when t has none.
func MarkText(k results.MarkKind, t *results.Trial) string {
	switch k {
	case results.MarkInvalid:
		return t.InvalidReason()
	case results.MarkStarved, results.MarkShared:
		return t.MarkText(k)
	}
	if m := t.MarkText(k); m != "" {
		return k.Phrase() + ": " + m
	}
	return ""
}

// TrialMarks lists the trial-marker warnings of runs (WarnInvalid,
// WarnTraffic, WarnStarved, WarnShared): one Difference per marker some run holds,
// with each run's marked trials as its value.
func TrialMarks(runs []Run) []Difference {
	var out []Difference
	for _, k := range TrialMarkKinds {
		vals := make([]string, len(runs))
		found := false
		for i, r := range runs {
			var marked []string
			for j := range r.Summary.Trials {
				t := &r.Summary.Trials[j]
				if v := MarkText(k, t); v != "" {
					marked = append(marked, t.Name()+": "+v)
				}
			}
			vals[i] = None
			if len(marked) > 0 {
				vals[i], found = strings.Join(marked, "; "), true
			}
		}
		if found {
			out = append(out, Difference{Field: trialWarnings[k], Values: vals})
		}
	}
	return out
}
