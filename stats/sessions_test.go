package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bootNoise draws sessions with the machine's nested noise (measured():
// between processes 0.04, between rounds 0.13 AR(1) 0.1) under a session
// (boot) effect of log-SD ss shared by every process of the session.
type bootNoise struct {
	noise
	ss float64
}

func boots(seed uint64, ss float64) bootNoise {
	n := measured(seed)
	return bootNoise{noise: n, ss: ss}
}

// side draws s sessions of procs processes × rounds rounds, shifted by
// shift (log scale).
func (n bootNoise) side(s, procs, rounds int, shift float64) [][][]float64 {
	out := make([][][]float64, s)
	for i := range out {
		out[i] = n.noise.side(procs, rounds, shift+n.ss*n.r.NormFloat64())
	}
	return out
}

// sessionDraws is the share of reps draws of S sessions per side (P
// processes × R rounds each, B shifted by true) whose 95% interval
// covers the true change, the share that says slower at the strictest
// threshold (the whole CI above 0) and at the gate's (Decide at +3%).
func sessionDraws(n bootNoise, reps, s, p, r int, true_ float64) (covered, slower, gate float64) {
	c, sl, g := 0, 0, 0
	want := math.Expm1(true_)
	for range reps {
		ch := Sessions(n.side(s, p, r, 0), n.side(s, p, r, true_))
		if ch.Lo <= want && ch.Hi >= want {
			c++
		}
		if ch.Lo > 0 {
			sl++
		}
		if Decide(ch, 0.03, false) == Slower {
			g++
		}
	}
	f := func(k int) float64 { return float64(k) / float64(reps) }
	return f(c), f(sl), f(g)
}

// TestSessionsCoverage is issue 32's simulation: with a boot effect of
// log-SD 0.05 (larger than the processes' 0.04) and a true change of
// +5%, the 95% interval with the session as its unit covers the true
// change in 93–97% of 2000 seeded draws for 2, 3, 5 and 8 sessions per
// side (4 processes × 4 rounds each), and an A/A comparison says
// "slower" (the whole interval above 0) in at most 5% of draws. The
// processes-as-units interval over the same data (Nested, every session's
// processes pooled) covers far less: the boot is the unit.
func TestSessionsCoverage(t *testing.T) {
	const reps = 2000
	for _, s := range []int{2, 3, 5, 8} {
		cov, _, _ := sessionDraws(boots(uint64(10+s), 0.05), reps, s, 4, 4, math.Log(1.05))
		aa, fa, gate := sessionDraws(boots(uint64(20+s), 0.05), reps, s, 4, 4, 0)
		t.Logf("%d sessions per side × 4 processes × 4 rounds, boot log-SD 0.05: covers +5%% in %.1f%%; A/A: CI excludes 0 in %.2f%%, says slower (CI above 0) in %.2f%%, slower beyond +3%% in %.2f%%",
			s, 100*cov, 100*(1-aa), 100*fa, 100*gate)
		if cov < 0.93 || cov > 0.97 {
			t.Errorf("%d sessions: coverage %.3f, want 0.93–0.97", s, cov)
		}
		if fa > 0.05 {
			t.Errorf("%d sessions: A/A false alarms %.3f, want ≤ 0.05", s, fa)
		}
	}
	// The same data with processes as the units.
	n := boots(7, 0.05)
	c := 0
	for range 1000 {
		a, b := n.side(3, 4, 4, 0), n.side(3, 4, 4, 0)
		ch := Nested(flattenSessions(a), flattenSessions(b))
		if ch.Lo <= 0 && ch.Hi >= 0 {
			c++
		}
	}
	t.Logf("processes as units over 3 sessions per side: covers 0 in %.1f%%", float64(c)/10)
	if f := float64(c) / 1000; f > 0.90 {
		t.Errorf("processes as units cover %.3f: expected well under 0.95 with a boot effect", f)
	}
}

