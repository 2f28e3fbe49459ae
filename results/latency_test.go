package results_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

func TestBucketPercentile(t *testing.T) {
	lay := func() *record.Linear {
		return record.NewLinear(testutil.SeedWidth, testutil.SeedOrigin, testutil.SeedOverflow)
	}
	h := lay()
	for range 10 {
		h.Record(10) // bucket 0: [0,64)
	}
	for range 80 {
		h.Record(2000) // bucket 1984
	}
	for range 10 {
		h.Record(100000) // overflow
	}
	s := h.Snapshot("ticks")
	over := lay()
	over.Record(9000)
	for _, tc := range []struct {
		name string
		s    record.Snapshot
		q    float64
		want uint64
	}{
		{"empty is 0", lay().Snapshot(""), 0.5, 0},
		{"zero snapshot is 0", record.Snapshot{}, 0.99, 0},
		{"q 0 is the first populated bucket", s, 0, 0},
		{"negative clamps to 0", s, -1, 0},
		{"NaN counts as 0", s, math.NaN(), 0},
		{"rank 10 is the last sample of bucket 0", s, 0.10, 0},
		{"rank 10.5 rounds to 11: the next bucket", s, 0.105, 1984},
		{"median", s, 0.5, 1984},
		{"last sample below overflow", s, 0.90, 1984},
		{"first overflow sample gives Overflow", s, 0.91, testutil.SeedOverflow},
		{"q 1 is the last sample", s, 1, testutil.SeedOverflow},
		{"q above 1 clamps", s, 7, testutil.SeedOverflow},
		{"only overflow", over.Snapshot(""), 0.5, testutil.SeedOverflow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := results.BucketPercentile(tc.s, tc.q); got != tc.want {
				t.Errorf("BucketPercentile(q=%v) = %d, want %d", tc.q, got, tc.want)
			}
		})
	}
}

func TestLatencyOf(t *testing.T) {
	if got := results.LatencyOf(nil, true); got != (results.Latency{}) {
		t.Errorf("nil: %+v", got)
	}
	if got := results.LatencyOf(record.NewHDR(1000), true); got != (results.Latency{}) {
		t.Errorf("empty: %+v", got)
	}
	h := record.NewHDR(results.WakeupLatencyRange)
	for v := uint64(1); v <= 1000; v++ {
		h.Record(v) // exact below 2048 at 3 digits
	}
	got := results.LatencyOf(h, true)
	want := results.Latency{Count: 1000, MinNs: 1, MeanNs: 500.5, P50Ns: 500, P90Ns: 900, P99Ns: 990, P999Ns: 999, MaxNs: 1000}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(results.Latency{}, "HDR")); diff != "" {
		t.Errorf("LatencyOf (-want +got):\n%s", diff)
	}
	if got.HDR == "" {
		t.Error("HDR encoding empty")
	}
	if got := results.LatencyOf(h, false); got.HDR != "" {
		t.Error("hdr false still encodes")
	}
}

// TestMaxExact: the seed of this rule, a wakeup of 1389.6 µs, printed as
// 1390.6 µs once HdrHistogram rounded it to its bucket's top.
func TestMaxExact(t *testing.T) {
	h := record.NewHDR(results.WakeupLatencyRange)
	for _, v := range []int64{2000, 3000, 1_389_600} {
		h.RecordSigned(v)
	}
	l := results.LatencyOf(h, true)
	if l.MaxNs != 1_389_600 || l.P999Ns != 1_389_600 || l.MinNs != 2000 {
		t.Errorf("max %d p99.9 %d min %d, want max and p99.9 1389600 (exact), min 2000", l.MaxNs, l.P999Ns, l.MinNs)
	}
	// HdrHistogram itself reports the bucket's top: what the rule avoids.
	if hh := h.Histogram(); hh.Max() == 1_389_600 {
		t.Errorf("hdrhistogram-go Max %d: the test no longer shows the rounding", hh.Max())
	}
	m, exact := results.MergeLatency(l, results.LatencyOf(h, true))
	if !exact || m.MaxNs != 1_389_600 || m.Count != 6 {
		t.Errorf("merged: exact %v, max %d, count %d", exact, m.MaxNs, m.Count)
	}
}

// TestDefinitionIsHdrHistogram: every percentile equals hdrhistogram-go's
// ValueAtPercentile on the same samples, clamped to the exact max, and
// rounds merged give what one recorder of every sample gives.
func TestDefinitionIsHdrHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 1 + rng.IntN(5000)
		a, b, both := record.NewHDR(results.WakeupLatencyRange), record.NewHDR(results.WakeupLatencyRange), record.NewHDR(results.WakeupLatencyRange)
		ref := hdrhistogram.New(1, results.WakeupLatencyRange, 3)
		var maxV int64
		for i := range n {
			v := int64(rng.ExpFloat64() * float64(1+trial) * 20_000)
			if i%2 == 0 {
				a.RecordSigned(v)
			} else {
				b.RecordSigned(v)
			}
			both.RecordSigned(v)
			ref.RecordValue(v)
			maxV = max(maxV, v)
		}
		l := results.LatencyOf(both, false)
		for _, q := range []struct {
			got int64
			p   float64
		}{{l.P50Ns, 50}, {l.P90Ns, 90}, {l.P99Ns, 99}, {l.P999Ns, 99.9}} {
			if want := min(ref.ValueAtPercentile(q.p), maxV); q.got != want {
				t.Errorf("trial %d n %d: p%v = %d, HdrHistogram %d (max %d)", trial, n, q.p, q.got, want, maxV)
			}
		}
		m, exact := results.MergeLatency(results.LatencyOf(a, true), results.LatencyOf(b, true))
		want := results.LatencyOf(both, false)
		if !exact {
			t.Fatal("merge of encoded rounds not exact")
		}
		if diff := cmp.Diff(want, m, cmpopts.IgnoreFields(results.Latency{}, "HDR"), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("trial %d: merged rounds vs one recorder (-want +got):\n%s", trial, diff)
		}
	}
}

