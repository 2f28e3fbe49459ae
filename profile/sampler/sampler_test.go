package sampler

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/profile"
	"github.com/rtload/rtload/rt"
)

func TestMain(m *testing.M) { testutil.Main(m) }

func TestABIConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"IP", profile.SampleIP, unix.PERF_SAMPLE_IP},
		{"TID", profile.SampleTID, unix.PERF_SAMPLE_TID},
		{"TIME", profile.SampleTime, unix.PERF_SAMPLE_TIME},
		{"ADDR", profile.SampleAddr, unix.PERF_SAMPLE_ADDR},
		{"CALLCHAIN", profile.SampleCallchain, unix.PERF_SAMPLE_CALLCHAIN},
		{"ID", profile.SampleID, unix.PERF_SAMPLE_ID},
		{"CPU", profile.SampleCPU, unix.PERF_SAMPLE_CPU},
		{"PERIOD", profile.SamplePeriod, unix.PERF_SAMPLE_PERIOD},
		{"STREAM_ID", profile.SampleStreamID, unix.PERF_SAMPLE_STREAM_ID},
		{"IDENTIFIER", profile.SampleIdentifier, unix.PERF_SAMPLE_IDENTIFIER},
		{"RECORD_LOST", profile.RecordLost, unix.PERF_RECORD_LOST},
		{"RECORD_THROTTLE", profile.RecordThrottle, unix.PERF_RECORD_THROTTLE},
		{"RECORD_UNTHROTTLE", profile.RecordUnthrottle, unix.PERF_RECORD_UNTHROTTLE},
		{"RECORD_SAMPLE", profile.RecordSample, unix.PERF_RECORD_SAMPLE},
		{"CONTEXT_KERNEL", profile.ContextKernel, ctx(unix.PERF_CONTEXT_KERNEL)},
		{"CONTEXT_USER", profile.ContextUser, ctx(unix.PERF_CONTEXT_USER)},
		{"CONTEXT_MAX", profile.ContextMax, ctx(unix.PERF_CONTEXT_MAX)},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, unix has %#x", c.name, c.got, c.want)
		}
	}
}

// ctx converts a negative perf_callchain_context to its u64 form.
func ctx(v int64) uint64 { return uint64(v) }

