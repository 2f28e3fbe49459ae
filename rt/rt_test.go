package rt_test

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// autoClock calibrates the auto clock once per test binary (100 ms of
// calibration per NewClock).
var autoClock = sync.OnceValues(func() (*rt.Clock, error) { return rt.NewClock(rt.ClockAuto) })

func TestNewClockMonotonic(t *testing.T) {
	c, err := rt.NewClock(rt.ClockMonotonic)
	if err != nil {
		t.Fatal(err)
	}
	info := c.Info()
	if info.Kind != "monotonic" || info.Hz != 1e9 || !info.Invariant || info.TickUnit() != "ns" {
		t.Errorf("Info() = %+v, Unit %q; want monotonic, 1e9 Hz, invariant, ns", info, info.TickUnit())
	}
	if len(info.Fallbacks) != 0 {
		t.Errorf("asked-for monotonic lists fallbacks %v", info.Fallbacks)
	}
}

func TestNewClockAuto(t *testing.T) {
	c, err := autoClock()
	if err != nil {
		t.Fatal(err)
	}
	info := c.Info()
	if info.Kind != "tsc" {
		// This machine has an invariant TSC; elsewhere auto falls back and says why.
		if len(info.Fallbacks) == 0 {
			t.Fatalf("auto fell back to %q without a reason", info.Kind)
		}
		t.Skipf("no usable TSC here (%s): fallback %v", info.Kind, info.Fallbacks)
	}
	if info.Hz < 1e8 || info.Hz > 1e10 {
		t.Errorf("TSC Hz %.0f outside [1e8, 1e10]", info.Hz)
	}
	if !info.Invariant {
		t.Error("tsc clock not marked invariant")
	}
	if !strings.Contains(info.Note, "not core cycles") {
		t.Errorf("Note %q does not say TSC ticks are not core cycles", info.Note)
	}
	if info.TickUnit() != "TSC ticks" {
		t.Errorf("TickUnit() = %q, want TSC ticks", info.TickUnit())
	}
}

func TestNewClockErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind rt.ClockKind
		want string
	}{
		{"no kind", 0, `clock kind(0): not supported (allowed: auto, cycles, tsc, monotonic)`},
		{"unknown kind", 9, `clock kind(9): not supported (allowed: auto, cycles, tsc, monotonic)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := rt.NewClock(tc.kind)
			if !errors.Is(err, rt.ErrNotSupported) {
				t.Fatalf("NewClock(%v) = %v, %v; want ErrNotSupported", tc.kind, c, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

func TestClockNowNonDecreasing(t *testing.T) {
	auto, err := autoClock()
	if err != nil {
		t.Fatal(err)
	}
	mono, err := rt.NewClock(rt.ClockMonotonic)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*rt.Clock{auto, mono} {
		t.Run(c.Info().Kind, func(t *testing.T) {
			prev := c.Now()
			for i := 0; i < 1000; i++ {
				now := c.Now()
				if now < prev {
					t.Fatalf("read %d: %d after %d", i, now, prev)
				}
				prev = now
			}
		})
	}
}

func TestClockAgreesWithMonotonic(t *testing.T) {
	// Ticks/Hz over a 10 ms busy window matches CLOCK_MONOTONIC within 5 %:
	// Hz really is ticks per second. A ratio, not a speed assertion. Each
	// end reads CLOCK_MONOTONIC before and after the clock, so the window
	// in ns is known to lie in [inner, outer] however long the thread was
	// stopped between two reads (a preemption or steal there is the
	// machine's), and the clock must agree with some point of it.
	c, err := autoClock()
	if err != nil {
		t.Fatal(err)
	}
	n0a, t0, n0b := rt.Monotonic(), c.Now(), rt.Monotonic()
	for i := 0; i < 1e8 && rt.Monotonic()-n0b < int64(10*time.Millisecond); i++ {
	}
	n1a, t1, n1b := rt.Monotonic(), c.Now(), rt.Monotonic()
	gotNs := float64(t1-t0) / c.Info().Hz * 1e9
	inner, outer := float64(n1a-n0b), float64(n1b-n0a)
	if gotNs < 0.95*inner || gotNs > 1.05*outer {
		t.Errorf("%s measured %.0f ns over [%.0f, %.0f] ns of CLOCK_MONOTONIC (ratio %.3f–%.3f)", c.Info().Kind, gotNs, inner, outer, gotNs/outer, gotNs/inner)
	}
}

func TestStartFIFOReadBack(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	want := rt.Sched{CPUs: []int{1}, Policy: rt.FIFO, Priority: 80}
	release := make(chan struct{})
	th, applied, err := rt.Start(want, nil, func(rt.Applied) {
		select { // blocks parked, not spinning, so CPU 1 stays usable
		case <-release:
		case <-time.After(10 * time.Second):
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		close(release)
		waitThread(t, th)
	}()
	tid := applied.TID
	// Read back from the test goroutine: another thread's state, as the
	// kernel holds it, not what Start meant to set.
	got, err := rt.ThreadSched(tid)
	if err != nil {
		t.Fatal(err)
	}
	wantGot := results.Thread{TID: tid, Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}
	if diff := cmp.Diff(wantGot, got); diff != "" {
		t.Errorf("ThreadSched(%d) (-want +got):\n%s", tid, diff)
	}
	if tid == unix.Gettid() {
		t.Errorf("body ran on the test's thread %d", tid)
	}
	if applied.Policy != "SCHED_FIFO" || applied.Priority != 80 || !cmp.Equal(applied.CPUs, []int{1}) || len(applied.Degraded) != 0 {
		t.Errorf("Applied = %+v", applied)
	}
}

func waitThread(t *testing.T, th *rt.Thread) {
	t.Helper()
	done := make(chan struct{})
	go func() { th.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("thread did not end within 10 s")
	}
}

func TestStartOtherReadBack(t *testing.T) {
	// Unprivileged settings: nice 5 and the CPUs we already have.
	th, a, err := rt.Start(rt.Sched{Policy: rt.Other, Nice: 5}, nil, func(b rt.Applied) {
		if b.Policy != "SCHED_OTHER" || b.Nice != 5 || len(b.Degraded) != 0 {
			t.Errorf("body's Applied = %+v", b)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	waitThread(t, th)
	if a.Policy != "SCHED_OTHER" || a.Nice != 5 || a.TID == 0 {
		t.Errorf("Start's Applied = %+v", a)
	}
}

// TestStartSetup: setup runs on the started thread before Start returns;
// when it fails, Start returns its error with what was applied, the
// thread has exited and body never ran.
func TestStartSetup(t *testing.T) {
	var setupTID int
	th, a, err := rt.Start(rt.Sched{}, func(a rt.Applied) error { setupTID = unix.Gettid(); return nil }, func(rt.Applied) {})
	if err != nil {
		t.Fatal(err)
	}
	waitThread(t, th)
	if setupTID != a.TID || setupTID == unix.Gettid() {
		t.Errorf("setup ran on thread %d, the started one is %d (the test's %d)", setupTID, a.TID, unix.Gettid())
	}
	fail := errors.New("bind failed")
	ran := false
	th, a, err = rt.Start(rt.Sched{}, func(rt.Applied) error { return fail }, func(rt.Applied) { ran = true })
	if th != nil || !errors.Is(err, fail) || a.TID == 0 || ran {
		t.Errorf("failed setup: thread %v, err %v, applied %+v, body ran %v; want nil, its error, the Applied, not run", th, err, a, ran)
	}
}

func TestPrivilegeError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *rt.PrivilegeError
		want string
	}{
		{"style guide's sched_setattr text",
			&rt.PrivilegeError{Op: "sched_setattr(SCHED_FIFO 80)", Cap: "CAP_SYS_NICE",
				Degraded: "run at SCHED_OTHER and mark results degraded", Err: unix.EPERM},
			"sched_setattr(SCHED_FIFO 80): needs CAP_SYS_NICE (run as root, or --allow-degraded to run at SCHED_OTHER and mark results degraded): operation not permitted"},
		{"a container's setting instead of run as root",
			&rt.PrivilegeError{Op: "sched_setattr(SCHED_FIFO 80)", Cap: "CAP_SYS_NICE", Hint: "in this container (docker): start it with --cap-add SYS_NICE",
				Degraded: "run at SCHED_OTHER and mark results degraded"},
			"sched_setattr(SCHED_FIFO 80): needs CAP_SYS_NICE; in this container (docker): start it with --cap-add SYS_NICE (or --allow-degraded to run at SCHED_OTHER and mark results degraded)"},
		{"no degraded mode, no syscall error",
			&rt.PrivilegeError{Op: "mlockall(MCL_CURRENT|MCL_FUTURE)", Cap: "CAP_IPC_LOCK"},
			"mlockall(MCL_CURRENT|MCL_FUTURE): needs CAP_IPC_LOCK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q\nwant      %q", got, tc.want)
			}
			var err error = tc.err
			wrapped := errors.Join(errors.New("reader 0"), err)
			if !errors.Is(wrapped, rt.ErrNoPrivilege) {
				t.Error("errors.Is(err, ErrNoPrivilege) = false")
			}
			if errors.Is(err, rt.ErrNotSupported) {
				t.Error("PrivilegeError matches ErrNotSupported")
			}
			if tc.err.Err != nil && !errors.Is(err, unix.EPERM) {
				t.Error("PrivilegeError does not unwrap to its syscall error")
			}
			var pe *rt.PrivilegeError
			if !errors.As(wrapped, &pe) || pe.Cap != tc.err.Cap {
				t.Errorf("errors.As = %v, %+v", pe != nil, pe)
			}
		})
	}
}

// childEnv marks the re-executed, unprivileged test binary.
const childEnv = "RTLOAD_RT_TEST_UNPRIVILEGED"

// TestStartUnprivileged proves what Start(SCHED_FIFO) needs: without
// CAP_SYS_NICE it fails with a *PrivilegeError naming it, and with
// AllowDegraded it runs at SCHED_OTHER and says so. Go cannot drop a
// capability for the thread Start will create, so as root the test
// re-executes itself as nobody (no capabilities, RLIMIT_RTPRIO 0).
func TestStartUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		checkUnprivileged(t)
		return
	}
	testutil.Requires(t, testutil.Root)
	if os.Getenv(childEnv) != "" {
		t.Fatal("child still root")
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_RTPRIO, &rl); err != nil || rl.Cur >= 80 {
		t.Skipf("RLIMIT_RTPRIO %d would let nobody use SCHED_FIFO 80 (err %v)", rl.Cur, err)
	}
	testutil.RunTestAsNobody(t, "TestStartUnprivileged", childEnv)
}

func checkUnprivileged(t *testing.T) {
	if len(testutil.Unmet(testutil.Cap("CAP_SYS_NICE"))) == 0 {
		t.Skip("CAP_SYS_NICE in the effective set: SCHED_FIFO is permitted")
	}
	ran := false
	th, _, err := rt.Start(rt.Sched{Policy: rt.FIFO, Priority: 80}, nil, func(rt.Applied) { ran = true })
	if th != nil || ran {
		t.Fatalf("Start(FIFO 80) unprivileged: thread %v, body ran %v", th, ran)
	}
	if !errors.Is(err, rt.ErrNoPrivilege) || !errors.Is(err, unix.EPERM) {
		t.Fatalf("Start(FIFO 80) unprivileged: %v; want ErrNoPrivilege wrapping EPERM", err)
	}
	want := "sched_setattr(SCHED_FIFO 80): needs CAP_SYS_NICE (run as root, or --allow-degraded to run at SCHED_OTHER and mark results degraded)"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q\nwant prefix %q", err, want)
	}

	th, _, err = rt.Start(rt.Sched{Policy: rt.FIFO, Priority: 80, AllowDegraded: true}, nil, func(a rt.Applied) {
		if a.Policy != "SCHED_OTHER" || len(a.Degraded) != 1 || !strings.Contains(a.Degraded[0], "ran at SCHED_OTHER") {
			t.Errorf("degraded Applied = %+v", a)
		}
	})
	if err != nil {
		t.Fatalf("Start(FIFO 80, AllowDegraded): %v", err)
	}
	waitThread(t, th)
}
