package workload_test

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/workload"
)

func newMessaging(t testing.TB, cfg workload.MessagingConfig) *workload.Messaging {
	t.Helper()
	m, err := workload.NewMessaging(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// runBounded runs m.Run(stop) and fails the test if it has not returned
// within limit (the run is then left behind: its threads block on fds).
func runBounded(t *testing.T, m *workload.Messaging, stop *atomic.Bool, limit time.Duration) workload.MessagingResult {
	t.Helper()
	done := make(chan workload.MessagingResult, 1)
	go func() { done <- m.Run(stop) }()
	select {
	case r := <-done:
		return r
	case <-time.After(limit):
		t.Fatalf("Run did not return within %v", limit)
		return workload.MessagingResult{}
	}
}

// modes are the two ways of running rounds: threads started per Run (the
// probe's) and the Pool (the noise's).
var modes = []struct {
	name string
	pool bool
}{{"per-run", false}, {"pool", true}}

func TestMessagingCounts(t *testing.T) {
	for _, mode := range modes {
		for _, transport := range []workload.Transport{workload.TransportSocket, workload.TransportPipe} {
			t.Run(mode.name+"/"+transport.String(), func(t *testing.T) {
				testMessagingCounts(t, workload.MessagingConfig{Groups: 2, FDs: 3, Loops: 50, Size: 100, Transport: transport, Pool: mode.pool})
			})
		}
	}
}

func testMessagingCounts(t *testing.T, cfg workload.MessagingConfig) {
	m := newMessaging(t, cfg)
	const want = 2 * 3 * 3 * 50 // every sender → every receiver of its group, Loops times
	var prev workload.MessagingResult
	for run := 0; run < 3; run++ { // counters are fresh per Run
		r := runBounded(t, m, nil, 30*time.Second)
		t.Logf("run %d: %+v", run, r)
		if r.Err != nil || r.Stopped || r.Errors != 0 {
			t.Fatalf("run %d: %+v", run, r)
		}
		if r.Sent != want || r.Received != want || r.Bytes != want*100 {
			t.Errorf("run %d: Sent %d Received %d Bytes %d; want %d, %d, %d", run, r.Sent, r.Received, r.Bytes, want, want, want*100)
		}
		if r.Workers != 12 {
			t.Errorf("run %d: Workers %d, want 12", run, r.Workers)
		}
		if r.UserNs+r.SysNs <= 0 || r.CPUNs <= 0 || r.ElapsedNs <= 0 {
			t.Errorf("run %d: user %d sys %d cpu %d elapsed %d ns; want CPU time and wall time", run, r.UserNs, r.SysNs, r.CPUNs, r.ElapsedNs)
		}
		if run == 1 && (r.Sent != prev.Sent || r.Received != prev.Received || r.Bytes != prev.Bytes || r.Workers != prev.Workers) {
			t.Errorf("second run %+v differs from first %+v", r, prev)
		}
		prev = r
	}
}

func TestMessagingPinned(t *testing.T) {
	testutil.Requires(t, testutil.CPUs(2))
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			m := newMessaging(t, workload.MessagingConfig{Groups: 1, FDs: 2, Loops: 10, Size: 64, CPUs: []int{0, 1}, Nice: 5, Pool: mode.pool})
			r := runBounded(t, m, nil, 30*time.Second)
			if r.Err != nil || r.Sent != 40 || r.Received != 40 || r.Workers != 4 {
				t.Errorf("pinned run = %+v", r)
			}
		})
	}
}

