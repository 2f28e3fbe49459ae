package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// logsOf turns log values into the positive values the package takes.
func expAll(groups [][]float64) [][]float64 {
	out := make([][]float64, len(groups))
	for i, g := range groups {
		out[i] = make([]float64, len(g))
		for j, x := range g {
			out[i][j] = math.Exp(x)
		}
	}
	return out
}

func TestTQuantileTable(t *testing.T) {
	for _, tc := range []struct {
		p, df, want float64
	}{
		{0.975, 1, 12.706204736}, // Cauchy: tan(0.475π)
		{0.975, 2, 4.302652730},
		{0.975, 8, 2.306004135},
		{0.975, 30, 2.042272456},
		{0.95, 5, 2.015048373},
		{0.025, 8, -2.306004135},
		{0.975, math.Inf(1), 1.959963985},
	} {
		near(t, "TQuantile", TQuantile(tc.p, tc.df), tc.want, 1e-6)
	}
	if !math.IsNaN(TQuantile(1, 3)) || !math.IsNaN(TQuantile(0.5, 0)) {
		t.Error("TQuantile outside its domain is not NaN")
	}
	if got := TQuantile(0.975, 1.5); !(got > 4.30 && got < 12.71) || math.Abs(TCDF(got, 1.5)-0.975) > 1e-9 {
		t.Errorf("fractional df: %v", got)
	}
}

// TestDecide is issue 24's rule, row by row, at ±3%.
func TestDecide(t *testing.T) {
	ch := func(lo, hi float64) Change { return Change{Point: (lo + hi) / 2, Lo: lo, Hi: hi} }
	for _, tc := range []struct {
		name   string
		c      Change
		higher bool
		want   Verdict
	}{
		{"whole CI beyond +3%", ch(0.031, 0.2), false, Slower},
		{"CI touching +3% from above is not beyond it", ch(0.03, 0.2), false, Undecided},
		{"straddles +3%", ch(0.01, 0.05), false, Undecided},
		{"wholly below +3%, reaching below −3%", ch(-0.10, 0.029), false, NotSlower},
		{"within ±3%", ch(-0.02, 0.025), false, Same},
		{"±3% exactly counts as within", ch(-0.03, 0.03), false, Same},
		{"faster beyond −3% is not slower", ch(-0.30, -0.10), false, NotSlower},
		{"very wide", ch(-0.5, 0.5), false, Undecided},
		// Throughput (higher is better): 10% less is slower.
		{"throughput down 10–20%", ch(-0.20, -0.10), true, Slower},
		{"throughput up", ch(0.05, 0.10), true, NotSlower},
		// B/A ∈ [1/1.03, 1.03]: within ±3% on the mirrored scale.
		{"throughput within ±3%", ch(1/1.03-1+1e-9, 0.03), true, Same},
		{"throughput down 2.5–3.5%", ch(-0.035, -0.025), true, Undecided},
		{"no interval", Undefined("none"), false, Undecided},
		{"a rate ratio with no upper bound", Change{Point: math.Inf(1), Lo: 0.5, Hi: math.Inf(1)}, false, Slower},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.c, 0.03, tc.higher); got != tc.want {
				t.Errorf("Decide([%v, %v], 3%%, higher %v) = %v, want %v", tc.c.Lo, tc.c.Hi, tc.higher, got, tc.want)
			}
		})
	}
	for v, s := range map[Verdict]string{Slower: "slower", NotSlower: "not slower", Same: "same", Undecided: "undecided"} {
		if v.String() != s {
			t.Errorf("%d.String() = %q, want %q", v, v.String(), s)
		}
	}
}

