package view

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// TestCompareV2V3: a version 2 summary (results/store/testdata/v2, written by
// the code of 40bfdd6^) compares with one this version writes: the same
// columns and metrics from both, the v2 run's marks (kept in its five old
// fields) warned about as a v3 run's are, its invalid trial making every
// verdict touching it undecided, and the typed env and spec of both
// compared field by field: the v3 run has the v2 run's scenario and
// machine but for its kernel, and only the kernel differs.
func TestCompareV2V3(t *testing.T) {
	v2, err := store.ReadSummary("../../results/store/testdata/v2")
	if err != nil {
		t.Fatal(err)
	}
	v3dir := filepath.Join(t.TempDir(), "v3")
	s := testutil.SeedSummary()
	s.Spec, s.Plan, s.Env = v2.Spec, v2.Plan, v2.Env
	s.Env.Kernel = "6.1.0-20-amd64"
	s.Trials[0].Marks = []results.Mark{{Kind: results.MarkStarved, Reader: "drain", Text: "reader drain runnable but off CPU 1 for 30ms (…)"}}
	if err := comparetest.Mkdir(v3dir); err != nil {
		t.Fatal(err)
	}
	testutil.WriteSummary(t, v3dir, s)
	runs, err := load.Runs([]string{"../../results/store/testdata/v2", v3dir}, []string{"v2", "v3"})
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].Summary.Version != 2 || runs[1].Summary.Version != results.SummaryVersion {
		t.Fatalf("versions %d, %d", runs[0].Summary.Version, runs[1].Summary.Version)
	}
	res, err := facts.Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range res.Columns {
		labels = append(labels, c.Label)
	}
	if strings.Join(labels, " ") != "recvfrom/v2 recvfrom/v3 recvmsg/v2 recvmsg/v3" {
		t.Errorf("columns %v", labels)
	}
	undecided := 0
	for _, m := range res.Metrics {
		if m.Column == "recvmsg/v3" && m.Verdict == compare.VerdictUndecided {
			undecided++
		}
	}
	if undecided == 0 {
		t.Errorf("no recvmsg verdict undecided against the v2 run's invalid recvmsg trial: %+v", res.Metrics)
	}
	var b bytes.Buffer
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"WARNING: invalid trials in v2: trial 2 (recvmsg, round 2): invalid: clocksource changed (tsc → hpet at 12.3 s)",
		"WARNING: traffic not as specified in v2: trial 4 (recvmsg, round 3): traffic not as specified: lo450: send lag p99 7.2ms > max_send_lag 1ms",
		"WARNING: starved readers in v2: trial 3 (recvfrom, round 3): reader drain runnable but off CPU 1 for 412ms",
		"WARNING: starved readers in v3: trial 1 (recvfrom, round 2): reader drain runnable but off CPU 1 for 30ms (…)",
		"  kernel  6.1.0-18-amd64  6.1.0-20-amd64\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "runs differ in") {
		t.Errorf("the runs differ in more than the kernel:\n%s", out)
	}
}
