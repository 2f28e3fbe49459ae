package view

import (
	"strconv"

	"github.com/rtload/rtload/compare"
)

// isMark reports whether warning d is a trial marker (TrialMarks).
func isMark(d compare.Difference) bool {
	return d.Field == compare.WarnInvalid || d.Field == compare.WarnTraffic || d.Field == compare.WarnStarved || d.Field == compare.WarnShared
}

// markLines are the lines of trial-marker warning d, one per run holding
// marked trials: "WARNING: invalid trials in b: trial 2 (…): invalid: …".
func markLines(r *compare.Result, d compare.Difference) []string {
	var out []string
	for i, v := range d.Values {
		if v == compare.None {
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
