package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/stats"
)

// fakeSide returns values from a list, one per run, and logs the order.
func fakeSide(name string, log *[]string, vals []float64) side {
	s := side{name: name}
	s.run = func(i int) (measurement, error) {
		*log = append(*log, name)
		return measurement{vals: map[string]float64{"x": vals[i%len(vals)]}, argv: []string{name, "run"}}, nil
	}
	return s
}

func TestComparisonAlternatesAndStopsWhenPrecise(t *testing.T) {
	var log []string
	// B/A per pair: 1.2·e^(±0.02) alternating; stats' TestStopOnPrecision works out
	// that the ±3% rule is first met after 5 pairs.
	a := []float64{100}
	b := []float64{120 * math.Exp(0.02), 120 * math.Exp(-0.02)}
	c := &comparison{title: "t", a: fakeSide("A", &log, a), b: fakeSide("B", &log, b),
		stats: []stat{{key: "x", label: "x", ratioMax: 1.10}},
		rule:  rule{MinPairs: 3, MaxPairs: 50, MaxRelHalfWidth: 0.03, Cap: time.Hour}}
	o, err := c.run()
	if err != nil {
		t.Fatal(err)
	}
	if o.pairs != 5 || o.reason != ReasonPrecise {
		t.Fatalf("stopped after %d pairs (%s), want 5 (%s)", o.pairs, o.reason, ReasonPrecise)
	}
	if got, want := strings.Join(log, ""), "ABBAABBAAB"; got != want {
		t.Errorf("run order %s, want %s", got, want)
	}
	if c.a.argv[0] != "A" || c.b.argv[0] != "B" {
		t.Errorf("argv not kept from the measurements: %v %v", c.a.argv, c.b.argv)
	}
	v, ratio, _, err := o.verdict(c.stats[0])
	if err != nil {
		t.Fatal(err)
	}
	// Geometric mean of the ratios: 1.2·e^(0.02/5) = 1.2048; the CI lies
	// above 1.10 entirely.
	if v != stats.NotMet || math.Abs(ratio.Center-1.2*math.Exp(0.004)) > 1e-9 {
		t.Errorf("verdict %q, center %.6f; want not met around 1.204810", v, ratio.Center)
	}
}

func TestComparisonWaitsForWakeups(t *testing.T) {
	var log []string
	c := &comparison{title: "t", a: fakeSide("A", &log, []float64{10}), b: fakeSide("B", &log, []float64{10}),
		stats: []stat{{key: "x", label: "x", ratioMax: 1.10}},
		rule:  rule{MinPairs: 2, MaxPairs: 4, MaxRelHalfWidth: 0.03, Cap: time.Hour}, minWakeups: 1}
	o, err := c.run()
	if err != nil {
		t.Fatal(err)
	}
	// The fake sides record no wakeups, so the rule never sees enough and
	// runs to MaxPairs although every ratio is exactly 1.
	if o.pairs != 4 || o.reason != ReasonMaxPairs {
		t.Errorf("stopped after %d pairs (%s), want 4 (%s)", o.pairs, o.reason, ReasonMaxPairs)
	}
}

func TestComparisonRejectsMissingValues(t *testing.T) {
	var log []string
	c := &comparison{title: "t", a: fakeSide("A", &log, []float64{0}), b: fakeSide("B", &log, []float64{1}),
		stats: []stat{{key: "x", label: "x"}}, rule: rule{MinPairs: 2, MaxPairs: 4}}
	if _, err := c.run(); err == nil || !strings.Contains(err.Error(), "A: x missing or not > 0") {
		t.Errorf("err %v, want A's zero value refused", err)
	}
}

