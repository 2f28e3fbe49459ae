package rt_test

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/rt"
)

// TestSleepUntil checks the absolute deadline: never back before it, a
// past deadline returns at once, a negative one is EINVAL, and a sleep
// allocates nothing.
func TestSleepUntil(t *testing.T) {
	for _, d := range []time.Duration{0, 200 * time.Microsecond, 2 * time.Millisecond} {
		deadline := rt.Monotonic() + int64(d)
		if errno := rt.SleepUntil(deadline); errno != 0 {
			t.Fatalf("SleepUntil(+%v): %v", d, errno)
		}
		if now := rt.Monotonic(); now < deadline {
			t.Errorf("SleepUntil(+%v) returned %d ns before the deadline", d, deadline-now)
		}
	}
	// A past deadline returns at once: the thread never blocks, so its
	// voluntary context switches (getrusage RUSAGE_THREAD) do not move.
	// (A preemption meanwhile is involuntary, and the machine's.)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &before)
	errno := rt.SleepUntil(1) // 1 ns after boot
	unix.Getrusage(unix.RUSAGE_THREAD, &after)
	if errno != 0 {
		t.Errorf("SleepUntil(past) = %v, want 0", errno)
	}
	if after.Nvcsw != before.Nvcsw {
		t.Errorf("SleepUntil(past) blocked: %d voluntary switches", after.Nvcsw-before.Nvcsw)
	}
	if errno := rt.SleepUntil(-1); errno != unix.EINVAL {
		t.Errorf("SleepUntil(-1) = %v, want EINVAL", errno)
	}
	if a := testing.AllocsPerRun(20, func() { rt.SleepUntil(rt.Monotonic() + 1000) }); a != 0 {
		t.Errorf("SleepUntil allocs %v, want 0", a)
	}
}

// TestSleepUntilRaw: the raw sleep keeps SleepUntil's contract.
func TestSleepUntilRaw(t *testing.T) {
	for _, d := range []time.Duration{0, 200 * time.Microsecond, 2 * time.Millisecond} {
		deadline := rt.Monotonic() + int64(d)
		if errno := rt.SleepUntilRaw(deadline); errno != 0 {
			t.Fatalf("SleepUntilRaw(+%v): %v", d, errno)
		}
		if now := rt.Monotonic(); now < deadline {
			t.Errorf("SleepUntilRaw(+%v) returned %d ns before the deadline", d, deadline-now)
		}
	}
	if errno := rt.SleepUntilRaw(-1); errno != unix.EINVAL {
		t.Errorf("SleepUntilRaw(-1) = %v, want EINVAL", errno)
	}
	if a := testing.AllocsPerRun(20, func() { rt.SleepUntilRaw(rt.Monotonic() + 1000) }); a != 0 {
		t.Errorf("SleepUntilRaw allocs %v, want 0", a)
	}
}
