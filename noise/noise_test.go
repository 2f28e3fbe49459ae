package noise

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/rt"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// stopBound is how long a Stop may take before a test calls it hung: far
// beyond what ending a thread takes on a loaded machine (milliseconds),
// well within the package's timeout.
const stopBound = 30 * time.Second

// run starts a Noise for cfg, lets it work for d, stops it, and checks
// that Stop returned within 1 s and every thread really ended.
func run(t *testing.T, cfg Config, d time.Duration) (*Noise, Work) {
	t.Helper()
	n, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	if err := n.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	tids := n.TIDs()
	if len(tids) != threadCount(cfg) {
		t.Errorf("TIDs %v, want %d", tids, threadCount(cfg))
	}
	// The noise must run for real: at least d, and until every thread has
	// done some work (on a loaded machine a thread may start late).
	begin := time.Now()
	if !testutil.Eventually(d+30*time.Second, func() bool { return time.Since(begin) >= d && n.everyThreadWorked() }) {
		t.Errorf("a thread did no work in %v: %+v", time.Since(begin), n.Report())
	}
	if s := n.State(); s != "on" && s != "off" {
		t.Errorf("State while running = %q, want on or off", s)
	}
	t0 := time.Now()
	w, err := n.Stop()
	if err != nil {
		t.Errorf("Stop: %v", err)
	}
	// Stop returns once every thread saw the flag (between two slices of
	// work) and ended, which under load takes what the machine gives
	// them: logged; a Stop that hangs is caught by the bound.
	if took := time.Since(t0); took > stopBound {
		t.Errorf("Stop took %v: hung?", took)
	} else {
		t.Logf("Stop took %v", took)
	}
	if s := n.State(); s != "stopped" {
		t.Errorf("State after Stop = %q, want stopped", s)
	}
	waitGone(t, tids)
	rep := n.Report()
	if rep.Work != w {
		t.Errorf("Report().Work %+v != Stop's %+v", rep.Work, w)
	}
	return n, rep
}

// everyThreadWorked reports whether every thread has counted some work.
func (n *Noise) everyThreadWorked() bool {
	for i := range n.slots {
		if n.slots[i].units.Load() == 0 {
			return false
		}
	}
	return len(n.slots) > 0
}

// waitGone fails unless every tid leaves /proc/self/task within 1 s: a
// locked goroutine that returns takes its OS thread with it. The one
// exception is the main thread (tid = pid), which the Go runtime parks
// forever instead of ending when a locked goroutine that ran on it exits.
func waitGone(t *testing.T, tids []int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for _, tid := range tids {
		if tid == os.Getpid() {
			t.Logf("thread %d is the main thread: parked by the runtime, not ended", tid)
			continue
		}
		gone := func() bool {
			_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
			return errors.Is(err, os.ErrNotExist)
		}
		if !testutil.Eventually(time.Until(deadline), gone) {
			t.Errorf("thread %d still exists after Stop", tid)
		}
	}
}

