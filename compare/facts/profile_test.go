package facts

import (
	"testing"

	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/internal/testutil"
)

// TestProfileDiffsNeedTwoRuns: one profiled run compares nothing.
func TestProfileDiffsNeedTwoRuns(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteSummary(t, dir, testutil.ProfiledSummary(t, dir, map[string]string{"recvmsg": "recvmsg"}))
	runs, err := load.Runs([]string{dir, dir}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	runs[1].Profiles = nil // the second run was not profiled
	res, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Profiles) != 0 {
		t.Errorf("profile diffs %+v, want none", res.Profiles)
	}
}
