package compare

import (
	"strconv"
	"strings"

	"github.com/rtload/rtload/results"
)

// Trial-marker fields of Result.Warnings. Unlike the other warnings they
// are not differences between runs: one is listed whenever a run holds a
// trial so marked, even when every run does. Each value is that run's
// marked trials ("trial 3 (recvmsg, round 2): invalid: clocksource
// changed (tsc → hpet at 1.2 s)"), "; "-joined, or "(none)".
const (
	// WarnInvalid: trials the kernel changed (results.Trial.Invalid);
	// every verdict touching one is VerdictUndecided.
	WarnInvalid = "invalid trials"
	// WarnTraffic: trials whose traffic missed the scenario's thresholds
	// (results.Trial.TrafficNotAsSpecified).
	WarnTraffic = "traffic not as specified"
	// WarnStarved: trials with a reader runnable but kept off its CPU
	// (results.Reader.Starved): RT throttling or a higher-priority thread.
	WarnStarved = "starved readers"
)

// starvedMark is trial t's starved readers, "reader rt runnable but off
// CPU 1 for …", "; "-joined; "" when none was.
func starvedMark(t results.Trial) string {
	var out []string
	for _, r := range t.Readers {
		if r.Starved != "" {
			out = append(out, "reader "+r.Name+" "+r.Starved)
		}
	}
	return strings.Join(out, "; ")
}

// TrialMarks lists the trial-marker warnings of runs (WarnInvalid,
// WarnTraffic, WarnStarved): one Difference per marker some run holds, with each run's
// marked trials as its value.
func TrialMarks(runs []Run) []Difference {
	var out []Difference
	for _, m := range []struct {
		field string
		get   func(results.Trial) string
	}{
		{WarnInvalid, func(t results.Trial) string { return t.Invalid }},
		{WarnTraffic, func(t results.Trial) string { return t.TrafficNotAsSpecified }},
		{WarnStarved, starvedMark},
	} {
		vals := make([]string, len(runs))
		found := false
		for i, r := range runs {
			var marked []string
			for _, t := range r.Summary.Trials {
				if v := m.get(t); v != "" {
					marked = append(marked, trialName(t)+": "+v)
				}
			}
			vals[i] = none
			if len(marked) > 0 {
				vals[i], found = strings.Join(marked, "; "), true
			}
		}
		if found {
			out = append(out, Difference{Field: m.field, Values: vals})
		}
	}
	return out
}

// isMark reports whether warning d is a trial marker (TrialMarks).
func isMark(d Difference) bool {
	return d.Field == WarnInvalid || d.Field == WarnTraffic || d.Field == WarnStarved
}

// markLines are the lines of trial-marker warning d, one per run holding
// marked trials: "WARNING: invalid trials in b: trial 2 (…): invalid: …".
func (r *Result) markLines(d Difference) []string {
	var out []string
	for i, v := range d.Values {
		if v == none {
			continue
		}
		l := "run " + strconv.Itoa(i+1)
		if i < len(r.Runs) {
			l = r.Runs[i].Label
		}
		out = append(out, "WARNING: "+d.Field+" in "+l+": "+v)
	}
	return out
}
