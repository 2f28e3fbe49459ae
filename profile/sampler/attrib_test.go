package sampler

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/profile"
	"github.com/rtload/rtload/sysinfo"
)

// attribCalls is each variant's call count in
// TestAttributeRecvmsgOverRecvfrom: on this project's VMs a call costs
// about 1.9 µs (recvfrom) to 2.5 µs (recvmsg) of drain CPU time while
// sampled every 20 µs of it, so 25 000 calls give about 2300 and 3100
// drain samples whatever the load (about 0.15 s of CPU time per
// variant; under a load that starves the loop thread to a few percent
// of a CPU it still ends within loopCap).
const attribCalls = 25_000

// attribPeriodNs is the cpu-clock period of the attribution test.
const attribPeriodNs = 20_000

// TestAttributeRecvmsgOverRecvfrom is the end-to-end check in
// small: profile a recvmsg loop and a recvfrom loop on their threads,
// write both profiles as a run would, and attribute recvmsg's extra cost
// per call. The seats must be recvmsg's own work (copy_msghdr_from_user
// and what it calls), never the two syscalls' entry paths, which pair
// through the callees they share. With -record-fixture it also writes
// the drain profiles to ../testdata for profile's tests of the rule.
func TestAttributeRecvmsgOverRecvfrom(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	ksyms, err := profile.LoadKallsyms()
	if err != nil {
		t.Skipf("kallsyms: %v", err)
	}
	syms := profile.Symbols{Kernel: ksyms, User: profile.SelfSymbols{}}
	facts := sysinfo.Gather() // the run's facts, for the hooks' option state
	dir := t.TempDir()
	var vs []profile.Variant
	var metas []liveVariant
	for _, method := range []string{"recvmsg", "recvfrom"} {
		l := startRecvLoop(t, method, attribCalls)
		s, calls := sampleLoop(t, l, Config{Event: EventCPUClock, Period: attribPeriodNs, RingPages: 512})
		p := s.Profile(syms, profile.DefaultPhaseRule())
		writeProfiles(t, dir, method, p)
		// The loop is SCHED_OTHER on a shared machine: its wall-clock
		// recv time includes preemption the CPU-time samples do not see,
		// so the drain time is the sampled CPU time (a SCHED_FIFO reader's
		// measured drain time needs no such care).
		cpuNs := p.PhaseWeight(profile.PhaseDrain)
		drain := p.PhaseSamples()[profile.PhaseDrain]
		t.Logf("%s: %d calls in %v, %.0f ns/call wall, %.0f ns/call on CPU, %d drain samples, lost %d",
			method, calls, l.wall.Round(time.Millisecond), float64(l.recvNs)/float64(calls), float64(cpuNs)/float64(calls), drain, p.Lost)
		why := l.capped(calls)
		if why != "" {
			t.Log(why)
		}
		// The call count bounds the samples from below whatever the
		// load; fewer means the loop was capped or sampling broke.
		if drain < 1000 {
			t.Fatalf("%s: %d drain samples of %d calls, want ≥ 1000 %s", method, drain, calls, why)
		}
		vs = append(vs, profile.Variant{Name: method, Profile: p, Calls: calls, Drain: time.Duration(cpuNs),
			KernelConfig: facts.KernelConfig, Cmdline: facts.Hardening})
		metas = append(metas, liveVariant{Name: method, Calls: calls, DrainNs: cpuNs, WallNsPerCall: float64(l.recvNs) / float64(calls)})
	}
	if *recordFixture {
		writeLiveFixture(t, vs, metas)
	}
	at, err := profile.Attribute(vs[0], vs[1], profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", at.Text())
	checkRecvmsgAttribution(t, at)
	if goBin, err := exec.LookPath("go"); err == nil && testing.Verbose() {
		out, err := exec.Command(goBin, "tool", "pprof", "-top", "-nodecount=25", "-tagfocus=phase=drain", dir+"/"+profile.PprofName("recvmsg")).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof: %v\n%s", err, out)
		}
		t.Logf("go tool pprof -top -tagfocus=phase=drain profile-recvmsg.pb.gz:\n%s", out)
	}
}

