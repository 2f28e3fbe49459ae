package engine

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/probe"
)

// TestTracingStoppedNote: the note says tracing stopped, that tracing_on
// was left 0, where the trace is and how to turn tracing back on; nothing
// is said while tracing runs.
func TestTracingStoppedNote(t *testing.T) {
	r := &reader{loop: &probe.Loop{}, traceDir: "/sys/kernel/tracing"}
	r.spec.Name = "rt"
	if got := r.tracingStopped(); got != "" {
		t.Errorf("before any spike: %q, want nothing", got)
	}
	r.loop.BrokeAt.Store(123456789)
	got := r.tracingStopped()
	for _, want := range []string{"reader rt", "stopped ftrace", "123456789 ns", "/sys/kernel/tracing/tracing_on = 0",
		"/sys/kernel/tracing/trace", "echo 1 > /sys/kernel/tracing/tracing_on"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
}

// TestBreakTrace runs a reader with breaktrace and a 1 ns threshold: the
// first wakeup stops ftrace, tracing_on reads 0 afterwards (left so on
// purpose), and both the summary and the run's log say so and how to turn
// it back on. tracing_on is restored after the test.
func TestBreakTrace(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	const on = "/sys/kernel/tracing/tracing_on"
	old, err := os.ReadFile(on)
	if err != nil {
		t.Skipf("needs tracefs at /sys/kernel/tracing: %v", err)
	}
	t.Cleanup(func() { os.WriteFile(on, old, 0) })
	if err := os.WriteFile(on, []byte("1"), 0); err != nil {
		t.Skipf("cannot turn tracing on: %v", err)
	}
	spec, trials := load(t, `
name: breaktrace
duration: 300ms
warmup: 50ms
readers: [{name: rt, cpu: 1, period: 10ms, threshold: 1ns, breaktrace: true}]
`)
	var log bytes.Buffer
	sum, err := Run(context.Background(), spec, trials, Options{OutDir: t.TempDir(), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	rx := sum.Trials[0].Readers[0]
	if now, _ := os.ReadFile(on); strings.TrimSpace(string(now)) != "0" || rx.BrokeTraceAtNs == 0 {
		t.Fatalf("tracing_on %q, broke at %d: breaktrace did not stop tracing", now, rx.BrokeTraceAtNs)
	}
	for what, text := range map[string]string{"summary": rx.TracingStopped, "log": log.String()} {
		if !strings.Contains(text, "tracing_on = 0") || !strings.Contains(text, "echo 1 > /sys/kernel/tracing/tracing_on") {
			t.Errorf("%s does not say tracing was stopped and how to turn it on: %q", what, text)
		}
	}
	if n := strings.Count(log.String(), "breaktrace stopped ftrace"); n != 1 {
		t.Errorf("log says it %d times, want once:\n%s", n, log.String())
	}
}
