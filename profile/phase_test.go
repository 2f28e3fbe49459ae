package profile

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/pprof/profile"
)

// k and u build kernel and user frames.
func k(name string) Frame { return Frame{Func: name, Kernel: true} }
func u(name string) Frame { return Frame{Func: name} }

const (
	drainStep = "github.com/rtload/rtload/probe.(*Drain).Step"
	tickWait  = "github.com/rtload/rtload/rt.(*Ticker).Wait"
	loopRun   = "github.com/rtload/rtload/probe.(*Loop).Run"
	syscall6  = "internal/runtime/syscall/linux.Syscall6"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		frames []Frame
		want   Phase
	}{
		{"recvmsg syscall frames", []Frame{k("copy_msghdr_from_user"), k("___sys_recvmsg"), k("__sys_recvmsg"), k("do_syscall_64"), u(syscall6), u(drainStep)}, PhaseDrain},
		{"recvfrom via __x64_sys_", []Frame{k("sock_recvmsg"), k("__x64_sys_recvfrom"), u(syscall6)}, PhaseDrain},
		{"recvmmsg via do_recvmmsg", []Frame{k("do_recvmmsg")}, PhaseDrain},
		{"compiler suffix stripped", []Frame{k("__sys_recvmsg.isra.0")}, PhaseDrain},
		{"sleep: hrtimer_nanosleep", []Frame{k("schedule"), k("do_nanosleep"), k("hrtimer_nanosleep"), k("__x64_sys_clock_nanosleep"), u(tickWait)}, PhaseSleep},
		{"wakeup: finish_task_switch under clock_nanosleep", []Frame{k("finish_task_switch.isra.0"), k("__schedule"), k("schedule"), k("do_nanosleep"), u(syscall6)}, PhaseSleep},
		// The entry path before dispatch names no syscall: the user frames decide.
		{"syscall entry under the drain", []Frame{k("syscall_trace_enter"), k("do_syscall_64"), u(syscall6), u("github.com/rtload/rtload/net/udp.(*RecvMsg).Recv"), u(drainStep)}, PhaseDrain},
		{"interrupt during the drain's user code", []Frame{k("__sysvec_apic_timer_interrupt"), u(drainStep), u(loopRun)}, PhaseDrain},
		{"innermost user frame wins", []Frame{u(drainStep), u(tickWait)}, PhaseDrain},
		{"sleep user frame", []Frame{u(syscall6), u(tickWait), u(loopRun)}, PhaseSleep},
		{"a kernel syscall frame beats user frames", []Frame{k("__sys_recvfrom"), u(tickWait)}, PhaseDrain},
		{"loop bookkeeping", []Frame{u(loopRun)}, PhaseOther},
		{"another syscall", []Frame{k("__sys_sendto"), k("do_syscall_64"), u(syscall6), u(loopRun)}, PhaseOther},
		{"a user frame named like a syscall is not one", []Frame{u("main.recvmsg")}, PhaseOther},
		{"nothing", nil, PhaseOther},
	}
	r := DefaultPhaseRule()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Classify(tt.frames); got != tt.want {
				t.Errorf("Classify = %v, want %v", got, tt.want)
			}
		})
	}
	tap := PhaseRule{DrainKernel: []string{"write"}}
	if got := tap.Classify([]Frame{k("ksys_write"), k("__x64_sys_write")}); got != PhaseDrain {
		t.Errorf("custom rule: %v, want drain", got)
	}
}

