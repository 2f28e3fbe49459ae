package probe_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/rt"
)

// TestPerfReason pins the message of each perf_event_open failure: the
// fallback paths a run reports (no hardware counters, paranoid setting).
func TestPerfReason(t *testing.T) {
	for _, c := range []struct {
		name     string
		errno    unix.Errno
		paranoid int
		want     string
		is       error
	}{
		// A VM or CPU without a PMU (this project's test machine).
		{"hardware unsupported", unix.ENOENT, 2, "not supported by this CPU/VM: perf_event_open returned ENOENT", rt.ErrNotSupported},
		{"event unsupported by the PMU", unix.EOPNOTSUPP, 2, "not supported by this CPU/VM: perf_event_open returned ENOTSUP", rt.ErrNotSupported},
		{"kernel without perf events", unix.ENOSYS, -1, "not supported by this kernel", rt.ErrNotSupported},
		// perf_event_paranoid 3 (Debian, Android) forbids everything unprivileged.
		{"paranoid setting", unix.EACCES, 3, "not permitted: perf_event_open returned EACCES; kernel.perf_event_paranoid is 3 (counting a thread's kernel time needs kernel.perf_event_paranoid ≤ 1, or CAP_PERFMON)", rt.ErrNoPrivilege},
		{"no capability, paranoid unreadable", unix.EPERM, -1, "not permitted: perf_event_open returned EPERM (counting a thread's kernel time needs kernel.perf_event_paranoid ≤ 1, or CAP_PERFMON)", rt.ErrNoPrivilege},
		{"thread gone", unix.ESRCH, 2, "the thread is gone", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := rt.PerfReason(c.errno, c.paranoid); !strings.HasPrefix(got, c.want) {
				t.Errorf("PerfReason = %q; want it to start %q", got, c.want)
			}
			err := &rt.PerfError{Event: "cycles", Errno: c.errno, Paranoid: c.paranoid}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v does not match %v", err, c.is)
			}
			if !errors.Is(err, c.errno) || err.Error() != rt.PerfReason(c.errno, c.paranoid) {
				t.Errorf("%q: want the errno wrapped and the reason as text", err)
			}
		})
	}
}

// TestOpenCounters opens the software and hardware counters on this
// thread: software ones count, hardware ones are counted or skipped with
// their reason.
func TestOpenCounters(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := probe.OpenCounters(unix.Gettid(), append(append([]rt.PerfEvent(nil), rt.PerfSoftware...), rt.PerfHardware...))
	if errors.Is(err, rt.ErrNoPrivilege) || errors.Is(err, rt.ErrNotSupported) {
		t.Skipf("no perf events here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Names)+len(c.Skipped) != len(rt.PerfSoftware)+len(rt.PerfHardware) {
		t.Fatalf("opened %v, skipped %v: some event is neither", c.Names, c.Skipped)
	}
	for _, s := range c.Skipped {
		if !strings.Contains(s, "perf_event_open returned") {
			t.Errorf("skipped %q without the errno", s)
		}
	}
	before := make([]uint64, len(c.Names))
	after := make([]uint64, len(c.Names))
	if err := c.Read(before); err != nil {
		t.Fatal(err)
	}
	unix.Nanosleep(&unix.Timespec{Nsec: 1e6}, nil) // a context switch
	// Page faults and task clock: a fresh mapping faults on first touch
	// (a heap slice may reuse pages an earlier test already faulted in).
	b, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	for i := range b {
		b[i] = byte(i)
	}
	if err := c.Read(after); err != nil {
		t.Fatal(err)
	}
	for i, n := range c.Names {
		switch n {
		case "context-switches", "task-clock", "page-faults":
			if after[i] <= before[i] {
				t.Errorf("%s %d → %d; want it to count", n, before[i], after[i])
			}
		}
	}
	if a := testing.AllocsPerRun(10, func() { c.Read(after) }); a != 0 {
		t.Errorf("Read allocs %v, want 0", a)
	}
	if err := c.Close(); err != nil || c.Close() != nil {
		t.Errorf("Close: %v; want nil twice", err)
	}
}

// TestOpenCountersHardwareOnly: where the PMU is missing (ENOENT), a set of
// hardware events alone fails, naming the reason for each.
func TestOpenCountersHardwareOnly(t *testing.T) {
	c, err := probe.OpenCounters(0, rt.PerfHardware)
	if err == nil {
		c.Close()
		t.Skip("this machine has hardware counters")
	}
	if !strings.Contains(err.Error(), "cycles: ") || !strings.Contains(err.Error(), "perf_event_open returned") {
		t.Errorf("error %q names neither event nor errno", err)
	}
	t.Log(err)
}

func BenchmarkCountersRead(b *testing.B) {
	c, err := probe.OpenCounters(0, rt.PerfSoftware)
	if err != nil {
		b.Skip(err)
	}
	defer c.Close()
	v := make([]uint64, len(c.Names))
	b.ReportAllocs()
	for b.Loop() {
		c.Read(v)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/read-all")
}