// TestNestedHand: per-process means of logs 0.00, 0.10, 0.20 (A) and
// 0.15, 0.25, 0.35 (B), two rounds each (±0.01 around the means): d =
// 0.15, each side's variance of means 0.01, se = √(0.01/3·2) = 0.0816497,
// df = 4 (Welch–Satterthwaite with equal variances), t(0.975, 4) =
// 2.776445: CI exp(0.15 ∓ 0.226697) − 1 = [−7.3828%, +45.7461%].
func TestNestedHand(t *testing.T) {
	a := expAll([][]float64{{-0.01, 0.01}, {0.09, 0.11}, {0.19, 0.21}})
	b := expAll([][]float64{{0.14, 0.16}, {0.24, 0.26}, {0.34, 0.36}})
	c := Nested(a, b)
	near(t, "point", c.Point, math.Expm1(0.15), 1e-9)
	near(t, "se", c.SELog, 0.0816497, 1e-6)
	near(t, "df", c.DF, 4, 1e-9)
	near(t, "lo", c.Lo, -0.073828, 1e-5)
	near(t, "hi", c.Hi, 0.457461, 1e-5)
	if c.Unit != "process" || c.N != "3 processes × 2 rounds" || c.Units != [2]int{3, 3} || len(c.Notes) != 0 {
		t.Errorf("unit %q n %q units %v notes %q", c.Unit, c.N, c.Units, c.Notes)
	}
	// Paired by process: the differences are all 0.15: se 0, CI the point.
	p := NestedPaired(a, b)
	if !p.Paired || p.DF != 2 || math.Abs(p.Lo-p.Point) > 1e-9 || math.Abs(p.Hi-p.Point) > 1e-9 || p.Unit != "process" {
		t.Errorf("paired: %+v", p)
	}
	// One process a side: the rounds, and a note.
	r := Nested(a[:1], b[:1])
	if r.Unit != "round" || math.Abs(r.DF-2) > 1e-9 || !strings.Contains(strings.Join(r.Notes, ""), "between-process noise was not measured") {
		t.Errorf("1 × 1: %+v", r)
	}
	// One baseline process against three: its variance borrows B's
	// between-process component (B's means 0.15, 0.25, 0.35: MSB = 2 ·
	// 0.01 = 0.02; MSW = 0.0002 pooled over both sides; σ²p = (0.02 −
	// 0.0002)/2 = 0.0099), + 0.0002/2 for its own 2 rounds: 0.01; B's
	// variance of means 0.01/3: se = √(0.01 + 0.01/3) = 0.1154701.
	s := Nested(a[:1], b)
	near(t, "pooled se", s.SELog, 0.1154701, 1e-6)
	if s.Unit != "process" || !strings.Contains(strings.Join(s.Notes, ""), "A has 1 process") {
		t.Errorf("pooled: %+v", s)
	}
	// Values a log cannot take, and too few.
	if c := Nested([][]float64{{1, 0}}, b); c.Defined() || !strings.Contains(c.Notes[0], "≤ 0") {
		t.Errorf("zero value: %+v", c)
	}
	if c := Nested([][]float64{{1}}, [][]float64{{2}}); c.Defined() {
		t.Errorf("one value a side: %+v", c)
	}
	if c := Nested(nil, b); c.Defined() {
		t.Errorf("no A: %+v", c)
	}
}

// TestComponentsHand: logs {0, 0.2} and {1, 1.2}: group means 0.1, 1.1,
// MSW = 0.02, MSB = 2·(0.5² + 0.5²)/1 = 1, n0 = 2: σ²p = (1 − 0.02)/2 =
// 0.49, σ²r = 0.02.
func TestComponentsHand(t *testing.T) {
	v := Components(expAll([][]float64{{0, 0.2}, {1, 1.2}}))
	near(t, "σ²p", v.BetweenProcesses, 0.49, 1e-12)
	near(t, "σ²r", v.BetweenRounds, 0.02, 1e-12)
	if v.Processes != 2 || v.Rounds != 2 || !math.IsNaN(v.WithinRound) || !math.IsNaN(v.Lag1) {
		t.Errorf("%+v", v)
	}
	near(t, "unit variance, 2 rounds", v.UnitVar(2), 0.50, 1e-12)
	// Unbalanced: groups of 1 and 3 (logs {0}, {1, 1.1, 1.2}): MSW = 0.01
	// (df 2), grand mean 0.825, MSB = 1·0.825² + 3·0.275² = 0.9075, n0 =
	// (4 − 10/4)/1 = 1.5: σ²p = (0.9075 − 0.01)/1.5 = 0.598333.
	u := Components(expAll([][]float64{{0}, {1, 1.1, 1.2}}))
	near(t, "unbalanced σ²p", u.BetweenProcesses, 0.598333, 1e-6)
	near(t, "unbalanced σ²r", u.BetweenRounds, 0.01, 1e-12)
	// One process: no between-process component; a negative estimate
	// truncates to 0.
	if one := Components(expAll([][]float64{{0, 0.1, 0.2}})); !math.IsNaN(one.BetweenProcesses) || math.Abs(one.BetweenRounds-0.01) > 1e-12 {
		t.Errorf("one process: %+v", one)
	}
	if z := Components(expAll([][]float64{{0, 1}, {0.1, 0.9}})); z.BetweenProcesses != 0 {
		t.Errorf("negative σ²p not truncated: %v", z.BetweenProcesses)
	}
}

