package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
)

// TestReportProfiled: a profiled run's report is the timed trials' report
// (profiled trials change no table) followed by the profiler's cost and
// the profile files.
func TestReportProfiled(t *testing.T) {
	s := testutil.ProfiledSummary(t, t.TempDir(), map[string]string{"recvfrom": "recvfrom", "recvmsg": "recvmsg"})
	var with, without bytes.Buffer
	if err := Report(&with, s); err != nil {
		t.Fatal(err)
	}
	timed := *s
	timed.ProfiledTrials, timed.Profiles = nil, nil
	if err := Report(&without, &timed); err != nil {
		t.Fatal(err)
	}
	head, tail, ok := strings.Cut(with.String(), "\nprofiled trials: ")
	if !ok || head+"\n" != without.String() && head != without.String() {
		t.Fatalf("the profiled run's report differs from its timed trials' before the profiled section:\n%s", with.String())
	}
	for _, want := range []string{"4, kept out of the tables above; the profiler's cost, per-call p50 (TSC ticks) timed vs profiled:\n",
		"  recvmsg: 3201 vs 3265 (+2.0%)\n", "profiles: profile-recvfrom.pb.gz, profile-recvmsg.pb.gz (rtload explain DIR"} {
		if !strings.Contains(tail, want) {
			t.Errorf("profiled section lacks %q:\n%s", want, tail)
		}
	}
}
