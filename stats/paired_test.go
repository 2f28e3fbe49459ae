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

// coverage is the fraction of sims Paired intervals (n pairs of AR(1)
// log ratios with coefficient phi around a true change of +5%) holding
// the true ratio, and the fraction that batched.
func coverage(seed uint64, sims, n int, phi float64) (covered, batched float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	truth := math.Log(1.05)
	a, b := make([]float64, n), make([]float64, n)
	for range sims {
		e := rng.NormFloat64()
		for i := range n {
			e = phi*e + math.Sqrt(1-phi*phi)*rng.NormFloat64()
			a[i] = 1000 * math.Exp(0.1*rng.NormFloat64()) // the blocks' shared level cancels
			b[i] = a[i] * math.Exp(truth+0.04*e)
		}
		c := Paired(a, b)
		if math.Log1p(c.Lo) <= truth && truth <= math.Log1p(c.Hi) {
			covered++
		}
		if strings.Contains(c.Method, "batch") {
			batched++
		}
	}
	return covered / float64(sims), batched / float64(sims)
}

// TestPairedCoverage checks the intervals' coverage on simulated pairs
// (fixed seeds: the numbers are exact for this code). Independent pairs:
// about 95%, batching rarely. Pairs with lag-1 correlation 0.5, which
// make a plain t interval cover about 75%: batch means bring it back to
// at least 90%.
func TestPairedCoverage(t *testing.T) {
	if cov, batched := coverage(1, 2000, 300, 0); cov < 0.93 || cov > 0.97 || batched > 0.1 {
		t.Errorf("independent pairs: coverage %.3f (batched %.3f), want 0.93–0.97 and ≤ 0.10 batched", cov, batched)
	}
	if cov, batched := coverage(2, 2000, 300, 0.5); cov < 0.90 || batched < 0.95 {
		t.Errorf("lag-1 0.5: coverage %.3f (batched %.3f), want ≥ 0.90, nearly always batched", cov, batched)
	}
}
