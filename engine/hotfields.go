package engine

import "github.com/rtload/rtload/report"

// hotFields fills the results fields the hot-path work added (issues 13
// and 15): where the thread counters come from. Called from collect, at
// one spot, so the summary schema changes in one place.
func hotFields(rr *report.Reader, r *reader) {
	rr.CountersSource = r.countersSource
}
