package results_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// costsOf is a TickStats (with HDR) of n calls at v ticks and n at 2v.
func costsOf(n int, v uint64) results.TickStats {
	h := record.NewHDR(1 << 20)
	for range n {
		h.Record(v)
		h.Record(2 * v)
	}
	return results.TickStatsOf(h, true)
}

// TestProfilerCosts: the profiler's cost of a (variant, reader) merges
// its timed rounds and its profiled rounds apart; a variant without
// profiled trials has none.
func TestProfilerCosts(t *testing.T) {
	s := testutil.SeedSummary()
	for i := range s.Trials {
		s.Trials[i].Readers[0].PerCallTicks = costsOf(100, 1000)
	}
	for _, tr := range s.Trials {
		if tr.Variant != "recvmsg" {
			continue
		}
		tr.Profiled = true
		tr.Readers = []results.Reader{tr.Readers[0]}
		tr.Readers[0].PerCallTicks = costsOf(100, 1100)
		s.ProfiledTrials = append(s.ProfiledTrials, tr)
	}
	costs := results.ProfilerCosts(s)
	if len(costs) != 1 || costs[0].Variant != "recvmsg" || costs[0].Reader != "drain" {
		t.Fatalf("costs = %+v, want one for recvmsg/drain", costs)
	}
	c := costs[0]
	if c.Timed.Count != 400 || c.Profiled.Count != 400 || !c.TimedExact || !c.ProfiledExact {
		t.Errorf("counts %d timed, %d profiled (exact %v %v), want 400 each, exact", c.Timed.Count, c.Profiled.Count, c.TimedExact, c.ProfiledExact)
	}
	// p50 is the lower value (1000 vs 1100, within HDR's precision).
	if got := c.P50Change(); math.Abs(got-0.1) > 0.002 {
		t.Errorf("p50 change %.4f, want 0.1 (p50 %v timed, %v profiled)", got, c.Timed.P50Ticks, c.Profiled.P50Ticks)
	}
}

// TestProfilesRoundTrip: profiled trials and profiles survive
// summary.json, apart from the timed trials.
func TestProfilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := testutil.SeedSummary()
	pt := s.Trials[1]
	pt.Index, pt.Profiled = 4, true
	pt.Readers = []results.Reader{pt.Readers[0]}
	pt.Readers[0].WakeupLog = nil // the timed trial's: a profiled trial logs to its own files
	pt.Readers[0].Profile = &results.ReaderProfile{TID: 4243, Event: "cpu-clock", Samples: 900, ThreadSamples: 900, Outside: 30}
	s.ProfiledTrials = []results.Trial{pt}
	s.Profiles = []results.VariantProfile{{Variant: "recvmsg", Pprof: "profile-recvmsg.pb.gz", Folded: "profile-recvmsg.folded",
		Trials: []int{4}, Event: "cpu-clock", Unit: "nanoseconds", Period: 100000, Samples: 900, DrainSamples: 800,
		Calls: 450000, DrainNs: 9e8, RealTime: true}}
	testutil.WriteSummary(t, dir, s)
	got, err := results.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.ProfiledTrials, got.ProfiledTrials); diff != "" {
		t.Errorf("profiled trials (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(s.Profiles, got.Profiles); diff != "" {
		t.Errorf("profiles (-want +got):\n%s", diff)
	}
	if len(got.Trials) != 4 || got.Profile("recvmsg") == nil || got.Profile("recvfrom") != nil {
		t.Errorf("trials %d, Profile(recvmsg) %v, Profile(recvfrom) %v", len(got.Trials), got.Profile("recvmsg"), got.Profile("recvfrom"))
	}
}

// TestProfileNamesRefused: a profile named by a path is refused when the
// summary is read, and ReadProfileFile reads only file names in the
// directory, bounded.
func TestProfileNamesRefused(t *testing.T) {
	for _, name := range []string{"../etc/shadow", "/etc/passwd", ".hidden", "a/b"} {
		s := testutil.SeedSummary()
		s.Profiles = []results.VariantProfile{{Variant: "recvmsg", Pprof: name}}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := results.DecodeSummary(b, "summary.json"); err == nil || !strings.Contains(err.Error(), "is not a file name") {
			t.Errorf("pprof %q: err = %v, want 'is not a file name'", name, err)
		}
		if _, err := results.ReadProfileFile(t.TempDir(), name); err == nil || !strings.Contains(err.Error(), "is not a file name") {
			t.Errorf("ReadProfileFile %q: err = %v", name, err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "profile-a.folded"), []byte("drain;f 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := results.ReadProfileFile(dir, "profile-a.folded"); err != nil || string(b) != "drain;f 1\n" {
		t.Errorf("ReadProfileFile = %q, %v", b, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "profile-b.folded"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := results.ReadProfileFile(dir, "profile-b.folded"); err == nil || !strings.Contains(err.Error(), "profile-b.folded: is a directory: refused") {
		t.Errorf("a directory: err = %v", err)
	}
}
