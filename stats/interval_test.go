package stats

import (
	"errors"
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.7f, want %.7f (±%g)", what, got, want, tol)
	}
}

func TestTQuantile(t *testing.T) {
	// Tables of Student's t, two-sided 95%: df 2 → 4.303, df 4 → 2.776, df 30 → 2.042.
	near(t, "t(0.975, 2)", TQuantile(0.975, 2), 4.302653, 1e-6)
	near(t, "t(0.975, 4)", TQuantile(0.975, 4), 2.776445, 1e-6)
	near(t, "t(0.975, 30)", TQuantile(0.975, 30), 2.042272, 1e-6)
}

func TestRatioCI(t *testing.T) {
	// Ratios e^0, e^0.02, e^0.04: logs have mean 0.02 and sample SD 0.02,
	// so se = 0.02/√3 = 0.0115470 and the half-width t(0.975,2)·se =
	// 4.302653 · 0.0115470 = 0.0496828 in log space:
	// CI = [e^(0.02−0.0496828), e^(0.02+0.0496828)] = [0.9707535, 1.0721680],
	// center e^0.02 = 1.0202013.
	c, err := RatioCI([]float64{1, math.Exp(0.02), math.Exp(0.04)}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "center", c.Center, 1.0202013, 1e-6)
	near(t, "lo", c.Lo, 0.9707535, 1e-6)
	near(t, "hi", c.Hi, 1.0721680, 1e-6)
	if c.N != 3 {
		t.Errorf("N = %d, want 3", c.N)
	}
	// Relative half-width: the upper side, 1.0721680/1.0202013 − 1 = e^0.0496828 − 1 = 0.0509376.
	near(t, "rel half-width", c.RelHalfWidth(), 0.0509376, 1e-6)

	// Identical ratios: zero width, center the ratio.
	c, err = RatioCI([]float64{1.25, 1.25, 1.25, 1.25}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "constant center", c.Center, 1.25, 1e-12)
	near(t, "constant width", c.RelHalfWidth(), 0, 1e-12)
}

func TestRatioCIErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ratios []float64
		tooFew bool
	}{
		{"empty", nil, true},
		{"one pair", []float64{1.1}, true},
		{"zero ratio (a side measured 0)", []float64{1, 0}, false},
		{"negative", []float64{1, -1}, false},
		{"infinite (A was 0)", []float64{1, math.Inf(1)}, false},
		{"NaN", []float64{1, math.NaN()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RatioCI(tc.ratios, 0.95)
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrTooFew) != tc.tooFew {
				t.Errorf("err %v: ErrTooFew %v, want %v", err, errors.Is(err, ErrTooFew), tc.tooFew)
			}
		})
	}
}

func TestMeanCI(t *testing.T) {
	// 1..5: mean 3, SD √2.5 = 1.5811388, se = 0.7071068, t(0.975,4) = 2.7764451,
	// half-width 1.9632432: [1.0367568, 4.9632432].
	c, err := MeanCI([]float64{1, 2, 3, 4, 5}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "center", c.Center, 3, 1e-12)
	near(t, "lo", c.Lo, 1.0367568, 1e-6)
	near(t, "hi", c.Hi, 4.9632432, 1e-6)
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	} {
		if got := Median(tc.x); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) not NaN")
	}
}

func TestAtMost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi float64
		want   Target
	}{
		{"all below", 0.95, 1.05, Met},
		{"hi exactly at the limit counts as met", 1.00, 1.10, Met},
		{"straddles", 1.05, 1.15, Unknown},
		{"lo exactly at the limit: may equal it", 1.10, 1.20, Unknown},
		{"all above", 1.11, 1.20, NotMet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AtMost(CI{Lo: tc.lo, Hi: tc.hi, Center: (tc.lo + tc.hi) / 2}, 1.10); got != tc.want {
				t.Errorf("AtMost([%v, %v], 1.10) = %q, want %q", tc.lo, tc.hi, got, tc.want)
			}
		})
	}
}

func TestEither(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   []Target
		want Target
	}{
		{"ratio met, difference not", []Target{Met, NotMet}, Met},
		{"difference met", []Target{NotMet, Met}, Met},
		{"both not met", []Target{NotMet, NotMet}, NotMet},
		{"one undecided, one not met", []Target{Unknown, NotMet}, Unknown},
		{"both undecided", []Target{Unknown, Unknown}, Unknown},
		{"none", nil, Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Either(tc.vs...); got != tc.want {
				t.Errorf("Either(%v) = %q, want %q", tc.vs, got, tc.want)
			}
		})
	}
}

