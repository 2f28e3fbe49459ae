package report

import (
	"testing"

	"github.com/rtload/rtload/results"
)

// TestClockLineCycles: the cycles clock's header reads as issue 15 asks,
// "core cycles (PERF_COUNT_HW_CPU_CYCLES via rdpmc, kernel+user)", with the
// core clock measured while calibrating.
func TestClockLineCycles(t *testing.T) {
	got := clockLine(results.ClockInfo{Kind: "cycles", Hz: 3.1e9})
	want := "clock: core cycles (PERF_COUNT_HW_CPU_CYCLES via rdpmc, kernel+user), core clock 3.100 GHz while calibrating"
	if got != want {
		t.Errorf("clockLine = %q, want %q", got, want)
	}
}
