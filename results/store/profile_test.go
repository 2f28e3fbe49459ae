package store_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

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
	got, err := store.ReadSummary(dir)
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
		if _, err := store.DecodeSummary(b, "summary.json"); err == nil || !strings.Contains(err.Error(), "is not a file name") {
			t.Errorf("pprof %q: err = %v, want 'is not a file name'", name, err)
		}
		if _, err := store.ReadProfileFile(t.TempDir(), name); err == nil || !strings.Contains(err.Error(), "is not a file name") {
			t.Errorf("ReadProfileFile %q: err = %v", name, err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "profile-a.folded"), []byte("drain;f 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := store.ReadProfileFile(dir, "profile-a.folded"); err != nil || string(b) != "drain;f 1\n" {
		t.Errorf("ReadProfileFile = %q, %v", b, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "profile-b.folded"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ReadProfileFile(dir, "profile-b.folded"); err == nil || !strings.Contains(err.Error(), "profile-b.folded: is a directory: refused") {
		t.Errorf("a directory: err = %v", err)
	}
}
