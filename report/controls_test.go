package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// TestReportControls checks the drift-controls block: absent without
// controls; with them, per column the rounds merged (calls summed, the
// mean of both rounds, ns from the clock), the calls per tick, the loop's
// iterations and the skipped ticks.
func TestReportControls(t *testing.T) {
	s := testutil.SeedSummary()
	var b bytes.Buffer
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "drift controls") {
		t.Fatal("a run without controls prints a controls block")
	}
	stats := func(base uint64) results.TickStats {
		h := record.NewHDR(1 << 40)
		for i := range uint64(100) {
			h.Record(base + i%3) // mean base+0.99
		}
		return results.TickStatsOf(h, true)
	}
	for i := range s.Trials {
		for j := range s.Trials[i].Readers {
			s.Trials[i].Readers[j].Controls = &results.Controls{PerTick: 64, NullSyscall: stats(2095), UserLoop: stats(4190),
				UserLoopIters: 180, SkippedTicks: uint64(i)}
		}
	}
	b.Reset()
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i := strings.Index(out, "drift controls")
	if i < 0 {
		t.Fatalf("no controls block:\n%s", out)
	}
	block := out[i:]
	block = block[:strings.Index(block, "\n\n")]
	// The seed summary's clock is a 2.095 GHz TSC: 2096 ticks ≈ 1000.5 ns;
	// two rounds per column, skipping 0+2 and 1+3 ticks.
	rows := map[string]string{}
	for _, l := range strings.Split(block, "\n")[2:] {
		f := strings.Fields(l)
		rows[strings.Join(f[:len(f)-2], " ")] = strings.Join(f[len(f)-2:], " ")
	}
	for label, want := range map[string]string{"null syscall calls": "200 200", "null syscall mean ns": "1000.5 1000.5",
		"user loop p50 ticks": "4191 4191", "controls per tick": "64 64", "user loop iterations": "180 180",
		"ticks that skipped them": "2 4"} {
		if rows[label] != want {
			t.Errorf("controls block: %s = %q, want %q:\n%s", label, rows[label], want, block)
		}
	}
	checkWidth(t, out, 100)
}
