package stats

import (
	"fmt"
	"math"
)

// Adjusted is the change of B against A regression-adjusted on a control
// measured in the same units (CUPED: Deng, Xu, Kohavi & Walker, "Improving
// the sensitivity of online controlled experiments by utilizing
// pre-experiment data", WSDM 2013): on the log scale each unit's value Y
// becomes Y − θ(X − X̄), X its control (the drift controls' mean null
// syscall or user loop of the same round: results.Controls), X̄ the
// control's mean over both sides, and θ = cov(Y, X) / var(X) is estimated,
// never assumed to be 1.
//
// θ comes from the variation within each side only (deviations of each
// round's logs from its own side's mean, pooled over both sides), so that
// a difference between A and B cannot enter it; the rounds nested in
// processes are the values, and every level of the drift (round to round,
// process to process) weighs in. The adjusted rounds then go through the
// same interval as the raw ones (Nested, NestedPaired), with one degree
// of freedom less for θ.
//
// The adjustment assumes the change under test does not move the control.
// A change of the system-call entry (a mitigation, a seccomp filter) moves
// the null syscall: Control holds the control's own change so that a
// verdict can see that (the user loop does not move with the kernel) and
// judge Raw instead; adjusting through it would turn a real slowdown into
// a "faster".
type Adjusted struct {
	// Change is the adjusted change of B against A: its interval, on the
	// adjusted values, with DF one less than theirs; its Method says it is
	// adjusted and its Notes give θ and r.
	Change
	// Raw is the same interval on the unadjusted values (what a verdict
	// prints beside the adjusted one, and judges when the control cannot
	// be trusted).
	Raw Change
	// Control is the control's own change of B against A, by the same
	// interval: the machine's change, or the system-call entry's.
	Control Change
	// Theta is θ, the slope of the log values on the log control within
	// each side; R their correlation there (NaN when either does not vary).
	// Rounds is how many values they were estimated from (both sides).
	Theta, R float64
	Rounds   int
}

// VarianceKept is 1 − R², the share of the within-side variance of the
// log values the adjustment leaves (about the share of the samples an
// adjusted interval needs for the width of a raw one); 1 when R is NaN.
func (a Adjusted) VarianceKept() float64 {
	if math.IsNaN(a.R) {
		return 1
	}
	return 1 - a.R*a.R
}

// Adjust is the adjusted change of B against A from two independent nested
// samples (two runs): ya[i][j] is the value of round j of process i of A
// (> 0, a mean per-call cost), xa[i][j] its control (> 0, that round's
// mean null-syscall cost), and yb, xb likewise; each value has its control
// (the same shapes). The interval is Nested's, on the adjusted values.
//
// Without enough rounds to estimate θ (fewer than 2 degrees of freedom
// within the sides), with shapes that differ or a value ≤ 0, the Change is
// Undefined with a note saying why (Raw and Control are still filled when
// they can be). A control that does not vary within the sides gives θ = 0
// and the raw interval, with a note and no degree of freedom spent.
func Adjust(ya, xa, yb, xb [][]float64) Adjusted { return AdjustAt(ya, xa, yb, xb, Level) }

// AdjustAt is Adjust at confidence level.
func AdjustAt(ya, xa, yb, xb [][]float64, level float64) Adjusted {
	return adjust(ya, xa, yb, xb, level, false, 0)
}

// AdjustPaired is Adjust for two variants run in the same processes (the
// interleaved variants of one run): process i of A and of B is the same
// process, and the interval is NestedPaired's on the adjusted values.
func AdjustPaired(ya, xa, yb, xb [][]float64) Adjusted {
	return AdjustPairedAt(ya, xa, yb, xb, Level)
}

// AdjustPairedAt is AdjustPaired at confidence level.
func AdjustPairedAt(ya, xa, yb, xb [][]float64, level float64) Adjusted {
	return adjust(ya, xa, yb, xb, level, true, 0)
}

// Unexplained is the change of y between A and B net of what x's change
// predicts: Adjust (AdjustPaired when paired) with θ at least minTheta.
// Where x is a noisy measure of what moves y, the fitted θ is biased
// towards 0 (x's own noise dilutes the slope), and the prediction with it;
// a floor says how much of x's change y takes on at least. A verdict uses
// it with y the null syscall and x the user loop (verdict's entry-change
// rule: a change of the machine's speed moves the two CPU-bound controls
// alike, so minTheta 1): an interval that excludes 0 says y moved by more
// than x's change predicts. Theta is the slope used, the fitted one in
// the notes when it was raised.
func Unexplained(ya, xa, yb, xb [][]float64, level float64, paired bool, minTheta float64) Adjusted {
	return adjust(ya, xa, yb, xb, level, paired, minTheta)
}

