package results_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/results"
)

// TestMarks: Summary.Marks gathers the run's own marks (one per degraded
// reason, stopped, incomplete) and every trial's, by kind in MarkKinds
// order and within a kind in run order; a trial's helpers answer what
// report, compare and check ask of it.
func TestMarks(t *testing.T) {
	gc := results.Mark{Kind: results.MarkInvalid, Text: "rtload's own garbage collection ran once in 1 interval record (#3): …"}
	clock := results.Mark{Kind: results.MarkInvalid, Text: "clocksource changed (tsc → hpet at 12.3 s)"}
	empty := results.Mark{Kind: results.MarkEmpty, Reader: "rt2", Text: "reader rt2 measured nothing: 0 wakeups …"}
	starved := results.Mark{Kind: results.MarkStarved, Reader: "rt", Text: "reader rt runnable but off CPU 1 for 412ms (…)"}
	lo := results.Mark{Kind: results.MarkTraffic, Endpoint: "lo", Text: "lo: send lag p99 7.2ms > max_send_lag 1ms"}
	hi := results.Mark{Kind: results.MarkTraffic, Endpoint: "hi", Text: "hi: rate 9.0 msg/s against 10.0 (…)"}
	rss := results.Mark{Kind: results.MarkRtload, Text: "rtload's RSS passed its bound in 1 interval record (at most 80 MiB)"}
	s := &results.Summary{Degraded: true, DegradedReasons: []string{"SCHED_OTHER", "memory not locked"}, Stopped: true, InProgress: true,
		Trials: []results.Trial{
			{Index: 0, Round: 0, Variant: "recvfrom", Marks: []results.Mark{lo, starved, hi}},
			{Index: 1, Round: 0, Marks: []results.Mark{clock, rss, gc}},
			{Index: 2, Round: 1, Variant: "recvfrom"},
			{Index: 3, Round: 1, Variant: "recvmsg", Marks: []results.Mark{empty}},
		}}
	type got struct {
		Kind  results.MarkKind
		Trial int // -1: the run's
		Text  string
	}
	var marks []got
	for _, m := range s.Marks() {
		g := got{m.Kind, -1, m.Text}
		if m.Trial != nil {
			g.Trial = m.Trial.Index
		}
		marks = append(marks, g)
	}
	want := []got{
		{results.MarkDegraded, -1, "SCHED_OTHER"},
		{results.MarkDegraded, -1, "memory not locked"},
		{results.MarkStopped, -1, "interrupted: trials are missing or partial"},
		{results.MarkIncomplete, -1, "summary.json is a checkpoint of a run that never finished"},
		{results.MarkInvalid, 1, clock.Text},
		{results.MarkInvalid, 1, gc.Text},
		{results.MarkEmpty, 3, empty.Text},
		{results.MarkStarved, 0, starved.Text},
		{results.MarkRtload, 1, rss.Text},
		{results.MarkTraffic, 0, lo.Text},
		{results.MarkTraffic, 0, hi.Text},
	}
	if diff := cmp.Diff(want, marks); diff != "" {
		t.Errorf("Marks (-want +got):\n%s", diff)
	}
	tr := s.Trials
	for _, tc := range []struct {
		name          string
		got, wantText string
	}{
		{"trial 1's name", tr[0].Name(), "trial 1 (recvfrom, round 1)"},
		{"a variant without a name", tr[1].Name(), "trial 2 (run, round 1)"},
		{"traffic, both groups", tr[0].MarkText(results.MarkTraffic), lo.Text + "; " + hi.Text},
		{"invalid: kernel, then GC", tr[1].InvalidReason(), "invalid: " + clock.Text + "; " + gc.Text},
		{"an empty reader invalidates", tr[3].InvalidReason(), "invalid: " + empty.Text},
		{"a valid trial", tr[0].InvalidReason(), ""},
	} {
		if tc.got != tc.wantText {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.wantText)
		}
	}
	if !tr[0].Valid() || tr[1].Valid() || !tr[2].Valid() || tr[3].Valid() {
		t.Errorf("valid: %v %v %v %v, want true false true false", tr[0].Valid(), tr[1].Valid(), tr[2].Valid(), tr[3].Valid())
	}
	if !tr[0].Marked(results.MarkStarved) || tr[0].Marked(results.MarkInvalid, results.MarkEmpty) || tr[2].Marked() || !tr[1].Marked() {
		t.Error("Marked answers wrong")
	}
	if (&results.Summary{Degraded: true}).Marks()[0].Text != "run without some privileges (--allow-degraded)" {
		t.Error("degraded without a reason: no mark")
	}
	for _, k := range results.MarkKinds {
		if k.Phrase() == "" || k.Invalidates() != (k == results.MarkInvalid || k == results.MarkEmpty) {
			t.Errorf("kind %q: phrase %q, invalidates %v", k, k.Phrase(), k.Invalidates())
		}
	}
}