// TestRoundsPerProcess: Kalibera & Jones' r = √(c_p σ²r / (c_r σ²p)).
func TestRoundsPerProcess(t *testing.T) {
	v := Variance{BetweenProcesses: 0.01, BetweenRounds: 0.04}
	for _, tc := range []struct {
		cp, cr time.Duration
		want   int
	}{{time.Second, time.Second, 2}, {4 * time.Second, time.Second, 4}, {time.Second, 100 * time.Second, 1}, {time.Second, 3 * time.Second, 2}} {
		if got := v.RoundsPerProcess(tc.cp, tc.cr); got != tc.want {
			t.Errorf("c_p %v c_r %v: %d, want %d", tc.cp, tc.cr, got, tc.want)
		}
	}
	if got := (Variance{BetweenProcesses: 0, BetweenRounds: 0.04}).RoundsPerProcess(time.Second, time.Second); got != MaxRoundsPerProcess {
		t.Errorf("σ²p = 0: %d", got)
	}
	if got := (Variance{BetweenProcesses: math.NaN(), BetweenRounds: 0.04}).RoundsPerProcess(time.Second, time.Second); got != 0 {
		t.Errorf("σ²p unknown: %d", got)
	}
}

// TestPocockZ against Jennison & Turnbull's Table 2.1 (two-sided 5%).
func TestPocockZ(t *testing.T) {
	for _, tc := range []struct {
		looks int
		want  float64
	}{{1, 1.960}, {2, 2.178}, {3, 2.289}, {4, 2.361}, {5, 2.413}, {10, 2.555}} {
		near(t, "PocockZ", PocockZ(0.05, tc.looks), tc.want, 0.002)
	}
	// At another level, by simulation: 200,000 walks of 5 standard
	// normal steps cross ±c√k at 2.5% (±3 binomial SEs: 0.0011).
	c := PocockZ(0.025, 5)
	r := rand.New(rand.NewPCG(7, 7))
	crossed := 0
	const walks = 200_000
	for range walks {
		var s float64
		for k := 1; k <= 5; k++ {
			s += r.NormFloat64()
			if math.Abs(s) >= c*math.Sqrt(float64(k)) {
				crossed++
				break
			}
		}
	}
	near(t, "crossing at PocockZ(0.025, 5)", float64(crossed)/walks, 0.025, 0.0011)
	l := Sequential{Looks: 5}.LookLevel()
	near(t, "5-look level", l, 1-2*(1-NormCDF(2.413)), 2e-4)
}