// TestStopNext: the one stop rule on precision, on decisions, and at
// its last look.
func TestStopNext(t *testing.T) {
	narrow := CI{N: 5, Level: 0.95, Center: 1.0, Lo: 0.99, Hi: 1.01}.Change()
	wide := CI{N: 5, Level: 0.95, Center: 1.0, Lo: 0.95, Hi: 1.0302}.Change()
	slower := CI{N: 5, Level: 0.95, Center: 1.2, Lo: 1.1, Hi: 1.3}.Change()
	for _, tc := range []struct {
		name    string
		rule    Stop
		look    int
		changes []Change
		stop    bool
		reason  string
	}{
		{"precise but below MinLooks: go on", Stop{MinLooks: 4, MaxLooks: 20, Precision: 0.03}, 3, []Change{narrow}, false, ""},
		{"precise at MinLooks: stop", Stop{MinLooks: 4, MaxLooks: 20, Precision: 0.03}, 4, []Change{narrow, narrow}, true, StopPrecise},
		{"one CI just too wide: go on", Stop{MinLooks: 4, MaxLooks: 20, Precision: 0.03}, 4, []Change{narrow, wide}, false, ""},
		{"last look", Stop{MinLooks: 4, MaxLooks: 20, Precision: 0.03}, 20, []Change{wide}, true, StopLastLook},
		{"decided: slower", Stop{MinLooks: 1, MaxLooks: 5, Decide: true, Threshold: 0.03}, 2, []Change{slower}, true, StopDecided},
		{"decided: same and slower", Stop{MinLooks: 1, MaxLooks: 5, Decide: true, Threshold: 0.03}, 2, []Change{narrow, slower}, true, StopDecided},
		{"one undecided: go on", Stop{MinLooks: 1, MaxLooks: 5, Decide: true, Threshold: 0.03}, 2, []Change{wide, slower}, false, ""},
		{"no interval: never precise", Stop{MinLooks: 1, MaxLooks: 5, Precision: 0.03}, 2, []Change{Undefined("x")}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stop, reason := tc.rule.Next(tc.look, tc.changes, nil)
			if stop != tc.stop || reason != tc.reason {
				t.Errorf("Next(%d) = %v, %q; want %v, %q", tc.look, stop, reason, tc.stop, tc.reason)
			}
		})
	}
	// Levels: precision alone needs no correction; decisions over 5 looks
	// and 2 metrics take Pocock's boundary at 2.5%.
	if l := (Stop{MaxLooks: 5, Precision: 0.03}).Level(); l != Level {
		t.Errorf("precision level %v, want %v", l, Level)
	}
	want := 1 - 2*(1-NormCDF(PocockZ(0.025, 5)))
	if l := (Stop{MaxLooks: 5, Decide: true, Metrics: 2}).Level(); !(math.Abs(l-want) < 1e-12) || l < 0.99 {
		t.Errorf("decision level %v, want %v", l, want)
	}
}

// A stopping run on known data: pairs whose log ratios alternate ±d around
// log 1.2 narrow as n grows; with d = 0.02 the ±3% rule is met once
// t(0.975, n−1)·sd/√n ≤ log 1.03 = 0.0295588.
func TestStopOnPrecision(t *testing.T) {
	r := Stop{MinLooks: 3, MaxLooks: 50, Precision: 0.03}
	var ratios []float64
	for n := 1; n <= 50; n++ {
		d := 0.02
		if n%2 == 0 {
			d = -d
		}
		ratios = append(ratios, 1.2*math.Exp(d))
		var changes []Change
		if n >= 2 {
			c, err := RatioCI(ratios, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			changes = []Change{c.Change()}
		}
		if stop, reason := r.Next(n, changes, nil); stop {
			// n = 4: logs ±0.02 twice, sd = 0.0230940, se = 0.0115470,
			// t(0.975,3) = 3.1824463 → half-width 0.0367477 > 0.0295588;
			// n = 5: sd = 0.0219089, se = 0.0097980, t(4) = 2.7764451 →
			// 0.0272035 ≤ 0.0295588: stop after 5 pairs.
			if n != 5 || reason != StopPrecise {
				t.Errorf("stopped after %d pairs (%s), want 5 (%s)", n, reason, StopPrecise)
			}
			return
		}
	}
	t.Fatal("never stopped")
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   Target
	}{
		{0.97, 1.04, Met}, {0.95, 1.05, Met}, {0.90, 1.02, Unknown}, {1.01, 1.08, Unknown},
		{0.80, 0.94, NotMet}, {1.06, 1.20, NotMet}, {0.90, 1.10, Unknown},
	} {
		if got := Within(CI{Lo: tc.lo, Hi: tc.hi, Center: (tc.lo + tc.hi) / 2}, 0.95, 1.05); got != tc.want {
			t.Errorf("Within([%v, %v], 0.95, 1.05) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}
