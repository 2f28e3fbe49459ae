package fidelity

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/stats"
)

func TestCycle(t *testing.T) {
	two := []string{"recvfrom", "recvmsg"}
	for _, tc := range []struct {
		name                string
		methods             []string
		cFirst, methodFirst bool
		want                string
	}{
		// The first half runs each method's two sides back to back; the
		// second half mirrors it, so every variant's two blocks sit
		// symmetrically about the cycle's middle.
		{"C first, recvfrom first", two, true, true, "c/recvfrom rtload/recvfrom c/recvmsg rtload/recvmsg | rtload/recvmsg c/recvmsg rtload/recvfrom c/recvfrom"},
		{"rtload first", two, false, true, "rtload/recvfrom c/recvfrom rtload/recvmsg c/recvmsg | c/recvmsg rtload/recvmsg c/recvfrom rtload/recvfrom"},
		{"recvmsg first", two, true, false, "c/recvmsg rtload/recvmsg c/recvfrom rtload/recvfrom | rtload/recvfrom c/recvfrom rtload/recvmsg c/recvmsg"},
		// One method: ABBA.
		{"one method", []string{"recvmsg"}, true, true, "c/recvmsg rtload/recvmsg | rtload/recvmsg c/recvmsg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, half := Cycle(tc.methods, tc.cFirst, tc.methodFirst)
			var b strings.Builder
			for i, v := range vs {
				if i > 0 && half[i] != half[i-1] {
					b.WriteString(" |")
				}
				if i > 0 {
					b.WriteString(" ")
				}
				b.WriteString(v.String())
			}
			if got := b.String(); got != tc.want {
				t.Errorf("cycle\n got %s\nwant %s", got, tc.want)
			}
			if tc.methods[0] != two[0] && len(tc.methods) == 2 {
				t.Errorf("Cycle reordered the caller's methods: %v", tc.methods)
			}
		})
	}
}

// TestScheduleBalanced: over many cycles each start (side, method) is
// drawn about equally often, and the same seed gives the same order.
func TestScheduleBalanced(t *testing.T) {
	ms := []string{"recvfrom", "recvmsg"}
	s1, s2 := NewSchedule(7), NewSchedule(7)
	count := map[Variant]int{}
	for range 400 {
		a, _ := s1.Next(ms)
		b, _ := s2.Next(ms)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("same seed, different cycles (-first +second):\n%s", diff)
		}
		count[a[0]]++
	}
	for v, n := range count {
		if n < 70 || n > 130 {
			t.Errorf("cycle starts with %s %d times of 400, want about 100", v, n)
		}
	}
	if len(count) != 4 {
		t.Errorf("starts seen: %v, want all 4 variants", count)
	}
}

// synth is a run of n cycles in which every rtload block's values are
// ratio × C's of the same method, recvmsg costs gap × recvfrom on both
// sides, and each half's level moves (the machine's state, shared by the
// half's blocks).
func synth(n int, ratio, gap float64) *Run {
	h := Header{Kind: "header", Methods: []string{"recvfrom", "recvmsg"}, BlockTicks: 10, SettleTicks: 1, PeriodNs: 10e6}
	r := &Run{Header: h}
	s := NewSchedule(1)
	seq := 0
	for c := range n {
		vs, half := s.Next(h.Methods)
		for pos, v := range vs {
			level := 1000 * (1 + 0.2*math.Sin(float64(2*c+half[pos]))) // state of this half
			x := level * (1 + 0.01*float64((seq*7)%5-2)/2)             // a little noise per block
			if v.Method == "recvmsg" {
				x *= gap
			}
			if v.Side == RTload {
				x *= ratio
			}
			r.Blocks = append(r.Blocks, Block{Kind: "block", Variant: v, Seq: seq, Cycle: c, Half: half[pos], Pos: pos, Warmup: c == 0,
				Ticks: 9, Calls: 6000, P50Ticks: uint64(x), P99Ticks: uint64(3 * x), MeanTicks: 1.3 * x})
			seq++
		}
	}
	r.End = &End{Kind: "end", Blocks: seq}
	return r
}

func TestReadWrite(t *testing.T) {
	r := synth(3, 1, 1.2)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.Encode(r.Header)
	for _, b := range r.Blocks {
		enc.Encode(b)
	}
	enc.Encode(r.End)
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ name, in, msg string }{
		{"no header", `{"kind":"block"}`, "no header"},
		{"unknown kind", `{"kind":"header"}` + "\n" + `{"kind":"blok"}`, `line 2: kind "blok"`},
		{"not JSON", `{"kind":"header"}` + "\nnope", "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Read(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err %v, want %q", err, tc.msg)
			}
		})
	}
}

func TestHalvesLeaveOutWarmupPartialAndDirty(t *testing.T) {
	r := synth(4, 1, 1)    // cycles 0 (warm-up) … 3: 6 counted halves
	r.Blocks[9].Missed = 1 // cycle 1, half 0: a tick missed
	r.Blocks = r.Blocks[:len(r.Blocks)-1]
	hs, dropped, dirty := r.Halves()
	// 6 counted halves: one dirty (left out), the last partial (ignored).
	if len(hs) != 4 || dropped != 1 {
		t.Fatalf("%d halves kept, %d dropped; want 4 and 1", len(hs), dropped)
	}
	if dirty[r.Blocks[9].Side] != 1 || dirty[C]+dirty[RTload] != 1 {
		t.Errorf("dirty %v, want one block of side %s", dirty, r.Blocks[9].Side)
	}
	for _, h := range hs {
		if h.Cycle == 0 || (h.Cycle == 1 && h.Half == 0) || (h.Cycle == 3 && h.Half == 1) {
			t.Errorf("half %d.%d kept", h.Cycle, h.Half)
		}
	}
}

