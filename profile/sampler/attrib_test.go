package sampler

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/profile"
)

// TestAttributeRecvmsgOverRecvfrom is the end-to-end check in
// small: profile a recvmsg loop and a recvfrom loop on their threads,
// write both profiles as a run would, and attribute recvmsg's extra cost
// per call. recvmsg's own kernel path (___sys_recvmsg and what it calls:
// copy_msghdr_from_user, import_iovec, …) must carry it.
func TestAttributeRecvmsgOverRecvfrom(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	ksyms, err := profile.LoadKallsyms()
	if err != nil {
		t.Skipf("kallsyms: %v", err)
	}
	syms := profile.Symbols{Kernel: ksyms, User: profile.SelfSymbols{}}
	dir := t.TempDir()
	var vs []profile.Variant
	for _, method := range []string{"recvmsg", "recvfrom"} {
		l := startRecvLoop(t, method, 3_000_000, 700*time.Millisecond)
		s, calls := sampleLoop(t, l, Config{Event: EventCPUClock, Period: 20_000})
		p := s.Profile(syms, profile.DefaultPhaseRule())
		for _, w := range []struct {
			name  string
			write func(*os.File) error
		}{
			{profile.PprofName(method), func(f *os.File) error { return p.WritePprof(f, os.Args[0]) }},
			{profile.FoldedName(method), func(f *os.File) error { return p.WriteFolded(f) }},
		} {
			f, err := os.Create(dir + "/" + w.name)
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
		// The loop is SCHED_OTHER on a shared machine: its wall-clock
		// recv time includes preemption the CPU-time samples do not see,
		// so the drain time is the sampled CPU time (a SCHED_FIFO reader's
		// measured drain time needs no such care).
		cpuNs := p.PhaseWeight(profile.PhaseDrain)
		t.Logf("%s: %d calls, %.0f ns/call wall, %.0f ns/call on CPU", method, calls, float64(l.recvNs)/float64(calls), float64(cpuNs)/float64(calls))
		vs = append(vs, profile.Variant{Name: method, Profile: p, Calls: calls, Drain: time.Duration(cpuNs)})
	}
	at, err := profile.Attribute(vs[0], vs[1], profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", at.Text())
	if strings.HasPrefix(at.Unexplained, "too few") {
		t.Fatalf("too few samples: %s", at.Unexplained)
	}
	// Whatever the load does to the totals, each syscall's own functions
	// are on its side only: significant and of the right sign.
	want := map[string]float64{"___sys_recvmsg": +1, "copy_msghdr_from_user": +1, "__sys_recvfrom": -1}
	for _, f := range at.Funcs {
		sign, ok := want[profile.BaseName(f.Func)]
		if !ok || !f.Kernel {
			continue
		}
		delete(want, profile.BaseName(f.Func))
		if f.Diff.Value*sign <= 0 || !f.Diff.Significant() {
			t.Errorf("%s: %+v ns/call (%d vs %d samples), want significant and of sign %+.0f", f.Func, f.Diff, f.SamplesA, f.SamplesB, sign)
		}
	}
	if len(want) > 0 {
		t.Errorf("functions missing from the drain profiles: %v", want)
	}
	if goBin, err := exec.LookPath("go"); err == nil && testing.Verbose() {
		out, err := exec.Command(goBin, "tool", "pprof", "-top", "-nodecount=25", "-tagfocus=phase=drain", dir+"/"+profile.PprofName("recvmsg")).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof: %v\n%s", err, out)
		}
		t.Logf("go tool pprof -top -tagfocus=phase=drain profile-recvmsg.pb.gz:\n%s", out)
	}
}