// TestSessionsUnbalanced: sessions of 2–6 processes and 2–5 rounds (a
// boot that ran longer than another) keep the interval's coverage.
func TestSessionsUnbalanced(t *testing.T) {
	n := boots(31, 0.05)
	const reps = 2000
	c := 0
	draw := func(s int, shift float64) [][][]float64 {
		out := make([][][]float64, s)
		for i := range out {
			out[i] = n.noise.side(2+n.r.IntN(5), 2+n.r.IntN(4), shift+n.ss*n.r.NormFloat64())
		}
		return out
	}
	for range reps {
		ch := Sessions(draw(3, 0), draw(4, math.Log(1.05)))
		if ch.Lo <= 0.05 && ch.Hi >= 0.05 {
			c++
		}
	}
	f := float64(c) / reps
	t.Logf("3 vs 4 unbalanced sessions: covers +5%% in %.1f%%", 100*f)
	if f < 0.93 || f > 0.97 {
		t.Errorf("unbalanced coverage %.3f, want 0.93–0.97", f)
	}
}

// TestSessionsOneCandidate is a check on one boot against a baseline of
// S boots: the candidate's boot variance is borrowed from the baseline's
// sessions, and the interval covers the true change near 95% (at least
// 93%, which the borrowed variance's S − 1 degrees of freedom allow).
func TestSessionsOneCandidate(t *testing.T) {
	const reps = 2000
	for _, s := range []int{3, 5, 8} {
		n := boots(uint64(40+s), 0.05)
		c := 0
		for range reps {
			ch := Sessions(n.side(s, 4, 4, 0), n.side(1, 6, 4, math.Log(1.05)))
			if ch.Lo <= 0.05 && ch.Hi >= 0.05 {
				c++
			}
		}
		f := float64(c) / reps
		t.Logf("baseline %d sessions, candidate 1: covers +5%% in %.1f%%", s, 100*f)
		if f < 0.93 || f > 0.98 {
			t.Errorf("%d baseline sessions vs 1: coverage %.3f, want 0.93–0.98", s, f)
		}
	}
}

// TestSessionComponents: over many draws of 6 sessions × 5 processes × 4
// rounds the moment estimates average near the true components (they are
// unbiased before truncation at 0).
func TestSessionComponents(t *testing.T) {
	n := bootNoise{noise: noise{sp: 0.04, sr: 0.10, r: rand.New(rand.NewPCG(5, 5))}, ss: 0.06}
	const reps = 400
	var s, p, r float64
	for range reps {
		v := SessionComponents(n.side(6, 5, 4, 0))
		s, p, r = s+v.BetweenSessions, p+v.BetweenProcesses, r+v.BetweenRounds
	}
	s, p, r = s/reps, p/reps, r/reps
	t.Logf("mean estimates: σ²s %.5f (true %.5f), σ²p %.5f (%.5f), σ²r %.5f (%.5f)", s, 0.06*0.06, p, 0.04*0.04, r, 0.01)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"sessions", s, 0.0036}, {"processes", p, 0.0016}, {"rounds", r, 0.01}} {
		if math.Abs(c.got-c.want) > 0.2*c.want {
			t.Errorf("σ² %s %.5f, want %.5f ±20%%", c.name, c.got, c.want)
		}
	}
}

// TestSessionsSizing: SessionsToDetect asks for more sessions when the
// boot effect grows, and processes per session stop helping once the
// boot effect dominates.
func TestSessionsSizing(t *testing.T) {
	v := SessionVariance{Variance: Variance{BetweenProcesses: 0.04 * 0.04, BetweenRounds: 0.13 * 0.13}, BetweenSessions: 0.03 * 0.03}
	s4, ok := SessionsToDetect(v, 4, 4, 0.10, 0.03, Level, DefaultPower)
	s40, ok2 := SessionsToDetect(v, 40, 4, 0.10, 0.03, Level, DefaultPower)
	v.BetweenSessions = 0.06 * 0.06
	big, ok3 := SessionsToDetect(v, 4, 4, 0.10, 0.03, Level, DefaultPower)
	t.Logf("+10%% at 3%%: %d sessions of 4 processes, %d of 40; boot log-SD 0.06: %d", s4, s40, big)
	if !ok || !ok2 || !ok3 || !(big > s4) || !(s40 <= s4) || s40 < 2 {
		t.Errorf("sizing %d, %d, %d (%v %v %v)", s4, s40, big, ok, ok2, ok3)
	}
}