// checkRecvmsgAttribution asserts what any recvmsg − recvfrom attribution
// of these loops must say, whatever the load does to the totals.
func checkRecvmsgAttribution(t *testing.T, at profile.Attribution) {
	t.Helper()
	if at.Unexplained != "" && strings.HasPrefix(at.Unexplained, "too few") {
		t.Fatalf("too few samples: %s", at.Unexplained)
	}
	// The entry paths pair through what both syscalls call. entry holds
	// the kernel entry functions by base name (___sys_recvmsg.isra.0 is
	// ___sys_recvmsg); isEntry every entry function by its exact name, as
	// Attribute keys them: BaseName cuts a Go name at its package
	// ("runtime.racefuncexit" is "runtime"), so one runtime function on an
	// entry path made every runtime function look like one.
	entry := map[string]bool{}
	type fkey struct {
		name   string
		kernel bool
	}
	isEntry := map[fkey]bool{}
	for _, f := range at.Funcs {
		if f.Entry {
			isEntry[fkey{f.Func, f.Kernel}] = true
			if f.Kernel {
				entry[profile.BaseName(f.Func)] = true
			}
		}
	}
	for _, f := range []string{"___sys_recvmsg", "____sys_recvmsg", "__sys_recvfrom"} {
		if !entry[f] {
			t.Errorf("%s is not an entry function: entry paths %v / %v", f, at.Entry.PathsA, at.Entry.PathsB)
		}
	}
	if !containsBase(at.Entry.Via, "sock_recvmsg") {
		t.Errorf("entry paths pair through %v, want sock_recvmsg among them", at.Entry.Via)
	}
	// recvmsg's own work: copy_msghdr_from_user (or one function below
	// it carrying most of it) is a seat, positive and significant, on
	// recvmsg's path; no seat is an entry-path function.
	var own bool
	for _, s := range at.Seats {
		if isEntry[fkey{s.Func, s.Kernel}] {
			t.Errorf("seat %s (%s) is an entry-path function", s.Func, s.Kind)
		}
		if s.Kind == profile.SeatOwn && s.Diff.Value > 0 && s.Diff.Significant() && s.SamplesB == 0 && containsBase(s.Path, "copy_msghdr_from_user") {
			own = true
			if !containsBase(s.Path, "___sys_recvmsg") {
				t.Errorf("seat %s: path %v does not go through ___sys_recvmsg", s.Func, s.Path)
			}
		}
	}
	if !own {
		t.Errorf("no seat of recvmsg's own work at or below copy_msghdr_from_user:\n%s", at.Text())
	}
	if !at.Own.Significant() || at.Own.Value <= 0 {
		t.Errorf("recvmsg's own work %+v ns/call, want positive and significant", at.Own)
	}
}

// containsBase reports whether a function of path has the base name s.
func containsBase(path []string, s string) bool {
	return slices.ContainsFunc(path, func(x string) bool { return profile.BaseName(x) == s })
}

// writeProfiles writes p's pprof and folded files into dir as a run would.
func writeProfiles(t *testing.T, dir, variant string, p *profile.Profile) {
	t.Helper()
	for _, w := range []struct {
		name  string
		write func(*os.File) error
	}{
		{profile.PprofName(variant), func(f *os.File) error { return p.WritePprof(f, os.Args[0]) }},
		{profile.FoldedName(variant), func(f *os.File) error { return p.WriteFolded(f) }},
	} {
		f, err := os.Create(filepath.Join(dir, w.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.write(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// liveVariant is one variant's measurements in ../testdata/attrib-live.json.
type liveVariant struct {
	Name          string  `json:"name"`
	Calls         uint64  `json:"calls"`
	DrainNs       uint64  `json:"drain_cpu_ns"`
	WallNsPerCall float64 `json:"wall_ns_per_call"`
}

// writeLiveFixture writes ../testdata/attrib-<variant>.pb.gz (the drain
// phase only) and attrib-live.json (calls and drain CPU time), which
// profile's TestAttributeLiveFixture reads.
func writeLiveFixture(t *testing.T, vs []profile.Variant, metas []liveVariant) {
	t.Helper()
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		f, err := os.Create("../testdata/attrib-" + v.Name + ".pb.gz")
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Profile.Select(profile.PhaseDrain).WritePprof(f, "sampler.test"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.MarshalIndent(struct {
		Recorded string        `json:"recorded"`
		Kernel   string        `json:"kernel"`
		PeriodNs int           `json:"period_ns"`
		Variants []liveVariant `json:"variants"`
	}{time.Now().UTC().Format("2006-01-02"), unix.ByteSliceToString(uts.Release[:]), attribPeriodNs, metas}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("../testdata/attrib-live.json", append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded ../testdata/attrib-{recvmsg,recvfrom}.pb.gz and attrib-live.json")
}
