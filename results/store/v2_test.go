package store_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// TestReadV2 reads a version 2 summary written by the code of 40bfdd6^,
// the last to write version 2 (testdata/v2; mkv2.go.txt made it): every
// field version 3 reads differently comes out typed. Its trials are in
// process 0; its marks, kept in version 2's five fields, are one list per
// trial; its env and spec are typed (Env, Spec, Plan). The whole summary
// as this version writes it is the golden file, so that any change to
// how version 2 reads shows as a diff.
func TestReadV2(t *testing.T) {
	s, err := store.ReadSummary("testdata/v2")
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 2 || len(s.Trials) != 4 {
		t.Fatalf("version %d, %d trials; want the fixture's 2 and 4", s.Version, len(s.Trials))
	}
	for _, tr := range s.Trials {
		if tr.Process != 0 {
			t.Errorf("%s: process %d, want 0", tr.Name(), tr.Process)
		}
	}
	wantMarks := [][]results.Mark{
		nil,
		{{Kind: results.MarkInvalid, Text: "clocksource changed (tsc → hpet at 12.3 s)"}},
		{{Kind: results.MarkStarved, Reader: "drain", Text: "reader drain runnable but off CPU 1 for 412ms (2.1% of the 20s window; schedstat run-queue wait): RT throttling or a thread above SCHED_FIFO 80 there"}},
		{{Kind: results.MarkTraffic, Endpoint: "lo450", Text: "lo450: send lag p99 7.2ms > max_send_lag 1ms"}},
	}
	for i, tr := range s.Trials {
		if diff := cmp.Diff(wantMarks[i], tr.Marks); diff != "" {
			t.Errorf("%s: marks (-want +got):\n%s", tr.Name(), diff)
		}
	}
	if got := s.Trials[1].InvalidReason(); got != "invalid: clocksource changed (tsc → hpet at 12.3 s)" {
		t.Errorf("invalid reason %q", got)
	}
	if k := s.Trials[1].Kernel; k == nil || len(k.Events) != 1 || k.Events[0].At != 12300*time.Millisecond || k.Events[0].Kind != results.ClocksourceSwitch {
		t.Errorf("kernel watch %+v", k)
	}
	if e := s.Env; e.Kernel != "6.1.0-18-amd64" || e.CPUs != 8 || e.KernelConfig["CONFIG_HZ"] != "250" || !e.Privileges.CapSysNice || e.Counters[1].Note != "invariant" {
		t.Errorf("env %+v", e)
	}
	want := results.Plan{Known: true, Duration: 4 * time.Second, Warmup: 500 * time.Millisecond, Rounds: 2, Processes: 1, Variants: []string{"recvfrom", "recvmsg"}}
	if diff := cmp.Diff(want, s.Plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if l := s.Spec.Leaves(); l["readers[0].method"] != "recvfrom" || l["endpoints[0].count"] != "450" {
		t.Errorf("spec leaves %v", l)
	}
	if a := s.Trials[0].Readers[0].Applied; a.TID != 4242 || a.Policy != "SCHED_FIFO" || !a.RealTime() {
		t.Errorf("applied %+v", a)
	}

	dir := t.TempDir()
	testutil.WriteSummary(t, dir, s)
	v3, err := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "v2/summary.v3.json", v3)
	again, err := store.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Version = results.SummaryVersion
	if diff := cmp.Diff(s, again); diff != "" {
		t.Errorf("the v2 summary written as v3 and read back (-want +got):\n%s", diff)
	}
}
