package engine

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/scenario"
)

const e2eYAML = `
name: e2e-450
description: "test: seed 000 shape, short"
duration: 2s
warmup: 200ms
endpoints:
  - name: socks
    count: 450
    rcvbuf: 256KiB
traffic:
  - endpoint: socks
    interval: 20ms
    size: 64
readers:
  - name: rt
    endpoints: [socks]
    cpu: 1
    policy: fifo
    priority: 80
    period: 10ms
    method: recvmsg
noise:
  - kind: spin
    threads: 1
`

// checkSent checks trial tr's first traffic group against its schedule:
// due messages due (the pacer's, exact), and sent within the group's rate
// tolerance of them unless the trial is marked traffic not as specified
// (the machine's share named there): how many went out is the machine's.
func checkSent(t *testing.T, tr results.Trial, due uint64) {
	t.Helper()
	tx := tr.Traffic[0]
	if tx.Due != due {
		t.Errorf("due %d, want %d: the schedule", tx.Due, due)
	}
	if tr.Marked(results.MarkTraffic) {
		t.Logf("sent %d of %d due: %s", tx.Sent, tx.Due, tr.MarkText(results.MarkTraffic))
	} else if math.Abs(tx.RateErrorPct) > tx.RateTolerancePct {
		t.Errorf("sent %d of %d due (%+.2f%%, tolerance %.1f%%) and the trial is not marked", tx.Sent, tx.Due, tx.RateErrorPct, tx.RateTolerancePct)
	}
}

func load(t *testing.T, y string, sets ...string) (*scenario.Spec, []scenario.Trial) {
	t.Helper()
	spec, err := scenario.Load("e2e.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Apply(sets); err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(scenario.Host{NumCPU: runtime.NumCPU()}); err != nil {
		t.Fatal(err)
	}
	trials, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	return spec, trials
}

