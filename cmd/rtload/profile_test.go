package main

import (
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
)

// TestExplainProfiled is issue 16's use end to end: rtload run laight-450
// --profile, then rtload explain names the kernel functions on recvmsg's
// path that carry its extra cost over recvfrom (copy_msghdr_from_user
// below ___sys_recvmsg), with ns per call and sample counts, and prints
// the profiler's cost; the run's report prints that cost too.
func TestExplainProfiled(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	out := t.TempDir()
	run := rtload(t, nil, "run", "laight-450", "--profile", "--duration", "1s", "--set", "rounds=1", "--set", "warmup=200ms",
		"--set", "noise[0].threads=1", "--set", "profile.frequency=20000", "--out", out)
	if run.code != 0 {
		t.Fatalf("run: exit %d\n%s", run.code, run.stderr)
	}
	for _, want := range []string{"each variant's trial is followed by a profiled one", "profiled trials: 2, kept out of the tables above",
		"profiles: profile-recvfrom.pb.gz, profile-recvmsg.pb.gz"} {
		if !strings.Contains(run.stdout, want) {
			t.Errorf("run output lacks %q", want)
		}
	}
	r := rtload(t, nil, "explain", out)
	if r.code != 0 {
		t.Fatalf("explain: exit %d\n%s", r.code, r.stderr)
	}
	_, k, ok := strings.Cut(r.stdout, "where in the kernel the time goes")
	if !ok {
		t.Fatalf("explain prints no kernel profile:\n%s", r.stdout)
	}
	t.Logf("where in the kernel the time goes%s", k)
	for _, want := range []string{"recvmsg − recvfrom: ", "the profiler's cost (per-call cost of all calls, timed trials vs profiled trials",
		"recvfrom/rt: p50 ", "recvmsg/rt: p50 ", "work only one side does: +"} {
		if !strings.Contains(k, want) {
			t.Errorf("kernel profile lacks %q", want)
		}
	}
	// The seat line: "+N ns/call (95% lo to hi) in ___sys_recvmsg →
	// copy_msghdr_from_user (k vs 0 samples, …)". Where the samples put
	// copy_msghdr_from_user's own code is the sampler's: when its self
	// samples are few, the seat is its callee, named below it
	// ("… in copy_msghdr_from_user → _copy_from_user (50 vs 0 samples"),
	// and that is the same work, still recvmsg's alone.
	var seat string
	for _, line := range strings.Split(k, "\n") {
		if strings.Contains(line, "ns/call") && strings.Contains(line, " vs 0 samples") &&
			(strings.Contains(line, "___sys_recvmsg → copy_msghdr_from_user (") || strings.Contains(line, " in copy_msghdr_from_user → ")) {
			seat = line
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(seat), "+") {
		t.Errorf("no seat of recvmsg's own work at copy_msghdr_from_user with ns per call and samples (got %q)", seat)
	}
}
