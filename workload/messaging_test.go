package workload_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
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

func TestMessagingCounts(t *testing.T) {
	for _, transport := range []string{"socket", "pipe"} {
		t.Run(transport, func(t *testing.T) {
			cfg := workload.MessagingConfig{Groups: 2, FDs: 3, Loops: 50, Size: 100, Transport: transport}
			m := newMessaging(t, cfg)
			const want = 2 * 3 * 3 * 50 // every sender → every receiver of its group, Loops times
			var prev workload.MessagingResult
			for run := 0; run < 2; run++ { // counters are fresh per Run
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
		})
	}
}

func TestMessagingPinned(t *testing.T) {
	testutil.Requires(t, testutil.CPUs(2))
	m := newMessaging(t, workload.MessagingConfig{Groups: 1, FDs: 2, Loops: 10, Size: 64, CPUs: []int{0, 1}, Nice: 5})
	r := runBounded(t, m, nil, 30*time.Second)
	if r.Err != nil || r.Sent != 40 || r.Received != 40 || r.Workers != 4 {
		t.Errorf("pinned run = %+v", r)
	}
}

// TestMessagingStop stops a run that would take hours: it returns soon,
// every byte sent is read (receivers drain to EOF), and the next Run works
// on fresh pairs.
func TestMessagingStop(t *testing.T) {
	for _, transport := range []string{"socket", "pipe"} {
		t.Run(transport, func(t *testing.T) {
			cfg := workload.MessagingConfig{Groups: 4, FDs: 10, Loops: 1_000_000, Size: 100, Transport: transport}
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
				if r.Sent == 0 || r.Received > r.Sent || r.Bytes != r.Received*100 {
					t.Errorf("run %d: Sent %d Received %d Bytes %d", run, r.Sent, r.Received, r.Bytes)
				}
				if r.Received != r.Sent {
					// Senders write whole messages and receivers read to EOF.
					t.Errorf("run %d: Received %d of %d sent messages", run, r.Received, r.Sent)
				}
			}
			// Stop already set: no thread starts.
			var stop atomic.Bool
			stop.Store(true)
			if r := m.Run(&stop); !r.Stopped || r.Workers != 0 || r.Sent != 0 {
				t.Errorf("Run with stop set = %+v", r)
			}
		})
	}
}

func TestMessagingCloseNoLeak(t *testing.T) {
	before, err := testutil.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, transport := range []string{"socket", "pipe"} {
		m, err := workload.NewMessaging(workload.MessagingConfig{Groups: 2, FDs: 3, Loops: 5, Size: 10, Transport: transport})
		if err != nil {
			t.Fatal(err)
		}
		mid, err := testutil.OpenFDs()
		if err != nil {
			t.Fatal(err)
		}
		// By count: testutil.Leaked ignores pipes (the runtime's wakeup pipe).
		if n := len(mid) - len(before); n != 2*3*2 {
			t.Errorf("%s: %d new fds, want %d (two per receiver)", transport, n, 2*3*2)
		}
		var stop atomic.Bool
		stop.Store(true)
		m.Run(&stop)
		if r := m.Run(nil); r.Sent != 2*3*3*5 {
			t.Errorf("%s: run = %+v", transport, r)
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
	}
	after, err := testutil.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	if leaks := testutil.Leaked(before, after); len(leaks) > 0 || len(after) != len(before) {
		t.Errorf("%d fds before, %d after Close; leaked:\n%s", len(before), len(after), strings.Join(leaks, "\n"))
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
		{"unknown transport", workload.MessagingConfig{Groups: 1, FDs: 1, Loops: 1, Size: 1, Transport: "tcp"},
			[]string{`transport "tcp" unknown (allowed: socket, pipe)`}},
		{"nice and cpu out of range", workload.MessagingConfig{Groups: 1, FDs: 1, Loops: 1, Size: 1, Nice: 20, CPUs: []int{-1}},
			[]string{"nice 20 out of range", "cpu -1: must be ≥ 0"}},
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
// 100, 400 threads, 400 000 messages) once per iteration.
func BenchmarkMessaging(b *testing.B) {
	for _, transport := range []string{"socket", "pipe"} {
		b.Run(transport, func(b *testing.B) {
			m, err := workload.NewMessaging(workload.MessagingConfig{Groups: 10, FDs: 20, Loops: 100, Size: 100, Transport: transport})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			var msgs uint64
			var wall, user, sys, cpu int64
			for b.Loop() {
				r := m.Run(nil)
				if r.Err != nil || r.Received != r.Sent || r.Sent != 10*20*20*100 {
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
		})
	}
}
