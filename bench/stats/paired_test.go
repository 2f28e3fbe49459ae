package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLag1(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    []float64
		want float64
	}{
		// Deviations −2 −1 0 1 2: Σ products of neighbours 2+0+0+2 = 4, Σ squares 10.
		{"trend", []float64{1, 2, 3, 4, 5}, 0.4},
		// Deviations ±1 alternating: Σ products −3, Σ squares 4.
		{"alternating", []float64{1, -1, 1, -1}, -0.75},
		{"constant", []float64{2, 2, 2}, 0},
		{"too few", []float64{1, 2}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) { near(t, "lag-1", Lag1(tc.x), tc.want, 1e-12) })
	}
}

func TestBatchMeans(t *testing.T) {
	got := batchMeans([]float64{1, 3, 5, 7, 9}, 2)
	if len(got) != 2 || got[0] != 2 || got[1] != 6 {
		t.Errorf("batchMeans = %v, want [2 6] (the fifth value left out)", got)
	}
}

// TestPairedIndependent: pairs whose log ratios alternate around 0.1 (the
// negative lag-1 of an ABBA position effect) are not batched, and the
// interval is RatioCI's of the ratios b/a.
func TestPairedIndependent(t *testing.T) {
	var a, b, r []float64
	for i := range 40 {
		d := 0.1 + 0.02*float64(1-2*(i%2)) + 0.001*float64(i%5)
		a = append(a, 1000+float64(i))
		b = append(b, (1000+float64(i))*math.Exp(d))
		r = append(r, math.Exp(d))
	}
	p, err := Paired(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := RatioCI(r, 0.95)
	if p.Batch != 1 || len(p.Notes) != 0 || p.Lag1 >= 0 {
		t.Errorf("batch %d, lag-1 %.3f, notes %q: want no batching for a negative lag-1", p.Batch, p.Lag1, p.Notes)
	}
	near(t, "center", p.Center, want.Center, 1e-12)
	near(t, "lo", p.Lo, want.Lo, 1e-12)
	near(t, "hi", p.Hi, want.Hi, 1e-12)
	if p.N != 40 || p.Pairs != 40 || p.Used != 40 {
		t.Errorf("N %d, pairs %d, used %d, want 40 each", p.N, p.Pairs, p.Used)
	}
}

// ar1 returns n log ratios of mean mu with AR(1) noise (coefficient rho,
// innovation SD sd) from rng.
func ar1(rng *rand.Rand, n int, mu, rho, sd float64) []float64 {
	x := make([]float64, n)
	e := rng.NormFloat64() * sd / math.Sqrt(1-rho*rho)
	for i := range x {
		e = rho*e + rng.NormFloat64()*sd
		x[i] = mu + e
	}
	return x
}

func pairsOf(logs []float64) (a, b []float64) {
	for _, d := range logs {
		a = append(a, 1500)
		b = append(b, 1500*math.Exp(d))
	}
	return a, b
}

// TestPairedBatchesAutocorrelated: pairs that share the machine's slow
// state (AR(1), rho 0.6) are batched, and the batched interval covers the
// true ratio about as often as its level says, where the plain t on the
// pairs (RatioCI) does not. 300 simulated runs of 300 pairs, seeded.
func TestPairedBatchesAutocorrelated(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const runs, n, mu = 300, 300, 0.05
	var covered, naiveCovered, batched int
	for range runs {
		logs := ar1(rng, n, mu, 0.6, 0.1)
		a, b := pairsOf(logs)
		p, err := Paired(a, b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if p.Batch > 1 {
			batched++
			if len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "batch means of") {
				t.Fatalf("batched (%d) without a note: %q", p.Batch, p.Notes)
			}
			if p.N != n/p.Batch || p.Used != p.N*p.Batch {
				t.Fatalf("batch %d: N %d, used %d", p.Batch, p.N, p.Used)
			}
		}
		if p.Lo <= math.Exp(mu) && math.Exp(mu) <= p.Hi {
			covered++
		}
		r := make([]float64, n)
		for i := range r {
			r[i] = b[i] / a[i]
		}
		if c, _ := RatioCI(r, 0.95); c.Lo <= math.Exp(mu) && math.Exp(mu) <= c.Hi {
			naiveCovered++
		}
	}
	if batched < runs*9/10 {
		t.Errorf("batched in %d of %d runs with lag-1 0.6, want ≥ 90%%", batched, runs)
	}
	if cov := float64(covered) / runs; cov < 0.90 {
		t.Errorf("batched coverage %.3f, want ≥ 0.90 (plain t: %.3f)", cov, float64(naiveCovered)/runs)
	}
	if naiveCovered >= covered {
		t.Errorf("plain t covered %d, batched %d: batching should widen the interval", naiveCovered, covered)
	}
}

// TestPairedIndependentCoverage: independent pairs are rarely batched and
// the interval covers the true ratio about 95% of the time (an A/A-like
// false-alarm rate of about 5%).
func TestPairedIndependentCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const runs, n = 400, 300
	var covered, batched int
	for range runs {
		a, b := pairsOf(ar1(rng, n, 0, 0, 0.1))
		p, err := Paired(a, b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if p.Batch > 1 {
			batched++
		}
		if p.Lo <= 1 && 1 <= p.Hi {
			covered++
		}
	}
	// One-sided 5% test: about 5% of independent runs are batched (which
	// only widens their interval).
	if batched > runs/10 {
		t.Errorf("batched %d of %d independent runs, want ≤ 10%%", batched, runs)
	}
	if cov := float64(covered) / runs; cov < 0.92 || cov > 0.98 {
		t.Errorf("coverage %.3f of independent pairs, want 0.92–0.98", cov)
	}
}

func TestPairedErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   []float64
		tooFew bool
		msg    string
	}{
		{"lengths differ", []float64{1, 2}, []float64{1}, false, "2 values of A, 1 of B"},
		{"one pair", []float64{1}, []float64{2}, true, "fewer than 2"},
		{"zero (a side measured nothing)", []float64{1, 0}, []float64{1, 1}, false, "pair 1"},
		{"NaN", []float64{1, 1}, []float64{math.NaN(), 1}, false, "pair 0"},
		{"infinite", []float64{1, math.Inf(1)}, []float64{1, 1}, false, "pair 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Paired(tc.a, tc.b, 0.95)
			if err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, ErrTooFew) != tc.tooFew {
				t.Errorf("err %v, want %q (ErrTooFew %v)", err, tc.msg, tc.tooFew)
			}
		})
	}
}

func TestGeoMean(t *testing.T) {
	near(t, "geomean", GeoMean([]float64{1, 4, 16}), 4, 1e-12)
	if !math.IsNaN(GeoMean(nil)) || !math.IsNaN(GeoMean([]float64{1, 0})) {
		t.Error("GeoMean of none or of a zero is not NaN")
	}
}