// TestRun450 runs the seed's workload for 2 s and checks the accounting:
// every message sent is received (those in flight at the end of the window
// are read in the tail ticks and counted), nothing is lost or dropped, every
// socket is read, the number of wakeups is duration/period, the reader ran
// SCHED_FIFO 80 on CPU 1 as read back from the kernel, and no GC ran.
func TestRun450(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	spec, trials := load(t, e2eYAML)
	dir := t.TempDir()
	sum, err := Run(context.Background(), spec, trials, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Trials) != 1 {
		t.Fatalf("trials = %d, want 1", len(sum.Trials))
	}
	tr := sum.Trials[0]
	if len(tr.Traffic) != 1 || len(tr.Readers) != 1 {
		t.Fatalf("traffic %d readers %d, want 1 and 1", len(tr.Traffic), len(tr.Readers))
	}
	tx, rx := tr.Traffic[0], tr.Readers[0]
	// 450 sockets × (2.2 s / 20 ms) = 49500 messages due. How many went
	// out is the sender's and the machine's: within the rate tolerance,
	// or the trial says so (with the machine's share, if any).
	checkSent(t, tr, 49500)
	if rx.Messages != tx.Sent {
		t.Errorf("received %d (of which %d in flight at the end) != sent %d", rx.Messages, tx.InFlight, tx.Sent)
	}
	// In flight at the end is what the tail ticks read: what was sent
	// after the window's last drain. At most one interval of sends
	// (rtload's bound); how many depends on when the last tick ran against
	// the sender's last sends, the machine's: once under load (load
	// average 8) that tick woke after the sender's last send and drained
	// it all, leaving 0 for the tail, with every message still received.
	if tx.InFlight < 0 || tx.InFlight > 450 {
		t.Errorf("in flight at end = %d, want 0..450 (one interval of sends at most)", tx.InFlight)
	}
	if rx.Lost != 0 || rx.Reordered != 0 || rx.Drops != 0 {
		t.Errorf("lost %d reordered %d kernel drops %d, want 0", rx.Lost, rx.Reordered, rx.Drops)
	}
	if rx.SocketsRead != 450 {
		t.Errorf("sockets read = %d, want 450", rx.SocketsRead)
	}
	if rx.Wakeups+rx.MissedTicks != 200 || rx.Wakeups == 0 {
		t.Errorf("wakeups %d + missed ticks %d, want the window's 200 deadlines (2 s / 10 ms)", rx.Wakeups, rx.MissedTicks)
	}
	if rx.Applied.Policy != "SCHED_FIFO" || rx.Applied.Priority != 80 || !slices.Equal(rx.Applied.CPUs, []int{1}) {
		t.Errorf("applied = %+v, want SCHED_FIFO 80 on [1]", rx.Applied)
	}
	if !rx.Applied.Mlocked {
		t.Errorf("memory not locked")
	}
	if tr.GCDuring != 0 {
		t.Errorf("GC cycles during the measured window = %d, want 0", tr.GCDuring)
	}
	if rx.PerCall.All.Total != rx.Calls || rx.PerCall.Data.Total != rx.Data || rx.PerCall.EAGAIN.Total != rx.EAGAIN {
		t.Errorf("histogram totals %d/%d/%d != calls %d/%d/%d", rx.PerCall.All.Total, rx.PerCall.Data.Total,
			rx.PerCall.EAGAIN.Total, rx.Calls, rx.Data, rx.EAGAIN)
	}
	if rx.Data+rx.EAGAIN != rx.Calls {
		t.Errorf("data %d + EAGAIN %d != calls %d", rx.Data, rx.EAGAIN, rx.Calls)
	}
	// Every measured tick ends each socket with one EAGAIN.
	if rx.EAGAIN != 450*rx.Wakeups {
		t.Errorf("EAGAIN calls = %d, want 450 × %d wakeups", rx.EAGAIN, rx.Wakeups)
	}
	if rx.WakeupLatency.Count != rx.Wakeups || rx.WakeupLatency.MaxNs <= 0 {
		t.Errorf("wakeup latency %+v for %d wakeups", rx.WakeupLatency, rx.Wakeups)
	}
	if len(rx.WakeupLog) != 1 {
		t.Fatalf("wakeup logs %v", rx.WakeupLog)
	}
	rows, _, err := wakelog.ReaderWakeups(dir, rx)
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(rows)) != rx.Wakeups {
		t.Errorf("wakeup log rows = %d, want %d", len(rows), rx.Wakeups)
	}
	var msgs uint64
	for i, r := range rows {
		msgs += uint64(r.Messages)
		if i > 0 && r.DeadlineNs-rows[i-1].DeadlineNs != int64(10*time.Millisecond)*int64(r.Tick-rows[i-1].Tick) {
			t.Fatalf("row %d: deadlines not on the 10 ms grid: %+v after %+v", i, r, rows[i-1])
		}
	}
	if msgs == 0 || msgs > rx.Messages {
		t.Errorf("messages in wakeup log = %d, want 1..%d", msgs, rx.Messages)
	}
	if len(tr.Noise) != 1 || tr.Noise[0].Count == 0 {
		t.Errorf("noise work %+v, want loops > 0", tr.Noise)
	}
	checkControls(t, tr.Variant, rx)
}

// checkControls checks a reader's drift controls (the scenario's default
// of 64): each measured tick timed 64 of each control unless it skipped
// them, and the per-call summaries are those of real calls.
func checkControls(t *testing.T, variant string, rx results.Reader) {
	t.Helper()
	c := rx.Controls
	if c == nil {
		t.Fatalf("%s: no controls", variant)
	}
	want := uint64(c.PerTick) * (rx.Wakeups - c.SkippedTicks)
	if c.PerTick != 64 || c.UserLoopIters != probe.UserLoopIters || c.SkippedTicks > rx.Wakeups || c.NullSyscall.Count != want || c.UserLoop.Count != want {
		t.Errorf("%s: controls %d per tick (loop of %d), %d null calls and %d loop runs, %d ticks skipped them, of %d wakeups; want 64 × the ticks that ran them",
			variant, c.PerTick, c.UserLoopIters, c.NullSyscall.Count, c.UserLoop.Count, c.SkippedTicks, rx.Wakeups)
	}
	if null, loop, ok := rx.ControlMeans(); !ok || null < float64(c.NullSyscall.MinTicks) || loop < float64(c.UserLoop.MinTicks) || c.NullSyscall.HDR == "" {
		t.Errorf("%s: control means %v, %v (ok %v) against minima %d, %d; hdr %d bytes", variant, null, loop, ok, c.NullSyscall.MinTicks, c.UserLoop.MinTicks, len(c.NullSyscall.HDR))
	}
}

