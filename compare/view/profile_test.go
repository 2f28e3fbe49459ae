package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/internal/testutil"
)

// TestProfileDiffs compares two profiled runs, run against run per
// variant: "before", whose recvmsg profile is the recorded recvfrom
// drain, and "after", whose recvmsg profile is the recorded recvmsg
// drain. recvmsg/after − recvmsg/before is recvmsg's own work below
// ___sys_recvmsg; recvfrom, the same profile in both runs, differs by
// nothing and the profile says it cannot explain a difference.
func TestProfileDiffs(t *testing.T) {
	var dirs []string
	for _, fx := range []map[string]string{
		{"recvfrom": "recvfrom", "recvmsg": "recvfrom"},
		{"recvfrom": "recvfrom", "recvmsg": "recvmsg"},
	} {
		dir := t.TempDir()
		testutil.WriteSummary(t, dir, testutil.ProfiledSummary(t, dir, fx))
		dirs = append(dirs, dir)
	}
	runs, err := load.Runs(dirs, []string{"before", "after"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := facts.Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Profiles) != 2 {
		t.Fatalf("%d profile diffs, want 2 (one per variant): %+v", len(res.Profiles), res.Profiles)
	}
	byVariant := map[string]compare.ProfileDiff{}
	for _, d := range res.Profiles {
		if d.Run != "after" || d.Baseline != "before" || d.Err != "" {
			t.Errorf("%s: %s − %s (%s), want after − before", d.Variant, d.Run, d.Baseline, d.Err)
		}
		byVariant[d.Variant] = d
	}
	msg := byVariant["recvmsg"]
	var seat bool
	for _, s := range msg.Seats {
		if s.Func == "copy_msghdr_from_user" && s.Kind == "own work" && s.LowNs > 0 && s.Samples > 0 && s.BaselineSamples == 0 {
			seat = true
		}
	}
	if !seat || msg.TotalNs < 400 || msg.TotalNs > 600 {
		t.Errorf("recvmsg: total %.0f ns/call, seats %+v: want about +494 and recvmsg's own work at copy_msghdr_from_user", msg.TotalNs, msg.Seats)
	}
	from := byVariant["recvfrom"]
	if from.TotalNs != 0 || len(from.Seats) != 0 || from.Unexplained == "" {
		t.Errorf("recvfrom, the same profile twice: total %v, seats %v, unexplained %q", from.TotalNs, from.Seats, from.Unexplained)
	}
	var b bytes.Buffer
	if err := Write(&b, res, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"where in the kernel the time goes, run against run",
		"recvmsg/after − recvmsg/before: ", "___sys_recvmsg → copy_msghdr_from_user (",
		"recvfrom/after − recvfrom/before: +0.0 ns/call", "the profile cannot explain it: spread thin"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Write(&b, res, "json"); err != nil {
		t.Fatal(err)
	}
	var back struct{ Profiles []compare.ProfileDiff }
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Profiles) != 2 || back.Profiles[0].Text == "" {
		t.Errorf("json profiles: %v, %d", err, len(back.Profiles))
	}
}