func TestPoisson(t *testing.T) {
	// Garwood: 0 events: [0, 3.6889]; 10 events: [4.7954, 18.3904].
	r := PoissonRate(0, 1, 0.95)
	near(t, "0 hi", r.Hi, 3.688879, 1e-5)
	if r.Lo != 0 || r.Rate != 0 {
		t.Errorf("0 events: %+v", r)
	}
	r = PoissonRate(10, 2, 0.95)
	near(t, "10 lo", r.Lo, 4.795389/2, 1e-5)
	near(t, "10 hi", r.Hi, 18.390356/2, 1e-5)
	mtbf, lo, hi := r.MTBF()
	near(t, "MTBF", mtbf, 0.2, 1e-12)
	near(t, "MTBF lo", lo, 2/18.390356, 1e-6)
	near(t, "MTBF hi", hi, 2/4.795389, 1e-6)
	// 10 against 10 in equal time: p = 1/2, Clopper–Pearson [0.271958,
	// 0.728042]: ratio p/(1−p) = [0.373547, 2.677040].
	c := RateRatio(10, 1, 10, 1, 0.95)
	near(t, "ratio point", c.Point, 0, 1e-12)
	near(t, "ratio lo", 1+c.Lo, 0.373547, 1e-5)
	near(t, "ratio hi", 1+c.Hi, 2.677040, 1e-5)
	// Exposure scales the ratio: 10 in 2 h against 10 in 1 h is half.
	c = RateRatio(10, 1, 10, 2, 0.95)
	near(t, "exposure", 1+c.Point, 0.5, 1e-12)
	// No baseline event: no upper bound. 5 against 0: p ≥ 0.025^(1/5) =
	// 0.478: the ratio may be 0.92, undecided; 10 against 0: p ≥ 0.6915,
	// the ratio ≥ 2.24: slower. None at all: no interval.
	if c := RateRatio(0, 1, 5, 1, 0.95); !math.IsInf(c.Hi, 1) || Decide(c, 0.03, false) != Undecided {
		t.Errorf("0 against 5: %+v (%v)", c, Decide(c, 0.03, false))
	}
	if c := RateRatio(0, 1, 10, 1, 0.95); !math.IsInf(c.Hi, 1) || Decide(c, 0.03, false) != Slower {
		t.Errorf("0 against 10: %+v (%v)", c, Decide(c, 0.03, false))
	}
	near(t, "0 against 10: ratio lo", 1+RateRatio(0, 1, 10, 1, 0.95).Lo, math.Pow(0.025, 0.1)/(1-math.Pow(0.025, 0.1)), 1e-6)
	if c := RateRatio(0, 1, 0, 1, 0.95); c.Defined() {
		t.Errorf("no events: %+v", c)
	}
}

// TestMinDetectable: se 0.02, df 10: log(1.03) + (t(0.975,10) 2.228139 +
// t(0.8,10) 0.879058)·0.02 = 0.091703 → +9.6044%.
func TestMinDetectable(t *testing.T) {
	c := Change{SELog: 0.02, DF: 10, Level: 0.95}
	near(t, "MinDetectable", MinDetectable(c, 0.03, 0.8), math.Expm1(math.Log(1.03)+(2.228139+0.879058)*0.02), 1e-5)
	if !math.IsInf(MinDetectable(Undefined("x"), 0.03, 0.8), 1) {
		t.Error("no interval: not +Inf")
	}
}

func TestMoreSamplesNeeded(t *testing.T) {
	// Point +10%, 4 + 4 processes of log variance 0.01 each.
	c := Change{Point: 0.10, UnitVar: [2]float64{0.01, 0.01}, Units: [2]int{4, 4}, Level: 0.95}
	c.SELog, c.DF = c.projected(0, GrowBoth)
	k, ok := MoreSamplesNeeded(c, 0.03, false, 0.8, GrowBoth)
	if !ok || k < 1 {
		t.Fatalf("more %d %v", k, ok)
	}
	// k more a side decides at the projected noise; k − 1 does not.
	margin := math.Log(1.10) - math.Log(1.03)
	fits := func(k int) bool {
		se, df := c.projected(k, GrowBoth)
		return (TQuantile(0.975, df)+TQuantile(0.8, df))*se <= margin
	}
	if !fits(k) || fits(k-1) {
		t.Errorf("k = %d is not the fewest", k)
	}
	// A fixed baseline too noisy on its own: no number of new units.
	if _, ok := MoreSamplesNeeded(Change{Point: 0.10, UnitVar: [2]float64{1, 0.01}, Units: [2]int{2, 4}}, 0.03, false, 0.8, GrowB); ok {
		t.Error("a noisy fixed baseline: ok")
	}
	// Decided already: 0.
	d := Change{Point: 0.5, UnitVar: [2]float64{0.0001, 0.0001}, Units: [2]int{10, 10}, Level: 0.95}
	if k, ok := MoreSamplesNeeded(d, 0.03, false, 0.8, GrowBoth); !ok || k != 0 {
		t.Errorf("decided: %d %v", k, ok)
	}
	// UnitsToDetect: the fewest n per side, checked as above.
	n, ok := UnitsToDetect(0.0061, 0.10, 0.03, 0.95, 0.8)
	if !ok || n < 10 || n > 40 {
		t.Fatalf("UnitsToDetect = %d %v", n, ok)
	}
	if _, ok := UnitsToDetect(0.0061, 0.03, 0.03, 0.95, 0.8); ok {
		t.Error("a change at the threshold can be detected")
	}
}