// TestRunStopped cancels a run midway: the summary must still hold the
// trial, marked stopped, and the error wraps ErrStopped.
func TestRunStopped(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	spec, trials := load(t, e2eYAML, "duration=5s", "endpoints[0].count=50")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the trial is a tenth of the way through (0.5 s of its
	// 5.2 s, warm-up included): it has measured, and has far to go.
	start := time.Now()
	progress := func(trial, trials int, frac float64) {
		if frac >= 0.1 {
			cancel()
		}
	}
	sum, err := Run(ctx, spec, trials, Options{OutDir: t.TempDir(), Progress: progress})
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("err = %v, want ErrStopped", err)
	}
	if sum == nil || !sum.Stopped || sum.StoppedAt == nil || len(sum.Trials) != 1 {
		t.Fatalf("summary %+v, want stopped with 1 trial", sum)
	}
	// The trial was cut short: it measured less than its 5 s window.
	// (How soon after the cancel the run returned is the machine's:
	// logged.)
	if d := time.Duration(sum.Trials[0].DurationNs); d <= 0 || d >= 5*time.Second {
		t.Errorf("trial measured %v of its 5s window after a cancel a tenth of the way through", d)
	}
	t.Logf("returned %v after the run started; the trial measured %v", time.Since(start), time.Duration(sum.Trials[0].DurationNs))
	// That the reader woke before the stop is the machine's: another
	// run's SCHED_FIFO 80 reader on CPU 1, or RT throttling, can keep it
	// off its CPU for the half second (once under load). Then the trial
	// must say so.
	if tr := sum.Trials[0]; tr.Readers[0].Wakeups == 0 {
		if !tr.Marked(results.MarkEmpty) {
			t.Errorf("no wakeups recorded before the stop, and the trial is not marked %s", results.MarkEmpty)
		} else {
			t.Logf("no wakeups recorded before the stop: %s", tr.MarkText(results.MarkEmpty))
		}
	}
}

// TestRunEachNoiseKind runs a small socket workload under each noise kind
// in turn: every source reports work done, and the reader loses nothing.
func TestRunEachNoiseKind(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	spec, trials := load(t, `
name: e2e-noise
duration: 300ms
warmup: 100ms
endpoints: [{name: s, count: 50}]
traffic: [{endpoint: s, interval: 20ms}]
readers: [{name: rt, endpoints: [s], cpu: 1, period: 10ms}]
noise: [{kind: spin, threads: 1}]
variants:
  - {name: spin, set: {"noise[0].kind": spin}}
  - {name: memory, set: {"noise[0].kind": memory, "noise[0].size": 4MiB}}
  - {name: syscall, set: {"noise[0].kind": syscall}}
  - {name: messaging, set: {"noise[0].kind": messaging}}
  - {name: file_write, set: {"noise[0].kind": file_write}}
  - {name: udp, set: {"noise[0].kind": udp}}
  - {name: bursty, set: {"noise[0].kind": spin, "noise[0].duty.on": 20ms, "noise[0].duty.off": 30ms}}
`)
	sum, err := Run(context.Background(), spec, trials, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"spin": "loops", "memory": "bytes", "syscall": "syscalls", "messaging": "messages", "file_write": "bytes", "udp": "messages", "bursty": "loops"}
	for _, tr := range sum.Trials {
		if len(tr.Noise) != 1 || tr.Noise[0].Count == 0 || tr.Noise[0].Unit != want[tr.Variant] {
			t.Errorf("%s: noise %+v, want %s > 0", tr.Variant, tr.Noise, want[tr.Variant])
			continue
		}
		rx := tr.Readers[0]
		if rx.Lost != 0 || rx.Messages != tr.Traffic[0].Sent {
			t.Errorf("%s: received %d of %d, lost %d", tr.Variant, rx.Messages, tr.Traffic[0].Sent, rx.Lost)
		}
		// The duty cycle's schedule is the noise package's to assert
		// (TestDutyCycleKinds); what the machine let it do is logged.
		t.Logf("%s: on %.2f of the time, %.2f of a CPU", tr.Variant, tr.Noise[0].Duty, tr.Noise[0].CPUShare)
	}
}
