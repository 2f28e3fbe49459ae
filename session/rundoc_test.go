package session

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
)

// disturbedRun is a run of 4 processes, one round each, whose process 2
// (numbered from 1) a thread on the reader's CPU kept off it for 176 ms:
// the machine's, which a check leaves out.
func disturbedRun() *results.Summary {
	s := testutil.RoundsRun([]float64{1000, 1010, 990, 1005}, []float64{1, 1, 1, 1})
	s.Version = results.SummaryVersion
	for i := range s.Trials {
		t := &s.Trials[i]
		t.Process, t.Round, t.DurationNs = i, 0, 8e9
		t.Readers[0].Lost = 0
		t.Readers[0].Wakeups = 800
		t.Readers[0].Applied.CPUs = []int{1}
		t.Readers[0].Counters = []results.Counter{{Name: "task-clock", Value: 8e8}, {Name: "runqueue-wait", Value: 176e6}}
	}
	s.Trials[1].Marks = []results.Mark{{Kind: results.MarkStarved, Reader: "rt",
		Text: "reader rt runnable but off CPU 1 for 176ms (2.2% of the 8s window; schedstat run-queue wait): RT throttling or a thread at or above SCHED_FIFO 80 there"}}
	return s
}

// TestReportLeftOut: report, text and JSON, says how many processes ran,
// which one a check leaves out and why, and that its figures are over
// all of them (never mixed in silently).
func TestReportLeftOut(t *testing.T) {
	dir := t.TempDir()
	s := disturbedRun()
	testutil.WriteSummary(t, dir, s)
	var b bytes.Buffer
	if err := WriteRun(&b, s, dir, "", report.Quiet); err != nil {
		t.Fatal(err)
	}
	const want = "4 processes ran, 1 left out by a check (disturbed by the machine: process 2: reader rt off CPU 1 for 176ms (starved)): the figures of this report are over all 4; a check judges the other 3"
	if !strings.Contains(b.String(), want) {
		t.Errorf("closing block lacks %q:\n%s", want, b.String())
	}
	doc, err := ReadRunReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Replaced == nil || doc.Replaced.Processes != 4 || len(doc.Replaced.Disturbed) != 1 || doc.Replaced.Disturbed[0].Process != 1 {
		t.Errorf("report --format json: replaced %+v, want process 1 (numbered from 0) of 4", doc.Replaced)
	}
}
