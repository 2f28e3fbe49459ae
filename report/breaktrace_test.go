package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rtload/rtload/results"
)

// TestReportTracingStopped: a reader whose breaktrace stopped ftrace is
// said in the report's header, with the summary's note (issue 12: it used
// to leave tracing_on = 0 without a word).
func TestReportTracingStopped(t *testing.T) {
	note := "reader rt: breaktrace stopped ftrace at the wakeup due at 5 ns (latency above 1ns) and left /sys/kernel/tracing/tracing_on = 0, ..."
	s := &results.Summary{Version: results.SummaryVersion, Scenario: "x",
		Trials: []results.Trial{{Variant: "base", Readers: []results.Reader{{Name: "rt", BrokeTraceAtNs: 5, TracingStopped: note}}}}}
	var b bytes.Buffer
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "*** TRACING STOPPED (trial 1 (base, round 1)): "+note) {
		t.Errorf("report does not say tracing stopped:\n%s", b.String())
	}
	s.Trials[0].Readers[0].TracingStopped = ""
	b.Reset()
	Report(&b, s)
	if strings.Contains(b.String(), "TRACING STOPPED") {
		t.Errorf("report says tracing stopped without a note:\n%s", b.String())
	}
}