func adjust(ya, xa, yb, xb [][]float64, level float64, paired bool, minTheta float64) Adjusted {
	interval := NestedAt
	if paired {
		interval = NestedPairedAt
	}
	a := Adjusted{Raw: interval(ya, yb, level), Control: interval(xa, xb, level), Theta: math.NaN(), R: math.NaN()}
	if !sameShape(ya, xa) || !sameShape(yb, xb) || paired && len(ya) != len(yb) {
		a.Change = Undefined("the values and their controls differ in shape: each round needs its control")
		return a
	}
	// Keep the processes the interval keeps: both sides' when paired.
	keep := func(i int, y [][]float64, other [][]float64) bool {
		return len(y[i]) > 0 && (!paired || len(other[i]) > 0)
	}
	var lya, lxa, lyb, lxb [][]float64
	for i := range ya {
		if keep(i, ya, yb) {
			lya, lxa = append(lya, ya[i]), append(lxa, xa[i])
		}
	}
	for i := range yb {
		if keep(i, yb, ya) {
			lyb, lxb = append(lyb, yb[i]), append(lxb, xb[i])
		}
	}
	var ok [4]bool
	lya, ok[0] = Logs(lya)
	lxa, ok[1] = Logs(lxa)
	lyb, ok[2] = Logs(lyb)
	lxb, ok[3] = Logs(lxb)
	if ok != [4]bool{true, true, true, true} {
		a.Change = Undefined("a value or control ≤ 0: no log-scale interval")
		return a
	}
	// θ from the deviations of each side's rounds from that side's mean.
	my, mx := meanFlat(lya), meanFlat(lxa)
	nyb, nxb := meanFlat(lyb), meanFlat(lxb)
	var sxy, sxx, syy float64
	n := 0
	for _, s := range []struct {
		y, x   [][]float64
		my, mx float64
	}{{lya, lxa, my, mx}, {lyb, lxb, nyb, nxb}} {
		for i := range s.y {
			for j := range s.y[i] {
				dy, dx := s.y[i][j]-s.my, s.x[i][j]-s.mx
				sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
				n++
			}
		}
	}
	a.Rounds = n
	if n-2 < 2 {
		a.Change = Undefined(fmt.Sprintf("%d rounds: too few to estimate the control's coefficient (want ≥ 4)", n))
		return a
	}
	if !(sxx > 0) && minTheta <= 0 {
		a.Theta, a.Change = 0, a.Raw
		a.Change.Notes = append(append([]string(nil), a.Raw.Notes...), "the control did not vary within either side: not adjusted")
		return a
	}
	floored := ""
	if sxx > 0 {
		a.Theta = sxy / sxx
		if syy > 0 {
			a.R = sxy / math.Sqrt(sxx*syy)
		}
	}
	if !(a.Theta >= minTheta) { // NaN (no variation) too
		floored = fmt.Sprintf(" (fitted %.2f, raised to the floor %.2f)", a.Theta, minTheta)
		a.Theta = minTheta
	}
	// Adjusted logs: Y − θ(X − X̄), X̄ over both sides' rounds.
	xbar := meanFlat(append(append([][]float64(nil), lxa...), lxb...))
	adj := func(y, x [][]float64) [][]float64 {
		out := make([][]float64, len(y))
		for i := range y {
			out[i] = make([]float64, len(y[i]))
			for j := range y[i] {
				out[i][j] = y[i][j] - a.Theta*(x[i][j]-xbar)
			}
		}
		return out
	}
	var c Change
	if paired {
		c = nestedPairedLogs(adj(lya, lxa), adj(lyb, lxb), level)
	} else {
		c = nestedLogs(adj(lya, lxa), adj(lyb, lxb), level)
	}
	if c.Defined() {
		c.DF-- // one degree of freedom spent on θ
		setInterval(&c, math.Log1p(c.Point))
	}
	c.Method = "regression-adjusted on the control (CUPED), " + c.Method
	c.Notes = append(c.Notes, fmt.Sprintf("adjusted on the control: θ = %.2f%s, r = %.2f within the sides (%d rounds); one degree of freedom spent on θ", a.Theta, floored, a.R, n))
	a.Change = c
	return a
}

// sameShape says whether y and x have the same groups of the same lengths.
func sameShape(y, x [][]float64) bool {
	if len(y) != len(x) {
		return false
	}
	for i := range y {
		if len(y[i]) != len(x[i]) {
			return false
		}
	}
	return true
}

// meanFlat is the mean of every value of groups (NaN for none).
func meanFlat(groups [][]float64) float64 {
	var s float64
	n := 0
	for _, g := range groups {
		for _, v := range g {
			s += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}