func TestRows(t *testing.T) {
	// rtload 2% above C on every block, recvmsg 1.2× recvfrom on both
	// sides: the machine's level (±20% between halves) cancels in every
	// pair, so each ratio is found within a fraction of a percent.
	rows := Rows(synth(40, 1.02, 1.2))
	want := map[string]struct {
		center float64
		v      stats.Target
	}{
		"recvfrom p50 ticks/call":                 {1.02, stats.Met},
		"recvfrom p99 ticks/call":                 {1.02, stats.Met},
		"recvfrom mean ticks/call":                {1.02, stats.Met},
		"recvmsg p50 ticks/call":                  {1.02, stats.Met},
		"C recvmsg/recvfrom p50":                  {1.2, "–"},
		"rtload recvmsg/recvfrom mean":            {1.2, "–"},
		"recvmsg/recvfrom p50, rtload's over C's": {1, stats.Met},
	}
	seen := 0
	for _, r := range rows {
		w, ok := want[r.Measure]
		if !ok {
			continue
		}
		seen++
		if !r.Defined() {
			t.Errorf("%s: no interval: %v", r.Measure, r.Change.Notes)
			continue
		}
		if c := r.CI(); math.Abs(c.Center/w.center-1) > 0.005 || r.Verdict != w.v {
			t.Errorf("%s: center %.4f, verdict %q; want %.3f, %q", r.Measure, c.Center, r.Verdict, w.center, w.v)
		}
		if hw := r.CI().RelHalfWidth(); hw > 0.01 {
			t.Errorf("%s: CI ±%.2f%%, want within ±1%% (the level cancels in pairs)", r.Measure, 100*hw)
		}
		if r.Pairs != 78 {
			t.Errorf("%s: %d pairs, want 78 (39 counted cycles × 2 halves)", r.Measure, r.Pairs)
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d rows looked for", seen, len(want))
	}
	if len(rows) != 12 {
		t.Errorf("%d rows, want 12 (3 per method, 3 per gap statistic)", len(rows))
	}
}

func TestRowsSlower(t *testing.T) {
	for _, r := range Rows(synth(40, 1.12, 1.2)) {
		want := map[string]stats.Target{"recvfrom p50 ticks/call": stats.NotMet, "recvfrom p99 ticks/call": stats.NotMet,
			"recvfrom mean ticks/call": stats.NotMet}[r.Measure]
		if want != "" && r.Verdict != want {
			t.Errorf("%s at 1.12×: %q, want %q", r.Measure, r.Verdict, want)
		}
	}
}

func TestTargetDecide(t *testing.T) {
	ci := func(lo, hi float64) stats.CI { return stats.CI{Lo: lo, Hi: hi, Center: (lo + hi) / 2} }
	for _, tc := range []struct {
		name string
		t    Target
		ci   stats.CI
		want stats.Target
	}{
		{"p50 below 1.05", TargetP50, ci(0.93, 1.04), stats.Met},
		{"p50 straddles", TargetP50, ci(1.01, 1.07), stats.Unknown},
		{"p50 above", TargetP50, ci(1.06, 1.09), stats.NotMet},
		{"mean within ±3%", TargetMean, ci(0.98, 1.02), stats.Met},
		{"mean below the band (rtload reads lower: met)", TargetMean, ci(0.90, 0.96), stats.Met},
		{"mean straddles 1.03", TargetMean, ci(1.01, 1.04), stats.Unknown},
		{"mean above 1.03", TargetMean, ci(1.031, 1.05), stats.NotMet},
		{"gap within 0.95–1.05", TargetGap, ci(0.97, 1.04), stats.Met},
		{"gap below 0.95", TargetGap, ci(0.90, 0.94), stats.NotMet},
		{"gap straddles 0.95", TargetGap, ci(0.93, 0.99), stats.Unknown},
		{"no target", Target{}, ci(0.5, 2), "–"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.t.Decide(tc.ci); got != tc.want {
				t.Errorf("%s of [%.2f, %.2f]: %q, want %q", tc.t, tc.ci.Lo, tc.ci.Hi, got, tc.want)
			}
		})
	}
}

func TestQualifier(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		v      stats.Target
		want   string
	}{
		{0.98, 1.02, stats.Met, "same ±3%"},
		{0.90, 0.96, stats.Met, "B lower by > 3%"},
		{0.95, 1.01, stats.Met, ""},
		{0.98, 1.02, stats.Unknown, ""},
	} {
		r := Row{Verdict: tc.v, Change: stats.Change{Point: (tc.lo+tc.hi)/2 - 1, Lo: tc.lo - 1, Hi: tc.hi - 1}}
		if got := r.Qualifier(); got != tc.want {
			t.Errorf("[%.2f, %.2f] %s: %q, want %q", tc.lo, tc.hi, tc.v, got, tc.want)
		}
	}
}

func TestWriteText(t *testing.T) {
	r := synth(10, 1, 1.2)
	var b strings.Builder
	WriteText(&b, r, Rows(r))
	for _, want := range []string{"18 halves counted, 0 left out", "recvfrom p50 ticks/call", "B/A ≤ 1.05 met (same ±3%)", "rtload's over C's"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
