package stats

import "math"

// Level is the two-sided confidence level of every interval a verdict is
// read from, unless a multiple-metric or sequential correction (Family,
// Sequential) raises it: 95%.
const Level = 0.95

// Change is the relative change of B against A, B/A − 1, with its
// confidence interval at Level (or the corrected level it says), computed
// on the log scale: d estimates log B − log A, Point = exp(d) − 1, and Lo,
// Hi = exp(d ∓ t·SELog) − 1 with t the Student quantile at DF degrees of
// freedom. An interval that could not be computed has NaN Lo and Hi
// (Defined reports it); Hi may be +Inf (a rate ratio over no baseline
// event).
type Change struct {
	Point, Lo, Hi float64 // B/A − 1 (0.05 = +5%)
	// Level is the two-sided confidence level of [Lo, Hi] (0.95, or more
	// when corrected for several metrics or sequential looks).
	Level float64
	// SELog is the standard error of log B − log A; DF its degrees of
	// freedom, from the independent units (never from calls).
	SELog float64
	DF    float64
	// UnitVar is the variance of one unit's log value on each side (A, B)
	// and Units the number of units per side, so that SELog² =
	// UnitVar[0]/Units[0] + UnitVar[1]/Units[1]: what MinDetectable and
	// MoreSamplesNeeded project from. A paired design keeps the variance
	// of the per-unit difference in UnitVar[0] and 0 in UnitVar[1].
	UnitVar [2]float64
	Units   [2]int
	Paired  bool
	// Unit names the independent unit ("process", "round", "block pair",
	// "boot").
	Unit string
	// N names the samples: "6 processes × 8 rounds" (per side when they
	// differ: "A 6 processes × 8 rounds, B 4 processes × 8 rounds"), "600
	// ABBA block pairs".
	N string
	// Method names the interval ("Welch t on per-process mean logs").
	Method string
	// Notes say what a reader must know: a level whose noise was not
	// measured, a high lag-1 autocorrelation, a pooled variance.
	Notes []string
}

// Undefined is a Change without an interval, saying why in Notes.
func Undefined(why string) Change {
	return Change{Point: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Level: Level, SELog: math.NaN(), DF: math.NaN(),
		Notes: []string{why}}
}

// Defined reports whether c has an interval (Lo and Hi not NaN).
func (c Change) Defined() bool { return !math.IsNaN(c.Lo) && !math.IsNaN(c.Hi) }

// HalfWidth is the larger side of c's interval on the ratio scale:
// max((1+Hi)/(1+Point) − 1, 1 − (1+Lo)/(1+Point)); +Inf without one.
func (c Change) HalfWidth() float64 {
	if !c.Defined() || math.IsNaN(c.Point) {
		return math.Inf(1)
	}
	p := 1 + c.Point
	return math.Max((1+c.Hi)/p-1, 1-(1+c.Lo)/p)
}

// Verdict is the outcome of a Change against a threshold.
type Verdict int

// Verdicts. Undecided is never a pass.
const (
	Undecided Verdict = iota // the CI straddles a boundary, or there is no CI
	Slower                   // the whole CI lies beyond +threshold, in the worse direction
	NotSlower                // the whole CI lies on the better side of +threshold
	Same                     // the whole CI lies within ±threshold (compare only; it is also not slower)
)

// String is the verdict in the words outputs print: "slower", "not
// slower", "same", "undecided".
func (v Verdict) String() string {
	switch v {
	case Slower:
		return "slower"
	case NotSlower:
		return "not slower"
	case Same:
		return "same"
	}
	return "undecided"
}

// Proven reports whether v says something: Slower, NotSlower or Same.
func (v Verdict) Proven() bool { return v != Undecided }

// Decide judges c against threshold (a fraction: 0.03 = 3%), worse being
// higher unless higherIsBetter:
//
//	Same       the whole CI lies within ±threshold
//	NotSlower  otherwise, the whole CI lies on the better side of +threshold
//	Slower     the whole CI lies beyond +threshold, in the worse direction
//	Undecided  anything else, and no CI
//
// For a higher-is-better metric the boundaries mirror on the ratio scale:
// worse beyond threshold is B/A < 1/(1+threshold). A gate (check,
// --fail-on) treats Same as NotSlower.
func Decide(c Change, threshold float64, higherIsBetter bool) Verdict {
	if !c.Defined() {
		return Undecided
	}
	lo, hi := c.Lo, c.Hi
	if higherIsBetter {
		lo, hi = mirror(c.Hi), mirror(c.Lo)
	}
	switch {
	case lo >= -threshold && hi <= threshold:
		return Same
	case hi < threshold:
		return NotSlower
	case lo > threshold:
		return Slower
	}
	return Undecided
}

// mirror maps a change x = B/A − 1 to A/B − 1.
func mirror(x float64) float64 {
	if x <= -1 {
		return math.Inf(1)
	}
	return 1/(1+x) - 1
}
