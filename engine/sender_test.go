package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/pace"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
)

// countingPacer counts the calls to its pacer's Next; past limit calls it
// answers "never", so a sender walking its missed events
// one by one ends at once instead of after minutes, and the count shows it.
// ("Never" is 2^62 ns, 146 years: start + it does not overflow.)
type countingPacer struct {
	pace.Pacer
	next  atomic.Uint64
	limit uint64
}

func (p *countingPacer) Next(n uint64) time.Duration {
	if p.next.Add(1) > p.limit {
		return 1 << 62
	}
	return p.Pacer.Next(n)
}

// fakeTx sends every message, taking 10 µs a batch (6.4 million
// messages a second at most, as a fast real sender), and counts its calls.
type fakeTx struct{ calls uint64 }

func (f *fakeTx) Send(dst []int, now int64) (int, error) {
	f.calls++
	for rt.Monotonic() < now+int64(10*time.Microsecond) {
	}
	return len(dst), nil
}

func (*fakeTx) Close() error { return nil }

// runSender runs s (SCHED_OTHER sleeps) on a goroutine from now for
// window, halting it (halt) once it has sent its first message, and
// waits at most 60 s.
func runSender(t *testing.T, s *sender, window time.Duration, halt bool) {
	t.Helper()
	s.start = rt.Monotonic()
	s.end = s.start + int64(window)
	done := make(chan struct{})
	go func() { defer close(done); s.run(rt.Applied{Policy: rt.Other}) }()
	if halt {
		if !testutil.Eventually(window, func() bool { return s.sentCount.Load() > 0 }) {
			t.Errorf("nothing sent in the %v window", window)
		}
		s.halt()
	}
	select {
	case <-done:
	case <-time.After(window + time.Minute):
		s.halt()
		<-done
		t.Fatal("sender did not end a minute past its window")
	}
}

// TestSenderFarBehind: a sender given one message a nanosecond (the
// fresh-user report: rate 1e9) cannot keep up. It must neither walk its
// missed events one by one (Next is called about once per message sent,
// not once per message due: 10^9 a second) nor send ever older messages:
// past maxCatchUp behind it jumps to the events due within it, so no send
// is more than maxCatchUp (and one batch) late. What it missed counts as
// due, so the rate error marks the trial; a halt ends it at once.
func TestSenderFarBehind(t *testing.T) {
	for _, tt := range []struct {
		name   string
		window time.Duration
		halt   bool
	}{
		{"runs past maxCatchUp", maxCatchUp + 300*time.Millisecond, false},
		{"halted once sending, of 10s", 10 * time.Second, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := scenario.Traffic{Endpoint: "socks", Interval: 1}
			even := pace.Even{Count: 1, Interval: 1}
			p := &countingPacer{Pacer: even, limit: 50_000_000}
			tx := &fakeTx{}
			s := &sender{spec: spec, group: udp.Merge(nil, []int{-1}, nil), tx: tx, pacer: p, lag: record.NewHDR(int64(10 * time.Second))}
			runSender(t, s, tt.window, tt.halt)
			calls := p.next.Load()
			elapsed := time.Duration(s.ended - s.start)
			t.Logf("sent %d in %d batches of %d due in %v; %d Next calls; send lag max %v", s.sent, tx.calls, s.due, elapsed, calls, time.Duration(s.lag.Max()))
			if calls > 2*s.sent+2*tx.calls+100 {
				t.Errorf("%d calls to Next for %d messages sent in %d batches: the sender walked events it never sent", calls, s.sent, tx.calls)
			}
			if want := even.Due(time.Duration(min(s.ended, s.end) - s.start)); s.due != want {
				t.Errorf("due %d, want %d (every event before the sender ended)", s.due, want)
			}
			if e := rateErrorPct(s.sent, s.due); e > -50 {
				t.Errorf("rate error %+.2f%% (%d of %d), want far below the target", e, s.sent, s.due)
			}
			if lateMax := maxCatchUp + 100*time.Millisecond; time.Duration(s.lag.Max()) > lateMax {
				t.Errorf("a message went out %v late, want ≤ %v (maxCatchUp + a batch)", time.Duration(s.lag.Max()), lateMax)
			}
			if tt.halt && elapsed >= tt.window {
				t.Errorf("halted once sending, the sender ran its whole %v window", tt.window)
			}
		})
	}
}
