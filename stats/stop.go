package stats

// Stop is the stop rule of the verdicts that add samples until they can
// answer: rounds: auto (rounds), make bench (A/B pairs); check's looks
// over fresh processes (package verdict) take each look's Level from it
// and stop on the gate's verdict, which is slower as soon as one metric
// is. After each look it stops when every
// interval is decided against Threshold (Decide set), or when every
// interval is as narrow as Precision asks (Precision > 0), or at
// MaxLooks; the caller stops on its own time budget.
//
// Stopping on decisions needs the repeated-CI level of Sequential: each
// look's intervals must be computed at Level() (Pocock's boundary over
// MaxLooks looks, at Alpha/Metrics), so the chance of any false verdict
// over all looks stays at Alpha. Stopping on precision alone needs no
// correction: the width of a t interval depends on the sample variance,
// which for normal samples is independent of the mean, so the stop time
// carries no information about where the interval lies.
type Stop struct {
	// MinLooks: no stop before this look (1-based); MaxLooks the last.
	MinLooks, MaxLooks int
	// Decide stops once every interval is decided against Threshold
	// (Slower, NotSlower or Same: Decide).
	Decide    bool
	Threshold float64
	// Precision > 0 stops once every interval's HalfWidth is at most it.
	Precision float64
	// Metrics is how many intervals a look judges (Bonferroni, with
	// FamilyLevel); 0 means 1.
	Metrics int
}

// Reasons Next stops for.
const (
	StopDecided   = "decided"
	StopPrecise   = "precise"
	StopLastLook  = "last look"
	StopBudget    = "budget spent" // the caller's: the next look would pass its time budget
	StopUndefined = ""
)

// Level is the two-sided confidence level every look's intervals must be
// computed at: Sequential{MaxLooks, Alpha/Metrics}.LookLevel() when the
// rule stops on decisions, FamilyLevel(Metrics) otherwise.
func (s Stop) Level() float64 {
	m := max(s.Metrics, 1)
	if !s.Decide || s.MaxLooks <= 1 {
		return FamilyLevel(m)
	}
	return Sequential{Looks: s.MaxLooks, Alpha: Alpha / float64(m)}.LookLevel()
}

// Next says whether to stop after look (1-based) given each judged
// interval (computed at Level) and its direction (higher[i]: higher is
// better), and why.
func (s Stop) Next(look int, changes []Change, higher []bool) (stop bool, reason string) {
	if look >= s.MinLooks && len(changes) > 0 {
		decided, precise := s.Decide, s.Precision > 0
		for i, c := range changes {
			h := i < len(higher) && higher[i]
			decided = decided && Decide(c, s.Threshold, h).Proven()
			precise = precise && c.HalfWidth() <= s.Precision
		}
		switch {
		case decided:
			return true, StopDecided
		case precise:
			return true, StopPrecise
		}
	}
	if s.MaxLooks > 0 && look >= s.MaxLooks {
		return true, StopLastLook
	}
	return false, StopUndefined
}