func TestOpenRefusesBadConfig(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		cfg        Config
	}{
		{"no thread", "thread id 0: must be > 0", Config{}},
		{"ring not a power of two", "ring of 3 pages", Config{TID: 1, RingPages: 3}},
		{"unknown event", `event "branches"`, Config{TID: 1, Event: "branches"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.cfg)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
}

// TestCyclesRefusedWithReason checks that the hardware event, where the
// machine has no PMU (this project's VMs), fails as ErrNotSupported and
// that EventAuto falls back to cpu-clock saying why.
func TestCyclesRefusedWithReason(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	s, err := Open(Config{TID: unix.Gettid(), Event: EventCycles})
	if err == nil {
		s.Close()
		t.Skip("this machine has a PMU: cycles sampling opens")
	}
	if !errors.Is(err, rt.ErrNotSupported) {
		t.Fatalf("cycles: err = %v, want ErrNotSupported", err)
	}
	s, err = Open(Config{TID: unix.Gettid()})
	if err != nil {
		t.Fatalf("auto: %v", err)
	}
	defer s.Close()
	if s.Event() != EventCPUClock {
		t.Fatalf("auto sampled %q, want cpu-clock", s.Event())
	}
	if n := s.Notes(); len(n) != 1 || !strings.Contains(n[0], "cycles: not supported") || !strings.Contains(n[0], "sampled cpu-clock instead") {
		t.Fatalf("notes = %q", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil { // idempotent
		t.Fatalf("second Close: %v", err)
	}
	s.Drain() // after Close: a no-op, not a crash
}

// loopCap bounds a recvLoop's wall time whatever its call count: a
// safety bound for a machine so loaded that the loop thread gets almost
// no CPU. The loops are bounded by calls, not time, because cpu-clock
// samples the thread's CPU time: a given number of calls yields about
// the same number of samples however loaded the machine is, where a
// wall-clock window yields fewer the busier the other threads are.
const loopCap = 20 * time.Second

// recvLoop runs method's receive calls on a locked OS thread until calls
// are made or loopCap passes: mostly EAGAIN, 4 datagrams sent from the
// same thread every 64 calls (sendto: phase other) and a 20 µs
// clock_nanosleep every 512 (phase sleep). startRecvLoop returns it once
// the thread is ready; closing start starts it, done gives the calls
// made at its end.
type recvLoop struct {
	method string
	want   uint64 // calls asked for
	tid    int
	start  chan struct{}
	done   chan uint64
	stop   atomic.Bool // ends the loop early, checked every 64 calls
	// recvNs is the total time of the receive calls and wall the loop's,
	// read after done.
	recvNs int64
	wall   time.Duration
}

func startRecvLoop(t *testing.T, method string, calls uint64) *recvLoop {
	t.Helper()
	g, err := udp.Open(udp.Config{Count: 1, Addr: netip.MustParseAddr("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	sfd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(sfd) })
	ap := g.Addrs()[0]
	dst := &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	m := udp.MethodRecvFrom
	if method == "recvmsg" {
		m = udp.MethodRecvMsg
	}
	rx, err := udp.NewReceiver(m, 2048, 1)
	if err != nil {
		t.Fatal(err)
	}
	l := &recvLoop{method: method, want: calls, start: make(chan struct{}), done: make(chan uint64, 1)}
	ready := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread() // scheduling state unchanged: safe to hand back
		ready <- unix.Gettid()
		<-l.start
		payload := make([]byte, 64)
		ts := unix.NsecToTimespec(20_000)
		t0 := time.Now()
		deadline := t0.Add(loopCap)
		var n uint64
		for ; n < calls; n++ {
			if n%64 == 0 {
				if l.stop.Load() || time.Now().After(deadline) {
					break
				}
				for range 4 {
					unix.Sendto(sfd, payload, 0, dst)
				}
			}
			if n%512 == 0 {
				unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil)
			}
			c0 := time.Now()
			rx.Recv(g.FDs()[0])
			l.recvNs += time.Since(c0).Nanoseconds()
		}
		l.wall = time.Since(t0)
		l.done <- n
	}()
	l.tid = <-ready
	return l
}

// capped says whether the loop stopped at loopCap (or was stopped)
// before its calls were made, in words for a test log or failure (""
// when it was not).
func (l *recvLoop) capped(calls uint64) string {
	if calls >= l.want {
		return ""
	}
	return fmt.Sprintf("%s loop hit its %v time cap after %d of %d calls (the machine is too loaded for its thread to run)",
		l.method, loopCap, calls, l.want)
}

// sampleLoop samples a recvLoop to its end, draining every 20 ms from
// this goroutine as the engine's writer would.
func sampleLoop(t *testing.T, l *recvLoop, cfg Config) (*Sampler, uint64) {
	t.Helper()
	cfg.TID = l.tid
	s, err := Open(cfg)
	if err != nil {
		close(l.start)
		<-l.done
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	close(l.start)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case n := <-l.done:
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			return s, n
		case <-tick.C:
			s.Drain()
		}
	}
}

// TestSampleRecvLoop samples a real receive loop on its thread and checks
// what the kernel recorded: every sample on that TID, kernel frames that
// resolve through /proc/kallsyms to the syscall's own functions, the
// loop's Go frames resolved, and the phase split.
func TestSampleRecvLoop(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	ksyms, err := profile.LoadKallsyms()
	if err != nil {
		t.Skipf("kallsyms: %v", err)
	}
	for _, tt := range []struct{ method, kernelFrame string }{
		{"recvmsg", "___sys_recvmsg"},
		{"recvfrom", "__sys_recvfrom"},
	} {
		t.Run(tt.method, func(t *testing.T) {
			// 20 000 calls are about 30 ms of the thread's CPU time here,
			// 500 to 600 samples every 50 µs of it.
			l := startRecvLoop(t, tt.method, 20_000)
			s, calls := sampleLoop(t, l, Config{Event: EventCPUClock, Period: 50_000})
			if why := l.capped(calls); why != "" {
				t.Log(why)
			}
			p := s.Profile(profile.Symbols{Kernel: ksyms, User: profile.SelfSymbols{}}, profile.DefaultPhaseRule())
			ph := p.PhaseSamples()
			t.Logf("%d calls in %v, %d samples (drain %d, sleep %d, other %d), lost %d, throttles %d, notes %q",
				calls, l.wall, p.Samples(), ph[profile.PhaseDrain], ph[profile.PhaseSleep], ph[profile.PhaseOther], p.Lost, p.Throttles, p.Notes)
			if p.Samples() < 100 {
				t.Fatalf("%d samples of %d calls sampled every 50 µs of CPU time, want ≥ 100 %s", p.Samples(), calls, l.capped(calls))
			}
			if len(p.Threads) != 1 || p.Threads[0].TID != l.tid {
				t.Fatalf("threads %v, want only the loop's TID %d", p.Threads, l.tid)
			}
			if p.Event != "cpu-clock" || p.Period != 50_000 || p.Unit != "nanoseconds" {
				t.Fatalf("event %q period %d %s", p.Event, p.Period, p.Unit)
			}
			var kernelSamples, recvSamples, withUserLoop uint64
			for _, st := range p.Stacks {
				names := funcs(st.Frames, true)
				if len(names) > 0 {
					kernelSamples += st.Count
				}
				if slices.Contains(names, tt.kernelFrame) {
					recvSamples += st.Count
					if st.Phase != profile.PhaseDrain {
						t.Errorf("stack with %s in phase %v: %v", tt.kernelFrame, st.Phase, names)
					}
				}
				if slices.ContainsFunc(funcs(st.Frames, false), func(n string) bool { return strings.Contains(n, "startRecvLoop") }) {
					withUserLoop += st.Count
				}
			}
			if recvSamples == 0 {
				t.Fatalf("no sample has kernel frame %s (%d samples with kernel frames)", tt.kernelFrame, kernelSamples)
			}
			if ph[profile.PhaseDrain] < p.Samples()/4 {
				t.Errorf("drain phase %d of %d samples: the loop is mostly receive calls", ph[profile.PhaseDrain], p.Samples())
			}
			if testing.Verbose() {
				logTop(t, p)
			}
			if withUserLoop == 0 {
				t.Errorf("no stack's user frames resolve to the loop function")
			}
		})
	}
}

// funcs returns the base names of the kernel (or user) frames.
func funcs(frames []profile.Frame, kernel bool) []string {
	var out []string
	for _, f := range frames {
		switch {
		case f.Kernel && kernel:
			out = append(out, profile.BaseName(f.Func))
		case !f.Kernel && !kernel:
			out = append(out, f.Func)
		}
	}
	return out
}

// logTop logs the most sampled stacks, for -v runs.
func logTop(t *testing.T, p *profile.Profile) {
	st := slices.Clone(p.Stacks)
	slices.SortFunc(st, func(a, b profile.Stack) int { return int(b.Count) - int(a.Count) })
	for _, s := range st[:min(8, len(st))] {
		var names []string
		for _, f := range s.Frames {
			names = append(names, f.Func)
		}
		t.Logf("%5d %-5v %s", s.Count, s.Phase, strings.Join(names, " < "))
	}
}

// TestWindowDropsOutside: samples taken before Config.From are dropped
// and counted, not kept: a profiled trial keeps only its measured window.
func TestWindowDropsOutside(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread() // scheduling state unchanged
	s, err := Open(Config{TID: unix.Gettid(), Event: EventCPUClock, Period: 20_000, From: rt.Monotonic() + int64(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// About 20 ms of this thread's CPU time: some 1000 samples at 20 µs.
	cpu := func() int64 {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
			t.Fatal(err)
		}
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	start := cpu()
	for i := 0; i < 1_000_000_000; i++ {
		if i%1024 == 0 && cpu()-start > int64(20*time.Millisecond) {
			break
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Samples != 0 || st.Outside < 10 {
		t.Fatalf("kept %d samples, %d outside the window: want none kept and some outside", st.Samples, st.Outside)
	}
}