func TestKindsWork(t *testing.T) {
	testutil.Long(t, "runs every noise kind")
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		// Each kind with the scenario's default parameters, one thread.
		{"spin", Config{Kind: KindSpin, Threads: 1}},
		{"memory 64MiB", params(Config{Kind: KindMemory, Threads: 1})},
		{"syscall getppid", params(Config{Kind: KindSyscall, Threads: 1})},
		{"syscall clock_gettime", params(Config{Kind: KindSyscall, Threads: 1, Syscall: SyscallClockGettime})},
		{"syscall sched_yield", params(Config{Kind: KindSyscall, Threads: 1, Syscall: SyscallSchedYield})},
		{"messaging", params(Config{Kind: KindMessaging, Threads: 1})},
		{"file_write", params(Config{Kind: KindFileWrite, Threads: 1})},
		{"udp", params(Config{Kind: KindUDP, Threads: 1})},
		// Two threads, with a small memory buffer and nice 5.
		{"spin x2", Config{Kind: KindSpin, Threads: 2, Nice: 5}},
		{"memory x2 1MiB", Config{Kind: KindMemory, Threads: 2, Size: 1 << 20}},
		{"udp x2", params(Config{Kind: KindUDP, Threads: 2, Rate: 5000})},
		{"file_write x2", Config{Kind: KindFileWrite, Threads: 2, Size: 4096, Blocks: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, w := run(t, tc.cfg, 200*time.Millisecond)
			if w.Count == 0 {
				t.Errorf("work %+v: count 0", w)
			}
			if want := tc.cfg.Kind.Unit(); w.Unit != want {
				t.Errorf("unit %q, want %q", w.Unit, want)
			}
			if w.Threads != threadCount(tc.cfg) {
				t.Errorf("threads %d, want %d", w.Threads, threadCount(tc.cfg))
			}
			for i, a := range w.Applied {
				if a.Policy != "SCHED_OTHER" || a.Nice != tc.cfg.Nice {
					t.Errorf("thread %d applied %s nice %d, want SCHED_OTHER nice %d", i, a.Policy, a.Nice, tc.cfg.Nice)
				}
			}
			checkSchedule(t, n)
			// No speed or share assertion: what the machine gave is logged.
			t.Logf("%s: %d %s in %v = %.4g %s/s (bytes %d, sent %d, received %d); on %.3f of the time, %.3f of a CPU",
				tc.name, w.Count, w.Unit, time.Duration(w.Elapsed), w.PerSec(), w.Unit, w.Bytes, w.Sent, w.Received, w.Duty, w.CPUShare)
		})
	}
}

func TestPinned(t *testing.T) {
	testutil.Requires(t, testutil.CPUs(2))
	_, w := run(t, params(Config{Kind: KindSyscall, Threads: 2, CPUs: []int{1, 0}}), 50*time.Millisecond)
	var got [][]int
	for _, a := range w.Applied {
		got = append(got, a.CPUs)
	}
	if diff := cmp.Diff([][]int{{1}, {0}}, got); diff != "" {
		t.Errorf("affinity read back (-want +got):\n%s", diff)
	}
}

// TestDutyCycle runs a spinner always on and one 20 ms on, 30 ms off for
// about a second each, and checks the schedule both kept (checkSchedule):
// that is what rtload controls. How much CPU each got, and their rates,
// are the machine's: logged, not asserted (under 4 busy loops and 2 dd
// the duty-cycled spinner got 0.21 of its 0.4).
func TestDutyCycle(t *testing.T) {
	testutil.Long(t, "runs noise for seconds")
	for _, cfg := range []Config{
		{Kind: KindSpin, Threads: 1},
		{Kind: KindSpin, Threads: 1, On: 20 * time.Millisecond, Off: 30 * time.Millisecond},
	} {
		n, w := run(t, cfg, time.Second)
		phases, _ := n.Phases()
		checkSchedule(t, n)
		t.Logf("on %v off %v: %d loops in %v (%.4g/s), %d phases; on %.3f of the time, %.3f of a CPU",
			cfg.On, cfg.Off, w.Count, time.Duration(w.Elapsed), w.PerSec(), len(phases[0]), w.Duty, w.CPUShare)
		if cfg.Off > 0 && len(phases[0]) < 2 {
			t.Logf("fewer than 2 of the %d on phases ran: the thread was off its CPU for most of the second", w.Elapsed/int64(cfg.On+cfg.Off))
		}
	}
}