func TestLag1(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ar := make([]float64, 4000)
	for i := 1; i < len(ar); i++ {
		ar[i] = 0.6*ar[i-1] + r.NormFloat64()
	}
	near(t, "AR(1) 0.6", Lag1(ar), 0.6, 0.05)
	white := make([]float64, 4000)
	for i := range white {
		white[i] = r.NormFloat64()
	}
	near(t, "white", Lag1(white), 0, 0.05)
	if !math.IsNaN(Lag1([]float64{1, 2})) {
		t.Error("2 values: not NaN")
	}
	if !Lag1High(0.6, 40) || Lag1High(0.25, 1000) || Lag1High(0.5, 10) {
		t.Error("Lag1High")
	}
}

// TestRateRatioUnits: Poisson-like units keep RateRatio's interval; a
// burst in one unit widens it by the counts' overdispersion (φ = Pearson
// χ² / (units − 2)), the point unchanged; too few units keep φ = 1.
func TestRateRatioUnits(t *testing.T) {
	ones := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	// 2 events in every unit: χ² 0, φ 1: RateRatio's interval.
	c := RateRatioUnits(ones(10, 2), ones(10, 1), ones(5, 2), ones(5, 1), 0.95)
	want := RateRatio(20, 10, 10, 5, 0.95)
	near(t, "even: lo", c.Lo, want.Lo, 1e-12)
	near(t, "even: hi", c.Hi, want.Hi, 1e-12)
	// The same 30 events, 19 of B's in one unit: A's rate 2, B's 4 (20 in
	// 5): χ² = Σ(c − e)²/e over B's units (19−4)²/4 + 4·(0.25−4)²/4 =
	// 70.3125, over 13: φ = 5.409. The point is the counts' (+100%).
	b := []float64{19, 0.25, 0.25, 0.25, 0.25}
	c = RateRatioUnits(ones(10, 2), ones(10, 1), b, ones(5, 1), 0.95)
	phi := 70.3125 / 13
	want = rateRatio(20/phi, 10, 20/phi, 5, 0.95)
	near(t, "burst: point", c.Point, 1, 1e-12)
	near(t, "burst: lo", c.Lo, want.Lo, 1e-12)
	if !(c.Lo < RateRatio(20, 10, 20, 5, 0.95).Lo) || !strings.Contains(c.Notes[0], "5.4× a Poisson count's between 15 units") {
		t.Errorf("burst: %+v", c)
	}
	// One unit a side: φ not estimated.
	if c := RateRatioUnits([]float64{20}, []float64{10}, []float64{40}, []float64{10}, 0.95); !strings.Contains(c.Notes[len(c.Notes)-1], "2 units: their overdispersion was not estimated") {
		t.Errorf("two units: %+v", c)
	}
	if c := RateRatioUnits(ones(3, 0), ones(3, 1), ones(3, 0), ones(3, 1), 0.95); c.Defined() {
		t.Errorf("no event: %+v", c)
	}
}