func TestMergeWithoutHDR(t *testing.T) {
	a, b := testutil.Latency(100, 1000, 10), testutil.Latency(100, 5000, 10)
	a.HDR, b.HDR = "", ""
	got, exact := results.MergeLatency(a, results.Latency{}, b)
	if exact {
		t.Error("merge without HDR claims exact")
	}
	want := results.Latency{
		Count: 200, MinNs: a.MinNs, MeanNs: (a.MeanNs + b.MeanNs) / 2,
		P50Ns: b.P50Ns, P90Ns: b.P90Ns, P99Ns: b.P99Ns, P999Ns: b.P999Ns, MaxNs: b.MaxNs,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("worst-round merge (-want +got):\n%s", diff)
	}
	if got, exact := results.MergeLatency(); !exact || got != (results.Latency{}) {
		t.Errorf("no input: %+v %v", got, exact)
	}
}

// TestTickStats: ticks are their own type with *_ticks names, and version
// 1's *_ns names (which held ticks) still read.
func TestTickStats(t *testing.T) {
	ts := testutil.TickStats(1000, 1, 1)
	b, err := json.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	var back results.TickStats
	if err := json.Unmarshal(b, &back); err != nil || back != ts {
		t.Errorf("round trip: %v\n%+v\n%+v", err, back, ts)
	}
	for _, want := range []string{`"p99_ticks":990`, `"max_ticks":1000`, `"mean_ticks":500.5`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	var v1 results.TickStats
	if err := json.Unmarshal([]byte(`{"count":3,"min_ns":1,"mean_ns":2.5,"p50_ns":2,"p90_ns":3,"p99_ns":4,"p99_9_ns":5,"max_ns":6}`), &v1); err != nil {
		t.Fatal(err)
	}
	if want := (results.TickStats{Count: 3, MinTicks: 1, MeanTicks: 2.5, P50Ticks: 2, P90Ticks: 3, P99Ticks: 4, P999Ticks: 5, MaxTicks: 6}); v1 != want {
		t.Errorf("v1 names: %+v, want %+v", v1, want)
	}
	if q := ts.Ticks(results.P99); q != 990 {
		t.Errorf("Ticks(P99) = %v", q)
	}
}

func TestQuantityNames(t *testing.T) {
	var got []string
	for _, q := range results.AllQuantities {
		got = append(got, q.String())
	}
	if diff := cmp.Diff([]string{"min", "mean", "p50", "p90", "p99", "p99.9", "max"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestLatencyOfAllocs: summarising a histogram without its encoding
// allocates nothing, as a soak's writer does for every interval (issue 12).
func TestLatencyOfAllocs(t *testing.T) {
	h := record.NewHDR(int64(10e9))
	for i := range 10000 {
		h.Record(uint64(1000 + i*37))
	}
	var l results.Latency
	var s results.TickStats
	if n := testing.AllocsPerRun(50, func() { l = results.LatencyOf(h, false); s = results.TickStatsOf(h, false) }); n != 0 {
		t.Errorf("LatencyOf + TickStatsOf without HDR: %v allocations, want 0", n)
	}
	if l.Count != 10000 || l.MaxNs != int64(h.Max()) || s.MaxTicks != h.Max() {
		t.Errorf("summary %+v / %+v of 10000 samples up to %d", l, s, h.Max())
	}
}

// TestCountOver: wakeups later than a threshold, from the HDR; exact
// without one when none lies past it; not ok when it would be needed.
func TestCountOver(t *testing.T) {
	h := record.NewHDR(int64(time.Second))
	for _, v := range []uint64{50_000, 185_000, 999_000, 1_000_000, 1_002_000, 6_304_000, 40_000_000} {
		h.Record(v)
	}
	l := results.LatencyOf(h, true)
	for _, tc := range []struct {
		ns   int64
		want uint64
	}{{0, 7}, {100_000, 6}, {1_000_000, 3}, {6_000_000, 2}, {40_000_000, 0}, {50_000_000, 0}} {
		if n, ok := l.CountOver(tc.ns); !ok || n != tc.want {
			t.Errorf("over %d ns: %d (ok %v), want %d", tc.ns, n, ok, tc.want)
		}
	}
	bare := l
	bare.HDR = ""
	if n, ok := bare.CountOver(50_000_000); !ok || n != 0 {
		t.Errorf("past the max without an HDR: %d %v, want 0 true", n, ok)
	}
	if _, ok := bare.CountOver(1_000_000); ok {
		t.Error("below the max without an HDR: ok, want not")
	}
	if n, ok := (results.Latency{}).CountOver(0); !ok || n != 0 {
		t.Errorf("no samples: %d %v", n, ok)
	}
}