// TestSessionsPaired: variants run in the same processes of the same
// sessions; the session effect cancels in each difference, and the
// interval over the sessions covers the true change.
func TestSessionsPaired(t *testing.T) {
	n := boots(51, 0.08)
	const reps = 2000
	c := 0
	for range reps {
		const s, p, r = 3, 4, 4
		a := make([][][]float64, s)
		b := make([][][]float64, s)
		for i := range s {
			boot := n.ss * n.r.NormFloat64()
			for range p {
				proc := n.sp * n.r.NormFloat64()
				ra, rb := make([]float64, r), make([]float64, r)
				for k := range r {
					ra[k] = math.Exp(boot + proc + n.sr*n.r.NormFloat64())
					rb[k] = math.Exp(math.Log(1.05) + boot + proc + 0.02*n.r.NormFloat64() + n.sr*n.r.NormFloat64())
				}
				a[i], b[i] = append(a[i], ra), append(b[i], rb)
			}
		}
		ch := SessionsPaired(a, b)
		if ch.Lo <= 0.05 && ch.Hi >= 0.05 {
			c++
		}
	}
	f := float64(c) / reps
	t.Logf("paired over 3 sessions: covers +5%% in %.1f%%", 100*f)
	if f < 0.93 || f > 0.97 {
		t.Errorf("paired coverage %.3f, want 0.93–0.97", f)
	}
}

// TestAdjustSessions: the machine's speed steps between boots and moves
// the control with the per-call cost (θ 1.5): adjusting the rounds on
// the control keeps the coverage and narrows the interval; a control
// unrelated to the cost (θ 0) costs almost nothing.
func TestAdjustSessions(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 61))
	draw := func(s int, shift, beta float64) (y, x [][][]float64) {
		for range s {
			speed := 0.08 * r.NormFloat64() // this boot's machine
			var ys, xs [][]float64
			for range 4 {
				proc := 0.03 * r.NormFloat64()
				var yr, xr []float64
				for range 4 {
					drift := speed + 0.05*r.NormFloat64()
					xv := drift + 0.01*r.NormFloat64()
					yr = append(yr, math.Exp(shift+proc+beta*drift+0.04*r.NormFloat64()))
					xr = append(xr, math.Exp(xv))
				}
				ys, xs = append(ys, yr), append(xs, xr)
			}
			y, x = append(y, ys), append(x, xs)
		}
		return y, x
	}
	for _, beta := range []float64{1.5, 0} {
		const reps = 1000
		cov, narrower := 0, 0
		var ratio []float64
		for range reps {
			ya, xa := draw(3, 0, beta)
			yb, xb := draw(3, math.Log(1.05), beta)
			a := AdjustSessions(ya, xa, yb, xb)
			if a.Lo <= 0.05 && a.Hi >= 0.05 {
				cov++
			}
			w := (a.Hi - a.Lo) / (a.Raw.Hi - a.Raw.Lo)
			ratio = append(ratio, w)
			if w < 1 {
				narrower++
			}
		}
		f := float64(cov) / reps
		t.Logf("θ %.1f, 3 sessions per side: adjusted covers +5%% in %.1f%%, median width %.2f of raw", beta, 100*f, Median(ratio))
		if f < 0.93 || f > 0.98 {
			t.Errorf("θ %.1f: adjusted coverage %.3f, want 0.93–0.98", beta, f)
		}
		if beta > 0 && Median(ratio) > 0.5 {
			t.Errorf("θ %.1f: adjusted width %.2f of raw, want well under 1", beta, Median(ratio))
		}
	}
}

// TestSessionShape names the levels.
func TestSessionShape(t *testing.T) {
	g := func(p, r int) [][]float64 {
		out := make([][]float64, p)
		for i := range out {
			out[i] = make([]float64, r)
		}
		return out
	}
	for _, c := range []struct {
		s    [][][]float64
		want string
	}{
		{[][][]float64{g(4, 2), g(4, 2), g(4, 2)}, "3 sessions × 4 processes × 2 rounds"},
		{[][][]float64{g(2, 2), g(4, 3)}, "2 sessions × 2–4 processes × 2–3 rounds"},
		{[][][]float64{g(1, 1)}, "1 session × 1 process × 1 round"},
	} {
		if got := SessionShape(c.s); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