func TestCyclictestSamples(t *testing.T) {
	out := []byte("Max CPUs = 2\n# /dev/cpu_dma_latency set to 0us\nThread 0 Interval: 10500\n       0:       0:   27524\n       0:       1:   61277\n       0:       2:   51436\n")
	h, err := cyclictestSamples(out)
	if err != nil {
		t.Fatal(err)
	}
	// HDR with 3 significant digits: values within 0.1%.
	if h.TotalCount() != 3 || math.Abs(float64(h.Max())-61277) > 61 || math.Abs(float64(h.ValueAtQuantile(50))-51436) > 52 {
		t.Errorf("count %d, max %d, p50 %d; want 3, ≈61277, ≈51436", h.TotalCount(), h.Max(), h.ValueAtQuantile(50))
	}
	if _, err := cyclictestSamples([]byte("T: 0 ( 1) P:80 I:10000 C: 5 Min: 1\n")); err == nil {
		t.Error("no samples: no error")
	}
}

func TestParseDrain450(t *testing.T) {
	v, err := parseDrain450([]byte(`{"method":"recvfrom","tsc_hz":2.6e9,"calls":10,"mean_ticks":800.5,"p50_ticks":700,"p99_ticks":2500}
{"method":"recvmsg","tsc_hz":2.6e9,"calls":10,"mean_ticks":900,"p50_ticks":750,"p99_ticks":2600}
`))
	if err != nil {
		t.Fatal(err)
	}
	if v["recvfrom p50"] != 700 || v["recvmsg p99"] != 2600 || v["recvfrom mean"] != 800.5 || len(v) != 8 {
		t.Errorf("values %v", v)
	}
	// The seed's gap within the run: 750/700 at p50, 900/800.5 in the mean.
	if math.Abs(v["gap p50"]-750.0/700) > 1e-12 || math.Abs(v["gap mean"]-900/800.5) > 1e-12 {
		t.Errorf("gap p50 %v, gap mean %v; want %v, %v", v["gap p50"], v["gap mean"], 750.0/700, 900/800.5)
	}
}

func TestParseGoBench(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkOverhead/recvfrom-2   	    1000	    250000 ns/op	       178.6 raw-ns/call	       250.0 timed-ns/call	        71.5 overhead-ns/call	       0 B/op	       0 allocs/op
BenchmarkClock/tsc-2           	30000000	        37.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkClock/tsc-2           	30000000	        39.0 ns/op	       0 B/op	       0 allocs/op
PASS
`)
	vals, names := parseGoBench(out)
	if strings.Join(names, ",") != "BenchmarkOverhead/recvfrom,BenchmarkClock/tsc" {
		t.Errorf("names %v", names)
	}
	if got := vals[benchKey{"BenchmarkOverhead/recvfrom", "overhead-ns/call"}]; len(got) != 1 || got[0] != 71.5 {
		t.Errorf("overhead %v", got)
	}
	if got := stats.Median(vals[benchKey{"BenchmarkClock/tsc", "ns/op"}]); got != 38 {
		t.Errorf("clock median %v, want 38", got)
	}
}

// TestWarmupPairNotCounted: a warm-up pair runs first, A then B, and its
// ratio is kept apart: an outlier there moves neither the stop nor the
// verdict (the same 5 counted pairs as TestComparisonAlternatesAndStopsWhenPrecise).
func TestWarmupPairNotCounted(t *testing.T) {
	var log []string
	a := []float64{100}
	b := []float64{120 * math.Exp(0.02), 120 * math.Exp(-0.02)}
	c := &comparison{title: "t", a: fakeSide("A", &log, a), b: fakeSide("B", &log, b),
		stats:  []stat{{key: "x", label: "x", ratioMax: 1.10}},
		rule:   rule{MinPairs: 3, MaxPairs: 50, MaxRelHalfWidth: 0.03, Cap: time.Hour},
		warmup: 1}
	o, err := c.run()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(log, ""), "AB"+"ABBAABBAAB"; got != want {
		t.Errorf("run order %s, want %s", got, want)
	}
	if o.pairs != 5 || len(o.ratios("x")) != 5 {
		t.Errorf("%d pairs counted (%d ratios), want 5", o.pairs, len(o.ratios("x")))
	}
	// warm-up index 1000: b[1000%2] = 120·e^0.02.
	if w := o.warmup["x"]; len(w) != 1 || math.Abs(w[0]-1.2*math.Exp(0.02)) > 1e-9 {
		t.Errorf("warm-up ratios %v, want [%.6f]", w, 1.2*math.Exp(0.02))
	}
}