// TestMessagingPoolSched reads the Pool's workers back from the kernel:
// pinned round-robin, at their nice, named from the template.
func TestMessagingPoolSched(t *testing.T) {
	testutil.Requires(t, testutil.Cap("CAP_SYS_NICE"), testutil.CPUs(2))
	m := newMessaging(t, workload.MessagingConfig{Groups: 2, FDs: 2, Loops: 10, Size: 64, CPUs: []int{1, 0}, Nice: -3, Pool: true,
		Sched: rt.Sched{Name: "rtl-nz/msg"}})
	applied := m.Applied()
	if len(applied) != 8 {
		t.Fatalf("Applied: %d workers, want 8", len(applied))
	}
	for i, a := range applied {
		got, err := rt.ThreadSched(a.TID)
		if err != nil {
			t.Fatal(err)
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/comm", a.TID))
		if err != nil {
			t.Fatal(err)
		}
		wantName := rt.Comm(fmt.Sprintf("rtl-nz/msg.%d", i))
		if cpu := []int{1, 0}[i%2]; len(got.CPUs) != 1 || got.CPUs[0] != cpu || got.Policy != "SCHED_OTHER" || got.Nice != -3 ||
			strings.TrimSpace(string(comm)) != wantName {
			t.Errorf("worker %d (tid %d): %+v, comm %q; want cpu %d, SCHED_OTHER nice -3, name %q", i, a.TID, got, comm, cpu, wantName)
		}
	}
	if r := runBounded(t, m, nil, 30*time.Second); r.Err != nil || r.Sent != 2*2*2*10 {
		t.Errorf("run = %+v", r)
	}
}

// TestMessagingStop stops a run that would take hours: it returns soon,
// every byte sent is read (receivers drain to EOF), and the next Run works
// on fresh pairs.
func TestMessagingStop(t *testing.T) {
	testutil.Long(t, "runs 80 messaging workers")
	for _, mode := range modes {
		for _, transport := range []workload.Transport{workload.TransportSocket, workload.TransportPipe} {
			t.Run(mode.name+"/"+transport.String(), func(t *testing.T) {
				testMessagingStop(t, workload.MessagingConfig{Groups: 4, FDs: 10, Loops: 1_000_000, Size: 100, Transport: transport, Pool: mode.pool})
			})
		}
	}
}

func testMessagingStop(t *testing.T, cfg workload.MessagingConfig) {
	m := newMessaging(t, cfg)
	for run := 0; run < 2; run++ {
		var stop atomic.Bool
		// 300 ms: starting 80 threads can take tens of ms on a loaded 2-CPU machine.
		timer := time.AfterFunc(300*time.Millisecond, func() { stop.Store(true) })
		r := runBounded(t, m, &stop, 5*time.Second)
		timer.Stop()
		t.Logf("run %d: %+v", run, r)
		if !r.Stopped || r.Err != nil || r.Errors != 0 || r.Workers != 80 {
			t.Fatalf("run %d = %+v; want Stopped, 80 workers, no errors", run, r)
		}
		if r.Sent == 0 {
			// How much the 80 workers sent in 300 ms is the machine's: in a
			// busy make test (4 busy loops, 2 dd, -race) they got 2 ms of
			// CPU in the run's 166 ms and sent nothing. Stopping and the
			// accounting below are rtload's.
			t.Logf("run %d: nothing sent before the stop (workers' CPU %v in %v)", run, time.Duration(r.CPUNs), time.Duration(r.ElapsedNs))
		}
		if r.Received > r.Sent || r.Bytes != r.Received*100 {
			t.Errorf("run %d: Sent %d Received %d Bytes %d", run, r.Sent, r.Received, r.Bytes)
		}
		if r.Received != r.Sent {
			// Senders write whole messages and receivers read to EOF.
			t.Errorf("run %d: Received %d of %d sent messages", run, r.Received, r.Sent)
		}
	}
	// Stop already set: no thread starts or is released.
	var stop atomic.Bool
	stop.Store(true)
	if r := m.Run(&stop); !r.Stopped || r.Workers != 0 || r.Sent != 0 {
		t.Errorf("Run with stop set = %+v", r)
	}
}

func TestMessagingCloseNoLeak(t *testing.T) {
	before, err := testutil.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		for _, transport := range []workload.Transport{workload.TransportSocket, workload.TransportPipe} {
			m, err := workload.NewMessaging(workload.MessagingConfig{Groups: 2, FDs: 3, Loops: 5, Size: 10, Transport: transport, Pool: mode.pool})
			if err != nil {
				t.Fatal(err)
			}
			mid, err := testutil.OpenFDs()
			if err != nil {
				t.Fatal(err)
			}
			// By count: testutil.Leaked ignores pipes (the runtime's wakeup pipe).
			if n := len(mid) - len(before); n != 2*3*2 {
				t.Errorf("%s %s: %d new fds, want %d (two per receiver)", mode.name, transport, n, 2*3*2)
			}
			var stop atomic.Bool
			stop.Store(true)
			m.Run(&stop)
			if r := m.Run(nil); r.Sent != 2*3*3*5 {
				t.Errorf("%s %s: run = %+v", mode.name, transport, r)
			}
			workers := m.Applied()
			if mode.pool != (len(workers) == 12) {
				t.Errorf("%s: Applied lists %d workers", mode.name, len(workers))
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if err := m.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if r := m.Run(nil); r.Err == nil || r.Workers != 0 {
				t.Errorf("Run after Close = %+v; want an Err", r)
			}
			waitGone(t, workers)
		}
	}
	after, err := testutil.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	if leaks := testutil.Leaked(before, after); len(leaks) > 0 || len(after) != len(before) {
		t.Errorf("%d fds before, %d after Close; leaked:\n%s", len(before), len(after), strings.Join(leaks, "\n"))
	}
}

// tasks returns the threads of this process (/proc/self/task).
func tasks(t testing.TB) map[int]bool {
	t.Helper()
	ids, err := readTasks()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func readTasks() (map[int]bool, error) {
	d, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	ids := make(map[int]bool, len(d))
	for _, e := range d {
		var tid int
		if _, err := fmt.Sscan(e.Name(), &tid); err == nil {
			ids[tid] = true
		}
	}
	return ids, nil
}

// waitGone fails unless every worker's thread leaves /proc/self/task
// within 2 s (a locked goroutine that returns takes its thread along).
func waitGone(t *testing.T, workers []rt.Applied) {
	t.Helper()
	left := 0
	gone := func() bool {
		now := tasks(t)
		left = 0
		for _, a := range workers {
			if now[a.TID] {
				left++
			}
		}
		return left == 0
	}
	if !testutil.Eventually(2*time.Second, gone) {
		t.Errorf("%d of %d worker threads still exist after Close", left, len(workers))
	}
}

// TestMessagingPoolStartError: a worker that cannot be pinned (CPU 1000
// does not exist) fails NewMessaging with its name; the workers already
// started end and every fd is closed (TestMain checks fds too).
func TestMessagingPoolStartError(t *testing.T) {
	before, err := testutil.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	threads := len(tasks(t))
	m, err := workload.NewMessaging(workload.MessagingConfig{Groups: 1, FDs: 2, Loops: 1, Size: 1, CPUs: []int{0, 0, 1000}, Pool: true})
	if err == nil {
		m.Close()
		t.Fatal("no error")
	}
	if !strings.Contains(err.Error(), "messaging worker 2 (group 0): sched_setaffinity(cpus [1000])") {
		t.Errorf("error %q, want worker 2's sched_setaffinity error", err)
	}
	after, err := testutil.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("%d fds before, %d after the failed NewMessaging", len(before), len(after))
	}
	// The two started workers' threads end; the runtime may keep a spare
	// thread or two it made meanwhile (idle Ms are never ended).
	if !testutil.Eventually(2*time.Second, func() bool { return len(tasks(t)) <= threads+2 }) {
		t.Fatalf("threads %d before, %d after the failed NewMessaging", threads, len(tasks(t)))
	}
}

// spareThreads is how many threads the Go runtime may add to a process
// running rounds: idle threads it made to carry a P while others sat in
// syscalls (the sampler's, the workers'). It never ends them, and their
// number is bounded by the scheduler, not by the rounds.
const spareThreads = 3

// TestMessagingPoolThreads runs 50 rounds on a Pool and 50 without one,
// watching /proc/self/task from another goroutine meanwhile. The Pool's
// workers are the same threads before, in every sample and after its
// rounds; no thread appears and ends meanwhile (a thread made for a
// round), and the process keeps at most spareThreads more. Per-run rounds
// make threads that end (the sampler catches some of their 400).
func TestMessagingPoolThreads(t *testing.T) {
	const rounds = 50
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			m := newMessaging(t, workload.MessagingConfig{Groups: 1, FDs: 4, Loops: 20, Size: 100, Pool: mode.pool})
			for range 5 { // warm-up: the runtime's spare threads
				runBounded(t, m, nil, 30*time.Second)
			}
			workers := m.Applied()
			before := tasks(t)
			var (
				seen            = map[int]bool{}
				samples, missed int // samples, and those without every worker
				done            = make(chan struct{})
				quit            atomic.Bool
			)
			go func() { // a sample every ~0.5 ms, for at most 60 s
				defer close(done)
				tick := time.NewTicker(500 * time.Microsecond) // the sampling period
				defer tick.Stop()
				for i := 0; !quit.Load() && i < 120000; i++ {
					now, err := readTasks()
					if err != nil {
						continue
					}
					samples++
					for tid := range now {
						seen[tid] = true
					}
					for _, a := range workers {
						if !now[a.TID] {
							missed++
							break
						}
					}
					<-tick.C
				}
			}()
			for r := range rounds {
				if res := runBounded(t, m, nil, 30*time.Second); res.Err != nil || res.Received != 4*4*20 {
					t.Fatalf("round %d: %+v", r, res)
				}
			}
			quit.Store(true)
			<-done
			after := tasks(t)
			var transient, stayed []int // new threads that ended, and that stayed
			for tid := range seen {
				switch {
				case before[tid]:
				case after[tid]:
					stayed = append(stayed, tid)
				default:
					transient = append(transient, tid)
				}
			}
			t.Logf("%s: %d threads before, %d after %d rounds; %d samples saw %d new threads that ended and %d that stayed",
				mode.name, len(before), len(after), rounds, samples, len(transient), len(stayed))
			if !mode.pool {
				if len(transient) == 0 {
					t.Errorf("per-run rounds: no thread seen to start and end in %d samples over %d rounds of 8 threads each", samples, rounds)
				}
				return
			}
			for i, a := range workers {
				if !before[a.TID] || !after[a.TID] {
					t.Errorf("worker %d (tid %d): in /proc/self/task before %v, after %v", i, a.TID, before[a.TID], after[a.TID])
				}
			}
			if missed > 0 || len(transient) > 0 || len(after) > len(before)+spareThreads {
				t.Errorf("pool: %d threads before, %d after; new threads that ended %v, that stayed %v; %d of %d samples without every worker; want the same workers throughout, no thread made for a round, at most %d spare threads",
					len(before), len(after), transient, stayed, missed, samples, spareThreads)
			}
		})
	}
}

