package stats

import (
	"math"
	"sync"
)

// Alpha is the false-alarm rate every verdict is held to: 1 − Level,
// two-sided (so at most Alpha/2 in the worse direction).
const Alpha = 1 - Level

// FamilyLevel is the per-metric confidence level that holds the
// family-wise error over m judged metrics at Alpha (Bonferroni: 1 −
// Alpha/m). It needs no assumption about how the metrics correlate
// (mean per-call cost of two variants measured in the same processes
// do), at the cost of being conservative when they do.
func FamilyLevel(m int) float64 {
	if m < 1 {
		m = 1
	}
	return 1 - Alpha/float64(m)
}

// Sequential is the one stop rule of every verdict that may look at its
// data more than once (check --budget, rounds: auto): a group-sequential
// design with at most Looks analyses and Pocock's boundary, read as
// repeated confidence intervals (Jennison & Turnbull, Group Sequential
// Methods, ch. 9): at every look each interval is computed at the same
// nominal level LookLevel, chosen so that the chance that any look's
// interval misses the true change is alpha over all Looks. So stopping
// at the first look that decides keeps the false-alarm rate at alpha,
// where stopping at the first look whose 95% interval decides would not
// (5 looks at 95% give about 14%).
//
// Pocock's constant assumes equally spaced looks with independent
// increments; a check whose baseline is fixed has more strongly
// correlated looks, for which the boundary is conservative. The A/A and
// simulation tests (sequential_test.go, bench/verdicts.sh) measure it.
type Sequential struct {
	// Looks is the most analyses the rule makes, ≥ 1 (1: a single look at
	// the family's level).
	Looks int
	// Alpha is the two-sided error over all looks (and over the metrics,
	// when the caller passes Alpha/m); 0 means the package's Alpha.
	Alpha float64
}

// LookLevel is the nominal two-sided confidence level of every look's
// interval: 1 − 2(1 − Φ(c)) with c = PocockZ(Alpha, Looks).
func (s Sequential) LookLevel() float64 {
	a := s.Alpha
	if a == 0 {
		a = Alpha
	}
	c := PocockZ(a, max(s.Looks, 1))
	return 1 - 2*(1-NormCDF(c))
}

type pocockKey struct {
	alpha float64
	looks int
}

var pocockCache sync.Map // pocockKey → float64

// PocockZ is Pocock's constant boundary c for looks equally spaced
// analyses at two-sided level alpha: P(|Z_k| ≥ c for some k ≤ looks) =
// alpha for Z_k the standardised partial sums of independent normal
// increments. It is computed by recursive numerical integration of the
// continuation densities (Armitage, McPherson & Rowe 1969; Simpson's rule
// on a 0.05 grid) and bisection; PocockZ(0.05, 5) = 2.413 as tabulated in
// Jennison & Turnbull, Table 2.1. No maintained Go library computes
// group-sequential boundaries, hence this. Results are cached.
func PocockZ(alpha float64, looks int) float64 {
	if looks <= 1 {
		return NormQuantile(1 - alpha/2)
	}
	k := pocockKey{alpha, looks}
	if v, ok := pocockCache.Load(k); ok {
		return v.(float64)
	}
	lo, hi := NormQuantile(1-alpha/2), NormQuantile(1-alpha/2/float64(looks))+0.01
	for range 30 {
		mid := (lo + hi) / 2
		if crossing(mid, looks) > alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	c := (lo + hi) / 2
	pocockCache.Store(k, c)
	return c
}

// crossing is P(|S_k| ≥ c√k for some k ≤ looks), S_k a sum of k
// independent standard normals.
func crossing(c float64, looks int) float64 {
	const h = 0.05
	grid := func(k int) []float64 {
		b := c * math.Sqrt(float64(k))
		n := 2*int(math.Ceil(b/h)) + 1
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = -b + 2*b*float64(i)/float64(n-1)
		}
		return xs
	}
	simpson := func(xs, f []float64) float64 {
		step := xs[1] - xs[0]
		s := f[0] + f[len(f)-1]
		for i := 1; i < len(f)-1; i++ {
			if i%2 == 1 {
				s += 4 * f[i]
			} else {
				s += 2 * f[i]
			}
		}
		return s * step / 3
	}
	phi := func(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
	xs := grid(1)
	f := make([]float64, len(xs))
	for i, x := range xs {
		f[i] = phi(x)
	}
	for k := 2; k <= looks; k++ {
		ys := grid(k)
		g := make([]float64, len(ys))
		w := make([]float64, len(xs))
		for j, y := range ys {
			for i, x := range xs {
				w[i] = f[i] * phi(y-x)
			}
			g[j] = simpson(xs, w)
		}
		xs, f = ys, g
	}
	return 1 - simpson(xs, f)
}