func TestSyscallName(t *testing.T) {
	for in, want := range map[string]string{
		"__x64_sys_recvmsg": "recvmsg", "___sys_recvmsg": "recvmsg", "__sys_recvfrom": "recvfrom",
		"do_recvmmsg": "recvmmsg", "__do_sys_clock_nanosleep": "clock_nanosleep", "sock_recvmsg": "sock_recvmsg",
	} {
		if got := SyscallName(in); got != want {
			t.Errorf("SyscallName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := BaseName("finish_task_switch.isra.0"); got != "finish_task_switch" {
		t.Errorf("BaseName = %q", got)
	}
}

// testProfile is a small profile with every phase.
func testProfile() *Profile {
	return &Profile{Event: "cpu-clock", Unit: "nanoseconds", Period: 50_000, Lost: 3, LostRecords: 1, Throttles: 2,
		StartNs: 1_000, EndNs: 2_001_000, Threads: []ThreadCount{{TID: 4242, Samples: 16}},
		Notes: []string{"cycles: not supported by this CPU/VM: perf_event_open returned ENOENT; sampled cpu-clock instead"},
		Stacks: []Stack{
			{Frames: []Frame{{"copy_msghdr_from_user", true, 0xffffffff81e7f3f0}, {"___sys_recvmsg", true, 0xffffffff81e7f68b}, {drainStep, false, 0x4a1234}}, Phase: PhaseDrain, Count: 10, Weight: 500_000},
			{Frames: []Frame{{"do_nanosleep", true, 0xffffffff82000010}, {tickWait, false, 0x4a2000}}, Phase: PhaseSleep, Count: 4, Weight: 200_000},
			{Frames: []Frame{{loopRun, false, 0x4a3000}}, Phase: PhaseOther, Count: 2, Weight: 100_000},
		}}
}

func TestPprofRoundTrip(t *testing.T) {
	p := testProfile()
	var buf bytes.Buffer
	if err := p.WritePprof(&buf, "/usr/local/bin/rtload"); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if pp.PeriodType.Type != "cpu" || pp.PeriodType.Unit != "nanoseconds" || pp.Period != 50_000 || pp.DurationNanos != 2_000_000 {
		t.Errorf("period %v %d, duration %d", pp.PeriodType, pp.Period, pp.DurationNanos)
	}
	got, err := FromPprof(pp)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(p, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if drain := got.Select(PhaseDrain); drain.Samples() != 10 || len(drain.Stacks) != 1 || drain.Lost != 3 {
		t.Errorf("Select(drain): %d samples in %d stacks", drain.Samples(), len(drain.Stacks))
	}
}

// TestGoToolPprofReads writes a profile and runs `go tool pprof -top` on
// it, as a user would.
func TestGoToolPprofReads(t *testing.T) {
	if testing.Short() { // internal/testutil.Long, by hand: this package's tests import the standard library only
		t.Skip("tier: long fast test (builds and runs go tool pprof); -short leaves it out, make test runs it")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go command not in PATH: %v", err)
	}
	path := t.TempDir() + "/" + PprofName("recvmsg")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := testProfile().WritePprof(f, "rtload"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-top"}, {"-top", "-tagfocus", "phase=drain"}} {
		cmd := exec.Command(goBin, append(append([]string{"tool", "pprof"}, args...), path)...)
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
		}
		text := string(out)
		if !strings.Contains(text, "copy_msghdr_from_user") || !strings.Contains(text, "flat%") {
			t.Errorf("go tool pprof %v output lacks the drain's kernel frame:\n%s", args, text)
		}
		if len(args) == 1 && !strings.Contains(text, "Total samples = 800us") {
			t.Errorf("go tool pprof -top: want 'Total samples = 800us' (16 samples × 50 µs):\n%s", text)
		}
		if len(args) > 1 && strings.Contains(text, "Ticker") {
			t.Errorf("-tagfocus phase=drain still shows the sleep phase:\n%s", text)
		}
	}
}

func TestWriteFolded(t *testing.T) {
	var buf bytes.Buffer
	p := testProfile()
	p.Stacks = append(p.Stacks, Stack{Frames: []Frame{{Func: "odd;name"}}, Count: 1}, Stack{Frames: []Frame{{loopRun, false, 0x4a3004}}, Count: 5})
	if err := p.WriteFolded(&buf); err != nil {
		t.Fatal(err)
	}
	want := "drain;" + drainStep + ";___sys_recvmsg_[k];copy_msghdr_from_user_[k] 10\n" +
		"other;" + loopRun + " 7\n" + // two stacks with the same frames add up
		"other;odd:name 1\n" +
		"sleep;" + tickWait + ";do_nanosleep_[k] 4\n"
	if d := cmp.Diff(want, buf.String()); d != "" {
		t.Errorf("folded (-want +got):\n%s", d)
	}
}

func TestBuilderMergesAndMerge(t *testing.T) {
	ring, head := ringOf(2048, 0, sampleRec(s1), sampleRec(s2), sampleRec(s1))
	var b Batch
	if _, err := Decode(ring, head, 0, testSampleType, &b); err != nil {
		t.Fatal(err)
	}
	b.Lost, b.LostRecords, b.Throttles = 5, 1, 1
	var bl Builder
	bl.Add(&b)
	syms := Symbols{Kernel: fixedResolver{0xffffffff81e7f3f0: "copy_msghdr_from_user", 0xffffffff81e7f68a: "___sys_recvmsg"},
		User: fixedResolver{0x4a1234: drainStep, 0x4a00ff: loopRun}}
	p := bl.Build(syms, DefaultPhaseRule())
	want := []Stack{
		{Frames: []Frame{{"copy_msghdr_from_user", true, 0xffffffff81e7f3f0}, {"___sys_recvmsg", true, 0xffffffff81e7f68b}, {drainStep, false, 0x4a1234}, {loopRun, false, 0x4a0100}},
			Phase: PhaseDrain, Count: 2, Weight: 100_000},
		{Frames: []Frame{{drainStep, false, 0x4a1234}}, Phase: PhaseDrain, Count: 1, Weight: 50_000},
	}
	if d := cmp.Diff(want, p.Stacks); d != "" {
		t.Errorf("stacks (-want +got):\n%s", d)
	}
	if p.Lost != 5 || p.Throttles != 1 || p.StartNs != 5_000 || p.EndNs != 55_000 || len(p.Threads) != 1 || p.Threads[0].Samples != 3 {
		t.Errorf("lost %d throttles %d time %d–%d threads %v", p.Lost, p.Throttles, p.StartNs, p.EndNs, p.Threads)
	}
	m := Merge(p, p)
	if m.Samples() != 6 || len(m.Stacks) != 2 || m.Lost != 10 || m.Threads[0].Samples != 6 {
		t.Errorf("Merge: %d samples, %d stacks, lost %d, threads %v", m.Samples(), len(m.Stacks), m.Lost, m.Threads)
	}
}

// fixedResolver resolves exact addresses only.
type fixedResolver map[uint64]string

func (r fixedResolver) Lookup(a uint64) (string, bool) { n, ok := r[a]; return n, ok }
