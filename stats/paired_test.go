package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestPairedExact(t *testing.T) {
	// Log ratios 0.1, 0.2, 0.3 (no correlation to batch): mean 0.2, s =
	// 0.1, SE 0.1/√3, t(0.975, 2) = 4.302653.
	a := []float64{100, 200, 50}
	b := []float64{100 * math.Exp(0.1), 200 * math.Exp(0.2), 50 * math.Exp(0.3)}
	c := Paired(a, b)
	hw := 4.302653 * 0.1 / math.Sqrt(3)
	for _, x := range []struct {
		name      string
		got, want float64
	}{
		{"point", c.Point, math.Expm1(0.2)}, {"lo", c.Lo, math.Expm1(0.2 - hw)}, {"hi", c.Hi, math.Expm1(0.2 + hw)},
		{"df", c.DF, 2}, {"se", c.SELog, 0.1 / math.Sqrt(3)},
	} {
		if math.Abs(x.got-x.want) > 1e-6 {
			t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
		}
	}
	if c.N != "3 ABBA block pairs" || c.Unit != "block pair" || !c.Paired || len(c.Notes) != 0 {
		t.Errorf("N %q unit %q paired %v notes %v", c.N, c.Unit, c.Paired, c.Notes)
	}
}

func TestPairedUndefined(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		why  string
	}{
		{"lengths", []float64{1, 2}, []float64{1}, "2 A blocks and 1 B blocks"},
		{"one pair", []float64{1}, []float64{1}, "1 block pair: a t interval needs 2"},
		{"zero", []float64{1, 0}, []float64{1, 1}, "pair 1: values 0 and 1 must be finite and > 0"},
	} {
		c := Paired(tc.a, tc.b)
		if c.Defined() || len(c.Notes) == 0 || !strings.Contains(c.Notes[0], tc.why) {
			t.Errorf("%s: %+v, want undefined: %q", tc.name, c, tc.why)
		}
	}
}

// coverage is the fraction of sims intervals (n pairs around a true
// change of +5%) holding the true ratio, for Paired and for a plain t
// interval over the pairs, and the fraction of Paired intervals that
// merged batches further. Each pair's log ratio has white noise of SD
// 0.04 plus, when slow > 0, a drift of SD slow (AR(1), coefficient phi:
// the machine's state, seconds long); with slow 0, the noise itself is
// AR(1) with coefficient phi.
func coverage(seed uint64, sims, n int, phi, slow float64) (paired, plain, merged float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	truth := math.Log(1.05)
	a, b := make([]float64, n), make([]float64, n)
	for range sims {
		e, drift := rng.NormFloat64(), rng.NormFloat64()
		for i := range n {
			var x float64
			if slow > 0 {
				drift = phi*drift + math.Sqrt(1-phi*phi)*rng.NormFloat64()
				x = 0.04*rng.NormFloat64() + slow*drift
			} else {
				e = phi*e + math.Sqrt(1-phi*phi)*rng.NormFloat64()
				x = 0.04 * e
			}
			a[i] = 1000 * math.Exp(0.1*rng.NormFloat64()) // the blocks' shared level cancels
			b[i] = a[i] * math.Exp(truth+x)
		}
		if c := Paired(a, b); math.Log1p(c.Lo) <= truth && truth <= math.Log1p(c.Hi) {
			paired++
			if len(c.Notes) > 0 {
				merged++
			}
		} else if len(c.Notes) > 0 {
			merged++
		}
		ratios := make([]float64, n)
		for i := range a {
			ratios[i] = b[i] / a[i]
		}
		if ci, err := RatioCI(ratios, 0.95); err == nil && ci.Lo <= 1.05 && 1.05 <= ci.Hi {
			plain++
		}
	}
	f := float64(sims)
	return paired / f, plain / f, merged / f
}

// TestPairedCoverage checks the intervals' coverage on simulated pairs
// (fixed seeds: the numbers are exact for this code): independent pairs,
// pairs with lag-1 correlation 0.5, and pairs whose ratio drifts slowly,
// where a plain t interval over the pairs covers far less than 95%. A
// drift slower than a batch (20 pairs here) is beyond any interval from
// one run: its coverage stays a little under 95%.
func TestPairedCoverage(t *testing.T) {
	for _, tc := range []struct {
		name            string
		n               int
		phi, slow       float64
		min, max        float64 // Paired's coverage
		plainBelow      float64 // the plain interval's coverage is below this
		mergedMin, mMax float64
	}{
		{"independent", 300, 0, 0, 0.93, 0.97, 1, 0, 0.1},
		{"lag-1 0.5", 300, 0.5, 0, 0.91, 0.97, 0.80, 0, 0.2},
		// The drift's SD and coefficient give lag-1 ≈ 0.1 and a standard
		// error of long batches 1.7 × the naive one: the development VM's.
		{"slow drift", 600, 0.9, 0.0137, 0.88, 0.97, 0.80, 0, 0.2},
	} {
		p, plain, merged := coverage(7, 1000, tc.n, tc.phi, tc.slow)
		t.Logf("%s: Paired covers %.3f (merged further %.3f), plain t %.3f", tc.name, p, merged, plain)
		if p < tc.min || p > tc.max || plain >= tc.plainBelow || merged < tc.mergedMin || merged > tc.mMax {
			t.Errorf("%s: Paired %.3f (want %.2f–%.2f), merged %.3f (want %.2f–%.2f), plain %.3f (want < %.2f)",
				tc.name, p, tc.min, tc.max, merged, tc.mergedMin, tc.mMax, plain, tc.plainBelow)
		}
	}
}

func TestHeterogeneity(t *testing.T) {
	// Two rounds at +5% and +10%, each ±0.5% (SELog 0.0026): far apart.
	a, b := Change{Point: 0.05, Lo: 0.045, Hi: 0.055, SELog: 0.0026}, Change{Point: 0.10, Lo: 0.095, Hi: 0.105, SELog: 0.0026}
	if q, df, p := Heterogeneity([]Change{a, b}); df != 1 || q < 100 || p > 1e-6 {
		t.Errorf("+5%% and +10%%: Q %v df %d p %v, want a huge Q", q, df, p)
	}
	// The same two at ±5% (SELog 0.026): consistent.
	a.SELog, b.SELog = 0.026, 0.026
	if _, _, p := Heterogeneity([]Change{a, b}); p < 0.1 {
		t.Errorf("+5%% and +10%% at ±5%%: p %v, want consistent", p)
	}
	if _, _, p := Heterogeneity([]Change{a}); !math.IsNaN(p) {
		t.Errorf("one change: p %v, want NaN", p)
	}
}
