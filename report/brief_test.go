package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// TestTableFolded: the default view's table keeps the seed's rows up to
// the fold, one folded row holding the rest before the overflow row, and
// the seed's totals; the line under the rows line says what was folded.
func TestTableFolded(t *testing.T) {
	var cols []Column
	for i, l := range []string{"recvfrom/unhard", "recvfrom/hard", "recvmsg/unhard", "recvmsg/hard"} {
		cols = append(cols, Column{Label: l, Hist: testutil.SeedSnapshot(i, testutil.SeedAll, testutil.SeedWhole, true)})
	}
	var b bytes.Buffer
	if err := Table(&b, cols, TableOptions{Title: "per-call cost, all calls", Unit: "cycles", FoldBelow: FoldBelow, MaxRows: BriefRows, FoldHint: FoldHint}); err != nil {
		t.Fatal(err)
	}
	golden(t, "table_seed4_folded", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"     1472:         29          1          0          0\n", // the seed's first row
		"  8256+:", "Total:    2847707    2863582    2853688    2877088\n", // the seed's totals
		"folds", "-v prints every row",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("folded table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n > BriefRows+10 {
		t.Errorf("folded table of %d lines, want at most %d", n, BriefRows+10)
	}
}

// TestBrief is the default view of the report of a marked run: a short
// header, every mark on one line, the seed's table folded, the headline
// statistics; nothing of what -v adds (percentile blocks, message
// accounting, per-round statistics, noise).
func TestBrief(t *testing.T) {
	s := testutil.SeedSummary()
	s.Trials[1].Marks = append(s.Trials[1].Marks, results.Mark{Kind: results.MarkInvalid, Text: "clocksource changed (tsc → kvm-clock at 12.3 s)"})
	s.Trials[3].Marks = append(s.Trials[3].Marks, results.Mark{Kind: results.MarkTraffic, Endpoint: "lo450", Text: "lo450: send lag p99 49.5ms > max_send_lag 20ms"})
	s.Trials[0].ThreadWarnings = []string{"thread rtl-nz/spin.0 (tid 5001, SCHED_OTHER) may run on reader CPU 1 (mask 0-1)"}
	var b bytes.Buffer
	if err := Brief(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "brief_marks", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"*** INVALID: trial 2 (recvmsg, round 2): clocksource changed",
		"*** TRAFFIC NOT AS SPECIFIED: trial 4 (recvmsg, round 3): lo450",
		"warning: up to 1 non-reader thread may run on a reader's CPU, in 1 of 4 trials (-v lists them)",
		"headline statistics", "mean ns/call", "wakeup latency p99 (µs)", "traffic as specified",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("brief lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"per round (", "message accounting", "noise (achieved", "data calls only"} {
		if strings.Contains(out, not) {
			t.Errorf("brief holds %q, which is -v's", not)
		}
	}
	if n := strings.Count(out, "\n"); n > 60 {
		t.Errorf("brief of %d lines", n)
	}
	var unmarked []string // a mark carries its trial's reason, of any length
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "*** ") {
			unmarked = append(unmarked, l)
		}
	}
	checkWidth(t, strings.Join(unmarked, "\n"), 100)
}