// checkSchedule asserts the schedule a Noise keeps, from its phase log
// once it stopped: with a duty cycle, every on phase begins inside its own
// window [t0 + k·(on+off), t0 + k·(on+off) + on), its last slice of work
// begins before that window ends, and no window holds two phases; always
// on, each thread ran one phase, from t0 on. How much of its windows a
// thread got is the machine's (Work.Duty, Work.CPUShare): not asserted.
func checkSchedule(t *testing.T, n *Noise) {
	t.Helper()
	phases, dropped := n.Phases()
	t0, on, off := n.Schedule()
	if phases == nil || t0 == 0 {
		t.Fatalf("no phase log (t0 %d) after Stop", t0)
	}
	period := int64(on + off)
	for i, ps := range phases {
		if dropped[i] != 0 {
			t.Errorf("thread %d: %d phases not logged", i, dropped[i])
		}
		if off <= 0 {
			if len(ps) != 1 || ps[0].StartNs < t0 || ps[0].EndNs < ps[0].LastStepNs || ps[0].LastStepNs < ps[0].StartNs {
				t.Errorf("thread %d always on: phases %+v from t0 %d, want one from t0 on", i, ps, t0)
			}
			continue
		}
		prev := int64(-1)
		for j, p := range ps {
			k := (p.StartNs - t0) / period
			from, until := t0+k*period, t0+k*period+int64(on)
			if p.StartNs < from || p.StartNs >= until || p.LastStepNs < p.StartNs || p.LastStepNs >= until || p.EndNs < p.LastStepNs {
				t.Errorf("thread %d phase %d %+v: want it begun, and its last slice begun, in window %d [%d, %d)", i, j, p, k, from, until)
			}
			if k <= prev {
				t.Errorf("thread %d phase %d in window %d after one in window %d: two phases in a window", i, j, k, prev)
			}
			prev = k
		}
	}
}