// TestMessagingPoolAllocs: a round on the Pool allocates nothing (the
// messaging noise runs rounds back to back in a soak, with GC off).
func TestMessagingPoolAllocs(t *testing.T) {
	m := newMessaging(t, workload.MessagingConfig{Groups: 1, FDs: 4, Loops: 20, Size: 100, Pool: true})
	var stop atomic.Bool
	runBounded(t, m, &stop, 30*time.Second)
	if a := testing.AllocsPerRun(50, func() { m.Run(&stop) }); a != 0 {
		t.Errorf("pooled Run allocs %v, want 0", a)
	}
}

func TestNewMessagingErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  workload.MessagingConfig
		want []string
	}{
		{"zero value lists every count", workload.MessagingConfig{},
			[]string{"messaging config", "groups 0: must be ≥ 1", "fds 0", "loops 0", "size 0"}},
		{"unknown transport", workload.MessagingConfig{Groups: 1, FDs: 1, Loops: 1, Size: 1, Transport: 7},
			[]string{`transport(7) unknown (allowed: socket, pipe)`}},
		{"nice and cpu out of range", workload.MessagingConfig{Groups: 1, FDs: 1, Loops: 1, Size: 1, Nice: 20, CPUs: []int{-1}},
			[]string{"nice 20 out of range", "cpu -1: must be ≥ 0"}},
		{"sched template with a policy and cpus", workload.MessagingConfig{Groups: 1, FDs: 1, Loops: 1, Size: 1, Sched: rt.Sched{Policy: rt.FIFO, Priority: 10, CPUs: []int{1}}},
			[]string{"sched template SCHED_FIFO priority 10 nice 0 cpus [1]: must be zero (workers run at SCHED_OTHER; set Nice and CPUs)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := workload.NewMessaging(tc.cfg)
			if err == nil {
				m.Close()
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// BenchmarkMessaging runs hackbench's default size (-g 10 -f 20 -l 100 -s
// 100, 400 threads, 400 000 messages) once per iteration, with threads
// started per Run (per-run, the probe's) and on a Pool (the noise's).
// s/run is wall time from release to the last worker's end, which
// excludes thread start in both; allocs/op shows what the Pool saves.
func BenchmarkMessaging(b *testing.B) {
	for _, transport := range []workload.Transport{workload.TransportSocket, workload.TransportPipe} {
		for _, mode := range modes {
			b.Run(transport.String()+"/"+mode.name, func(b *testing.B) {
				benchMessaging(b, workload.MessagingConfig{Groups: 10, FDs: 20, Loops: 100, Size: 100, Transport: transport, Pool: mode.pool})
			})
		}
	}
}

func benchMessaging(b *testing.B, cfg workload.MessagingConfig) {
	b.ReportAllocs()
	m, err := workload.NewMessaging(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	var msgs uint64
	var wall, user, sys, cpu int64
	for b.Loop() {
		r := m.Run(nil)
		if r.Err != nil || r.Received != r.Sent || r.Sent != uint64(cfg.Groups*cfg.FDs*cfg.FDs*cfg.Loops) {
			b.Fatalf("%+v", r)
		}
		msgs += r.Received
		wall += r.ElapsedNs
		user += r.UserNs
		sys += r.SysNs
		cpu += r.CPUNs
	}
	b.ReportMetric(float64(wall)/float64(msgs), "ns/msg")
	b.ReportMetric(float64(sys)/float64(msgs), "sys-ns/msg")
	b.ReportMetric(float64(user)/float64(msgs), "user-ns/msg")
	b.ReportMetric(float64(cpu)/float64(msgs), "cpu-ns/msg")
	b.ReportMetric(float64(wall)/1e9/float64(b.N), "s/run")
}