func TestRTNoise(t *testing.T) {
	testutil.Requires(t, testutil.Cap("CAP_SYS_NICE"), testutil.CPUs(2))
	cpu := 1
	n, err := New(Config{Kind: KindSpin, Threads: 1, CPUs: []int{cpu}, Policy: rt.FIFO, Priority: 1, AllowRT: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	defer n.Stop() // never leave an RT spinner behind, even on Fatal
	tids := n.TIDs()
	if len(tids) != 1 {
		t.Fatalf("TIDs %v", tids)
	}
	// Read from the kernel once it spins (its first work counted).
	if !testutil.Eventually(30*time.Second, n.everyThreadWorked) {
		t.Fatalf("the spinner did no work: %+v", n.Report())
	}
	a, err := rt.ThreadSched(tids[0])
	if err != nil {
		t.Fatal(err)
	}
	if a.Policy != "SCHED_FIFO" || a.Priority != 1 || !cmp.Equal(a.CPUs, []int{cpu}) {
		t.Errorf("thread %d: %s %d cpus %v, want SCHED_FIFO 1 cpus [%d]", tids[0], a.Policy, a.Priority, a.CPUs, cpu)
	}
	t0 := time.Now()
	w, err := n.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(t0); took > stopBound {
		t.Errorf("Stop took %v: hung?", took)
	}
	waitGone(t, tids)
	if w.Count == 0 {
		t.Errorf("work %+v", w)
	}
}

func TestUDPLoopback(t *testing.T) {
	const rate = 20000.0
	n, w := run(t, Config{Kind: KindUDP, Threads: 2, Rate: rate, Size: 100}, 200*time.Millisecond)
	addrs := n.Addrs()
	if len(addrs) != 2 {
		t.Fatalf("Addrs %v, want 2 sinks", addrs)
	}
	for _, a := range addrs {
		if a.Addr().String() != "127.0.0.1" || a.Port() == 0 {
			t.Errorf("sink %v, want 127.0.0.1:<port>", a)
		}
	}
	if w.Sent == 0 || w.Count != w.Sent || w.Bytes != 100*w.Sent {
		t.Errorf("work %+v: want count = sent > 0, bytes = 100 × sent", w)
	}
	// Stop drained every sink: what was sent was received or dropped.
	if w.Received+w.Drops != w.Sent || w.Received == 0 {
		t.Errorf("sent %d, received %d, dropped %d: want sent = received + dropped, received > 0", w.Sent, w.Received, w.Drops)
	}
	// The pacer never runs ahead: at most rate × elapsed + 1 per thread.
	if max := 2 * (rate*float64(w.Elapsed)/1e9 + 1); float64(w.Sent) > max {
		t.Errorf("sent %d in %v, more than the pacer allows (%.0f)", w.Sent, time.Duration(w.Elapsed), max)
	}
}

func TestFileWriteRemovesFiles(t *testing.T) {
	dir := t.TempDir()
	n, err := New(Config{Kind: KindFileWrite, Threads: 2, Dir: dir, Size: 256, Blocks: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	// Each thread writes its file from its first slice of work on.
	var during []string
	testutil.Eventually(30*time.Second, func() bool {
		during, _ = filepath.Glob(filepath.Join(dir, "*"))
		return len(during) == 2 && n.everyThreadWorked()
	})
	w, err := n.Stop()
	if err != nil {
		t.Fatal(err)
	}
	after, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(during) != 2 || len(after) != 0 {
		t.Errorf("files while running %v (want 2), after Stop %v (want none)", during, after)
	}
	if w.Count == 0 || w.Count%256 != 0 {
		t.Errorf("work %+v: want a positive multiple of 256 bytes", w)
	}

	// Dir "": temporary directories, removed too.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	run(t, params(Config{Kind: KindFileWrite, Threads: 1}), 50*time.Millisecond)
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Errorf("left in TMPDIR after Stop: %v", left)
	}
}

func TestMessagingCounts(t *testing.T) {
	_, w := run(t, Config{Kind: KindMessaging, Threads: 1, Groups: 1, FDs: 2, Loops: 50, Size: 64}, 200*time.Millisecond)
	if w.Received == 0 || w.Count != w.Received || w.Received > w.Sent || w.Bytes != 64*w.Received {
		t.Errorf("work %+v: want count = received > 0, received ≤ sent, bytes = 64 × received", w)
	}
}

func TestStartErrorCleansUp(t *testing.T) {
	// CPU 1000 does not exist: thread 1 fails after thread 0 and both
	// sinks were made; everything must be closed (TestMain checks fds).
	n, err := New(params(Config{Kind: KindUDP, Threads: 2, CPUs: []int{0, 1000}}))
	if err != nil {
		t.Fatal(err)
	}
	err = n.Start()
	if err == nil || !strings.Contains(err.Error(), "noise udp thread 1: sched_setaffinity(cpus [1000])") {
		t.Fatalf("Start error %v, want thread 1's sched_setaffinity error", err)
	}
	if s := n.State(); s != "stopped" {
		t.Errorf("State after failed Start = %q", s)
	}
	if w, err := n.Stop(); err != nil || w.Count != 0 {
		t.Errorf("Stop after failed Start: %+v, %v", w, err)
	}
	if err := n.Start(); err == nil {
		t.Error("second Start succeeded")
	}
}

func TestLifecycle(t *testing.T) {
	n, err := New(Config{Kind: KindSpin, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := n.State(); s != "stopped" {
		t.Errorf("State before Start = %q", s)
	}
	if w, err := n.Stop(); err != nil || w.Count != 0 || w.Unit != "loops" {
		t.Errorf("Stop before Start: %+v, %v", w, err)
	}
	if n.TIDs() != nil || n.DutyObserved() != 0 {
		t.Error("TIDs or DutyObserved set before Start")
	}
	if err := n.Start(); err == nil {
		t.Error("Start after Stop succeeded")
	}
}

func TestStopIdempotent(t *testing.T) {
	n, err := New(Config{Kind: KindMemory, Threads: 1, Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	w1, err1 := n.Stop()
	w2, err2 := n.Stop()
	if w1 != w2 || err1 != nil || err2 != nil {
		t.Errorf("Stop twice: %+v %v, then %+v %v", w1, err1, w2, err2)
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		want   string // the whole message
		wantRT bool   // errors.Is ErrRTNoise
	}{
		// The refusal names the setting that allows it.
		{"fifo without allow_rt", Config{Kind: KindSpin, Threads: 1, Policy: rt.FIFO, Priority: 50},
			"noise spin: SCHED_FIFO 50 noise can starve the machine (every CPU it runs on is lost to everything below priority 50): set allow_rt_noise: true in the scenario to allow it", true},
		{"rr without allow_rt", params(Config{Kind: KindUDP, Threads: 1, Policy: rt.RR, Priority: 10}),
			"noise udp: SCHED_RR 10 noise can starve the machine (every CPU it runs on is lost to everything below priority 10): set allow_rt_noise: true in the scenario to allow it", true},
		{"threads 0", Config{Kind: KindSpin}, "noise spin: threads 0 out of range (allowed: 1–1024)", false},
		{"no kind", Config{Threads: 1},
			`noise kind(0): unknown kind (allowed: spin, memory, syscall, messaging, file_write, udp)`, false},
		// Every problem is listed, not only the first.
		{"several", Config{Kind: KindMemory, Threads: 0, Nice: 40, Size: 100},
			"noise memory: threads 0 out of range (allowed: 1–1024); nice 40 out of range (allowed: -20–19); size 100 out of range (allowed: ≥ 8192 bytes)", false},
		{"fifo priority 0", Config{Kind: KindSpin, Threads: 1, Policy: rt.FIFO, AllowRT: true},
			"noise spin: priority 0 out of range for SCHED_FIFO (allowed: 1–99)", false},
		{"other with priority", Config{Kind: KindSpin, Threads: 1, Priority: 5},
			"noise spin: priority 5 out of range for SCHED_OTHER (allowed: 0)", false},
		{"duty never on", Config{Kind: KindSpin, Threads: 1, Off: time.Millisecond},
			"noise spin: duty cycle on 0 off 1ms: the noise would never run (set on > 0, or off 0 for always on)", false},
		{"cpu negative", Config{Kind: KindSpin, Threads: 1, CPUs: []int{-1}},
			"noise spin: cpus[0] -1 out of range (allowed: 0–1023)", false},
		{"udp payload", Config{Kind: KindUDP, Threads: 1, Size: 8, Rate: 1},
			"noise udp: size 8 out of range (allowed: 16–65507 bytes)", false},
		{"udp rate", Config{Kind: KindUDP, Threads: 1, Size: 64, Rate: -1},
			"noise udp: rate -1 out of range (allowed: > 0 – 1e+07 messages/s per thread)", false},
		{"syscall", Config{Kind: KindSyscall, Threads: 1, Syscall: 9},
			`noise syscall: syscall(9) unknown (allowed: getppid, clock_gettime, sched_yield)`, false},
		// noise has no defaults: a kind's parameters left zero are refused.
		{"memory, no size", Config{Kind: KindMemory, Threads: 1},
			"noise memory: size 0 out of range (allowed: ≥ 8192 bytes)", false},
		{"udp, no size or rate", Config{Kind: KindUDP, Threads: 1},
			"noise udp: size 0 out of range (allowed: 16–65507 bytes); rate 0 out of range (allowed: > 0 – 1e+07 messages/s per thread)", false},
		{"syscall, no call", Config{Kind: KindSyscall, Threads: 1},
			`noise syscall: syscall(0) unknown (allowed: getppid, clock_gettime, sched_yield)`, false},
		{"file_write, no block", Config{Kind: KindFileWrite, Threads: 1},
			"noise file_write: size 0, blocks 0: each ≥ 1", false},
		{"messaging, no shape", Config{Kind: KindMessaging, Threads: 1, Groups: 1},
			"noise messaging: size 0, groups 1, fds 0, loops 0: each ≥ 1", false},
		{"messaging fifo", params(Config{Kind: KindMessaging, Threads: 1, Policy: rt.FIFO, Priority: 1, AllowRT: true}),
			"noise messaging: policy SCHED_FIFO not supported (messaging workers run at SCHED_OTHER; use nice)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := New(tc.cfg)
			if err == nil {
				n.Stop()
				t.Fatalf("New(%+v) succeeded", tc.cfg)
			}
			if err.Error() != tc.want {
				t.Errorf("error:\n got %s\nwant %s", err, tc.want)
			}
			if errors.Is(err, ErrRTNoise) != tc.wantRT {
				t.Errorf("errors.Is(err, ErrRTNoise) = %v, want %v", !tc.wantRT, tc.wantRT)
			}
		})
	}
}

func TestNewKeepsConfig(t *testing.T) {
	cpus := []int{0}
	cfg := Config{Kind: KindUDP, Threads: 1, CPUs: cpus, Size: 64, Rate: 10000}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cpus[0] = 7
	if n.Config().CPUs[0] != 0 || n.Config().Size != 64 || n.Config().Rate != 10000 {
		t.Errorf("config %+v: New must copy CPUs and change nothing else", n.Config())
	}
}

func TestWarnings(t *testing.T) {
	rtCfg := Config{Kind: KindSpin, Threads: 1, Policy: rt.FIFO, Priority: 1, AllowRT: true}
	for _, tc := range []struct {
		name string
		cfg  Config
		off  bool
		err  error
		want []string
	}{
		{"rt, throttling off", rtCfg, true, nil, []string{"RT throttling is off (sched_rt_runtime_us = -1): real-time noise may hang CPUs"}},
		{"rt, throttling on", rtCfg, false, nil, nil},
		{"other, throttling off", Config{Kind: KindSpin, Threads: 1}, true, nil, nil},
		{"rt, unreadable", rtCfg, false, os.ErrPermission, []string{"RT throttling state unknown (permission denied): real-time noise may hang CPUs if it is off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, warnings(tc.cfg, tc.off, tc.err)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
	off, err := RTThrottlingOff()
	if err != nil {
		t.Skipf("RTThrottlingOff: %v", err)
	}
	t.Logf("RT throttling off: %v; Warnings: %q", off, Warnings(rtCfg))
}

// TestStepAllocs proves the work slices of the kinds that run on the
// engine's GC-off window allocate nothing.
func TestStepAllocs(t *testing.T) {
	var s slot
	u, err := newUDPWorker(64, 1e6)
	if err != nil {
		t.Fatal(err)
	}
	defer u.finish(&s)
	u.phase(0) // everything is due: every step sends a batch
	for _, tc := range []struct {
		name string
		w    worker
	}{
		{"spin", &spinWorker{}},
		{"memory", newMemoryWorker(1 << 20)},
		{"syscall", newSyscallWorker(SyscallClockGettime)},
	} {
		if a := testing.AllocsPerRun(100, func() { tc.w.step(&s, math.MaxInt64) }); a != 0 {
			t.Errorf("%s step allocs %v", tc.name, a)
		}
	}
	// udp.Sender.Send's common path (every batch sent at once) allocates
	// nothing; only a full send queue waits in mdlayher/socket's WriteFunc,
	// which does (sendCold).
	if a := testing.AllocsPerRun(100, func() { u.step(&s, math.MaxInt64) }); a != 0 {
		t.Errorf("udp step allocs %v (udp.Sender.Send)", a)
	}
}

// TestDutyCycleKinds runs every kind bursty (20 ms on, 30 ms off): the
// work counter moves, every on phase keeps to its window (checkSchedule),
// and Stop still ends every thread.
func TestDutyCycleKinds(t *testing.T) {
	testutil.Long(t, "runs every noise kind for half a second")
	for _, kind := range Kinds {
		t.Run(kind.String(), func(t *testing.T) {
			cfg := Config{Kind: kind, Threads: 1, On: 20 * time.Millisecond, Off: 30 * time.Millisecond}
			if kind == KindMemory {
				cfg.Size = 1 << 20
			}
			n, w := run(t, params(cfg), 500*time.Millisecond)
			checkSchedule(t, n)
			phases, _ := n.Phases()
			// The schedule is asserted; the share of the CPU it got is
			// the machine's (0.21 of 0.4 under 4 busy loops and 2 dd).
			t.Logf("%s: %d %s, %d phases; on %.3f of the time (schedule 0.4), %.3f of a CPU", kind, w.Count, w.Unit, len(phases[0]), w.Duty, w.CPUShare)
		})
	}
}

// params gives c the parameters its kind needs that it leaves zero, as
// the scenario's defaults (scenario/defaults.go) give them: noise has none
// of its own.
func params(c Config) Config {
	or := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	switch c.Kind {
	case KindMemory:
		or(&c.Size, 64<<20)
	case KindSyscall:
		if c.Syscall == 0 {
			c.Syscall = SyscallGetppid
		}
	case KindUDP:
		or(&c.Size, 64)
		if c.Rate == 0 {
			c.Rate = 10000
		}
	case KindFileWrite:
		or(&c.Size, 256)
		or(&c.Blocks, 2000)
	case KindMessaging:
		or(&c.Size, 100)
		or(&c.Groups, 1)
		or(&c.FDs, 4)
		or(&c.Loops, 100)
	}
	return c
}
