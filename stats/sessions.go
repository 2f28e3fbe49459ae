package stats

import (
	"fmt"
	"math"
)

// A session is one sitting of a machine: one boot of a kernel (or the
// same boot on another day), holding the processes of one or more
// rtload runs. Kernels A/B across boots nest three levels deep: sessions
// ⊃ processes ⊃ rounds, and what one boot adds (where the kernel's pages,
// the slab caches and the interrupt affinity fell, the machine's speed on
// that day) is shared by every process of that session. One session per
// side cannot tell a kernel from its boot. This file is that level.
//
// The interval takes the session as its unit: each session's value is
// the unweighted mean of its processes' mean log values, and the change
// is a t interval on those session means, its degrees of freedom from the
// sessions, never from the processes or rounds below them:
//
//   - with as many sessions on each side (S), the mixed model's interval:
//     a boot's variance is taken to be the same on both sides (a kernel
//     moves the mean; what a boot adds is the machine's), so the session
//     means' variance is pooled, df = 2·S − 2. For a balanced design
//     (the same processes and rounds per session) the session means are
//     independent normal values of variance σ²s + σ²p/P + σ²r/(P·R), and
//     this is exactly the REML estimate's interval with Kenward–Roger (or
//     Satterthwaite) degrees of freedom. With equal counts its standard
//     error is Welch's whatever the two variances, and the pooled t is
//     robust to their differing (Scheffé, The Analysis of Variance, §10.4);
//   - with unequal counts, Welch's t on the session means with the
//     Welch–Satterthwaite degrees of freedom (S_A − 1, S_B − 1), which
//     protects when the side with fewer sessions is the noisier.
//
// Welch's df with equal counts lies between S − 1 and 2·S − 2, and at 2
// sessions a side it is so often near 1 that the interval covered the
// true change in 98% of simulated draws, against 95.5% for the pooled df
// (sessions_test.go). A full REML fit was not chosen: with the 2–8
// sessions a side a person can boot, its variance estimates sit on the
// boundary (σ²s = 0) often, and its degrees of freedom then jump from the
// sessions' to the processes', which undercovers; the session means cannot
// overstate the df. Unbalanced sessions (one boot ran 4 processes,
// another 10) keep an unbiased mean (simulated: 95.8% at 3 vs 4 sessions
// of 2–6 processes × 2–5 rounds). The cost is that processes inside a
// session buy precision only through the session mean; sizing
// (SessionsToDetect) counts in sessions.

// Sessions is the Change of B against A from two independent samples of
// sessions: a[s][p][r] is the value (> 0, e.g. a mean per-call cost) of
// round r of process p of session s of A, b likewise. The unit is the
// session when both sides hold ≥ 2 (Welch on session means, see above);
// with one session on one side and ≥ 2 on the other, that session's
// variance is the other side's between-session component plus its own
// process-to-process variance of its mean, with the other side's degrees
// of freedom (a Note says so: a check on one boot against a baseline of
// several); with one session on each side it is Nested's interval over
// the processes, with a Note that the boot's noise was not measured.
// Empty sessions and processes are left out. Values ≤ 0 or too few units
// give an Undefined change.
func Sessions(a, b [][][]float64) Change { return SessionsAt(a, b, Level) }

// SessionsAt is Sessions at confidence level.
func SessionsAt(a, b [][][]float64, level float64) Change {
	la, oka := sessionLogs(a)
	lb, okb := sessionLogs(b)
	if !oka || !okb {
		return Undefined("a value ≤ 0: no log-scale interval")
	}
	return sessionsLogs(la, lb, level)
}

// sessionLogs is Logs for every session, empty sessions left out.
func sessionLogs(sessions [][][]float64) ([][][]float64, bool) {
	var out [][][]float64
	for _, s := range sessions {
		l, ok := Logs(s)
		if !ok {
			return nil, false
		}
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out, true
}

// sessionMean is the unweighted mean of a session's processes' mean logs.
func sessionMean(s [][]float64) float64 {
	m, _ := meanVar(unitMeans(s))
	return m
}

func sessionMeans(ss [][][]float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = sessionMean(s)
	}
	return out
}

// SessionShape names a sample of sessions: "3 sessions × 4 processes × 2
// rounds", ranges where they differ ("3 sessions × 2–4 processes × 2
// rounds").
func SessionShape(sessions [][][]float64) string {
	s, plo, phi, rlo, rhi := 0, math.MaxInt, 0, math.MaxInt, 0
	for _, ss := range sessions {
		p := 0
		for _, g := range ss {
			if len(g) == 0 {
				continue
			}
			p++
			rlo, rhi = min(rlo, len(g)), max(rhi, len(g))
		}
		if p == 0 {
			continue
		}
		s++
		plo, phi = min(plo, p), max(phi, p)
	}
	if s == 0 {
		return "0 sessions"
	}
	span := func(lo, hi int) string {
		if lo == hi {
			return fmt.Sprint(lo)
		}
		return fmt.Sprintf("%d–%d", lo, hi)
	}
	return fmt.Sprintf("%s × %s %s × %s %s", plural(s, "session", "sessions"), span(plo, phi), pluralWord(phi, "process", "processes"),
		span(rlo, rhi), pluralWord(rhi, "round", "rounds"))
}

func sessionShapes(a, b [][][]float64) string {
	sa, sb := SessionShape(a), SessionShape(b)
	if sa == sb {
		return sa
	}
	return "A " + sa + ", B " + sb
}

// flattenSessions is every process of every session, in order.
func flattenSessions(ss [][][]float64) [][]float64 {
	var out [][]float64
	for _, s := range ss {
		out = append(out, s...)
	}
	return out
}

// sessionsLogs is SessionsAt on log values (no empty session or process).
func sessionsLogs(la, lb [][][]float64, level float64) Change {
	sa, sb := len(la), len(lb)
	n := sessionShapes(la, lb)
	switch {
	case sa == 0 || sb == 0:
		u := Undefined("no sessions on one side")
		u.N = n
		return u
	case sa == 1 && sb == 1:
		c := nestedLogs(la[0], lb[0], level)
		c.N = n
		if c.Defined() {
			c.Notes = append(c.Notes, "1 session per side: the between-session (boot) noise was not measured, so the interval covers the noise within one boot only and cannot tell the change from its boot (run more sessions: rtload run --append)")
		}
		return c
	}
	c := Change{Level: level, N: n, Unit: "session", Method: "Welch t on per-session mean logs"}
	if sa >= 2 && sb >= 2 {
		ma, va := meanVar(sessionMeans(la))
		mb, vb := meanVar(sessionMeans(lb))
		welch(&c, ma, va, sa, float64(sa-1), mb, vb, sb, float64(sb-1))
		if sa == sb {
			// Equal counts: the same standard error as Welch's, with the
			// mixed model's degrees of freedom (see above).
			c.Method = "t on per-session mean logs (equal sessions: df 2·S − 2)"
			c.DF = float64(sa + sb - 2)
			setInterval(&c, mb-ma)
		}
		return c
	}
	single, multi, swap := la, lb, false
	if sa >= 2 {
		single, multi, swap = lb, la, true
	}
	mm, vm := meanVar(sessionMeans(multi))
	ms := sessionMean(single[0])
	// The single session's mean varies as a session mean of the other
	// side does (vm: σ²s plus that side's processes and rounds below it,
	// S − 1 degrees of freedom), corrected for its own processes and
	// rounds: vm − w(P_other, R_other) + w(P_own, R_own), w the within-
	// session part σ²p/P + σ²r/(P·R) from both sides' processes.
	w := sessionComponents(append(append([][][]float64(nil), multi...), single...))
	pm, rm := meanShape(multi)
	vs := vm - w.withinSessionVar(pm, rm) + w.withinSessionVar(len(single[0]), roundsOf(single[0]))
	vs = math.Max(vs, w.withinSessionVar(len(single[0]), roundsOf(single[0])))
	df := float64(len(multi) - 1)
	side := "B"
	if !swap {
		side = "A"
	}
	c.Notes = append(c.Notes, fmt.Sprintf("%s has 1 session: its between-session (boot) variance is taken from the other side's %d sessions", side, len(multi)))
	if swap {
		welch(&c, mm, vm, len(multi), df, ms, vs, 1, df)
	} else {
		welch(&c, ms, vs, 1, df, mm, vm, len(multi), df)
	}
	return c
}

// meanShape is the mean processes per session and rounds per process
// of ss, rounded.
func meanShape(ss [][][]float64) (processes, rounds int) {
	var p, r, n float64
	for _, s := range ss {
		p += float64(len(s))
		for _, g := range s {
			r += float64(len(g))
			n++
		}
	}
	if len(ss) == 0 || n == 0 {
		return 1, 1
	}
	return max(1, int(math.Round(p/float64(len(ss))))), max(1, int(math.Round(r/n)))
}

// roundsOf is the mean number of rounds of the processes of a session.
func roundsOf(s [][]float64) int {
	n := 0
	for _, g := range s {
		n += len(g)
	}
	if len(s) == 0 {
		return 1
	}
	return max(1, int(math.Round(float64(n)/float64(len(s)))))
}

// SessionsPaired is the Change of B against A when they ran in the same
// processes of the same sessions (two variants of runs appended to one
// baseline): a[s][p] and b[s][p] are the per-round values of process p
// of session s. Each process gives the difference of its mean logs, each
// session the mean of its processes' differences, and the interval is
// the paired t on the session means (df = sessions − 1), which takes in
// any noise a boot adds to one variant and not the other. With one
// session it is NestedPaired's over the processes, with a Note.
func SessionsPaired(a, b [][][]float64) Change { return SessionsPairedAt(a, b, Level) }

// SessionsPairedAt is SessionsPaired at confidence level.
func SessionsPairedAt(a, b [][][]float64, level float64) Change {
	if len(a) != len(b) {
		return SessionsAt(a, b, level)
	}
	var da, db [][][]float64
	for s := range a {
		if len(a[s]) != len(b[s]) {
			return Undefined(fmt.Sprintf("session %d: %d processes of A and %d of B: not the same processes", s+1, len(a[s]), len(b[s])))
		}
		var pa, pb [][]float64
		for p := range a[s] {
			if len(a[s][p]) == 0 || len(b[s][p]) == 0 {
				continue
			}
			pa, pb = append(pa, a[s][p]), append(pb, b[s][p])
		}
		if len(pa) == 0 {
			continue
		}
		la, oka := Logs(pa)
		lb, okb := Logs(pb)
		if !oka || !okb {
			return Undefined("a value ≤ 0: no log-scale interval")
		}
		da, db = append(da, la), append(db, lb)
	}
	n := sessionShapes(da, db)
	if len(da) < 2 {
		if len(da) == 0 {
			u := Undefined("no session holds both variants")
			u.N = n
			return u
		}
		c := nestedPairedLogs(da[0], db[0], level)
		c.N = n
		if c.Defined() {
			c.Notes = append(c.Notes, "1 session: noise a boot adds to one variant and not the other was not measured")
		}
		return c
	}
	diffs := make([]float64, len(da))
	for s := range da {
		var d float64
		for p := range da[s] {
			ma, _ := meanVar(da[s][p])
			mb, _ := meanVar(db[s][p])
			d += mb - ma
		}
		diffs[s] = d / float64(len(da[s]))
	}
	m, v := meanVar(diffs)
	k := len(diffs)
	c := Change{Level: level, N: n, Unit: "session", Paired: true, Method: "paired t on per-session mean differences of mean logs",
		UnitVar: [2]float64{v, 0}, Units: [2]int{k, k}, SELog: math.Sqrt(v / float64(k)), DF: float64(k - 1)}
	setInterval(&c, m)
	return c
}

// SessionVariance holds the variance components of a sample of sessions
// on the log scale, by the method of moments for a two-stage nested
// random-effects design, unbalanced (Searle, Casella & McCulloch,
// Variance Components, §4.3; the expected mean squares of sessions,
// processes within sessions, rounds within processes):
//
//	BetweenSessions   σ²s: the variance of a session's (a boot's) true mean
//	BetweenProcesses  σ²p: of a process's true mean about its session's
//	BetweenRounds     σ²r: of a round about its process's mean
//
// as Variance has them for processes (its Lag1 from the rounds of every
// process). A component the sample cannot estimate is NaN (σ²s with one
// session, σ²p without a session of 2 processes); negative moment
// estimates are truncated to 0.
type SessionVariance struct {
	Variance
	BetweenSessions float64
	// Sessions is their number; ProcessesPerSession the mean processes per
	// session.
	Sessions            int
	ProcessesPerSession float64
}

// SessionComponents computes the variance components of sessions
// (sessions[s][p][r]: values > 0) on the log scale. Values ≤ 0 give all
// NaN.
func SessionComponents(sessions [][][]float64) SessionVariance {
	l, ok := sessionLogs(sessions)
	if !ok {
		nan := math.NaN()
		return SessionVariance{Variance: Variance{BetweenProcesses: nan, BetweenRounds: nan, WithinRound: nan, Lag1: nan}, BetweenSessions: nan}
	}
	return sessionComponents(l)
}

func sessionComponents(ss [][][]float64) SessionVariance {
	nan := math.NaN()
	all := flattenSessions(ss)
	v := SessionVariance{Variance: components(all), BetweenSessions: nan, Sessions: len(ss)}
	v.BetweenProcesses = nan
	if len(ss) == 0 {
		return v
	}
	v.ProcessesPerSession = float64(len(all)) / float64(len(ss))
	msr := v.BetweenRounds
	if math.IsNaN(msr) {
		msr = 0 // one round per process: rounds and processes cannot be told apart
	}
	// Counts: n_sp rounds of process p of session s, N_s of session s, N.
	var n, sumNsp2 float64
	ns := make([]float64, len(ss))
	sumNsp2OverNs := 0.0
	for i, s := range ss {
		var n2 float64
		for _, g := range s {
			ns[i] += float64(len(g))
			n2 += float64(len(g) * len(g))
		}
		n += ns[i]
		sumNsp2 += n2
		sumNsp2OverNs += n2 / ns[i]
	}
	// Processes within sessions: MS_p = Σ n_sp (m_sp − m_s)² / Σ (P_s − 1),
	// E[MS_p] = σ²r + n0p·σ²p.
	var ssp, dfp float64
	sessMean := make([]float64, len(ss))
	grand := 0.0
	for i, s := range ss {
		var sum float64
		for _, g := range s {
			for _, x := range g {
				sum += x
			}
		}
		sessMean[i] = sum / ns[i]
		grand += sum
		for _, g := range s {
			m, _ := meanVar(g)
			ssp += float64(len(g)) * (m - sessMean[i]) * (m - sessMean[i])
		}
		dfp += float64(len(s) - 1)
	}
	grand /= n
	if dfp > 0 {
		msp := ssp / dfp
		n0p := (n - sumNsp2OverNs) / dfp
		v.BetweenProcesses = math.Max(0, (msp-msr)/n0p)
	}
	if len(ss) < 2 {
		return v
	}
	// Sessions: MS_s = Σ N_s (m_s − m)² / (S − 1),
	// E[MS_s] = σ²r + k1·σ²p + k2·σ²s with
	// k1 = (Σ_s Σ_p n²_sp/N_s − Σ n²_sp/N)/(S − 1), k2 = (N − Σ N²_s/N)/(S − 1).
	var sss, sumNs2 float64
	for i := range ss {
		sss += ns[i] * (sessMean[i] - grand) * (sessMean[i] - grand)
		sumNs2 += ns[i] * ns[i]
	}
	dfs := float64(len(ss) - 1)
	mss := sss / dfs
	k1 := (sumNsp2OverNs - sumNsp2/n) / dfs
	k2 := (n - sumNs2/n) / dfs
	v.BetweenSessions = math.Max(0, (mss-msr-k1*nz(v.BetweenProcesses))/k2)
	return v
}

// withinSessionVar is the variance of one session's mean from its
// processes and rounds alone: σ²p/P + σ²r/(P·R) (NaN components count 0).
func (v SessionVariance) withinSessionVar(processes, rounds int) float64 {
	p, r := float64(max(processes, 1)), float64(max(rounds, 1))
	return nz(v.BetweenProcesses)/p + nz(v.BetweenRounds)/(p*r)
}

// SessionVar is the variance of one session's mean log value with
// processes processes of rounds rounds: σ²s + σ²p/P + σ²r/(P·R), what a
// design in sessions is sized from (NaN components count 0).
func (v SessionVariance) SessionVar(processes, rounds int) float64 {
	return nz(v.BetweenSessions) + v.withinSessionVar(processes, rounds)
}

// SessionsToDetect is how many sessions per side, each of processes
// processes × rounds rounds, a comparison needs to find a true worsening
// change Slower against threshold with probability power at level, at
// the noise v measured (UnitsToDetect on SessionVar). ok is false when
// change ≤ threshold or more than MaxMore sessions would be needed. Past
// a point more processes per session buy nothing: σ²s stays.
func SessionsToDetect(v SessionVariance, processes, rounds int, change, threshold, level, power float64) (int, bool) {
	return UnitsToDetect(v.SessionVar(processes, rounds), change, threshold, level, power)
}

// AdjustSessions is Adjust for samples of sessions (ya[s][p][r] the
// value of round r of process p of session s of A, xa its control; yb,
// xb likewise, the same shapes): θ from the within-side variation of
// every round (each round's logs about its own side's mean, so the
// sessions' own drift weighs in most, which is where the machine's speed
// steps between boots), the rounds adjusted Y − θ(X − X̄), and Sessions'
// interval on them with one degree of freedom spent on θ. Raw and
// Control are Sessions' on the raw values and on the controls.
func AdjustSessions(ya, xa, yb, xb [][][]float64) Adjusted {
	return AdjustSessionsAt(ya, xa, yb, xb, Level)
}

// AdjustSessionsAt is AdjustSessions at confidence level.
func AdjustSessionsAt(ya, xa, yb, xb [][][]float64, level float64) Adjusted {
	a := Adjusted{Raw: SessionsAt(ya, yb, level), Control: SessionsAt(xa, xb, level), Theta: math.NaN(), R: math.NaN()}
	if !sameSessionShape(ya, xa) || !sameSessionShape(yb, xb) {
		a.Change = Undefined("the values and their controls differ in shape: each round needs its control")
		return a
	}
	lya, ok1 := sessionLogs(ya)
	lxa, ok2 := sessionLogs(xa)
	lyb, ok3 := sessionLogs(yb)
	lxb, ok4 := sessionLogs(xb)
	if !(ok1 && ok2 && ok3 && ok4) {
		a.Change = Undefined("a value or control ≤ 0: no log-scale interval")
		return a
	}
	fa, fxa, fb, fxb := flattenSessions(lya), flattenSessions(lxa), flattenSessions(lyb), flattenSessions(lxb)
	theta, r, n, sxx := thetaWithin(fa, fxa, fb, fxb)
	a.Rounds = n
	if n-2 < 2 {
		a.Change = Undefined(fmt.Sprintf("%d rounds: too few to estimate the control's coefficient (want ≥ 4)", n))
		return a
	}
	if !(sxx > 0) {
		a.Theta, a.Change = 0, a.Raw
		a.Change.Notes = append(append([]string(nil), a.Raw.Notes...), "the control did not vary within either side: not adjusted")
		return a
	}
	a.Theta, a.R = theta, r
	xbar := meanFlat(append(append([][]float64(nil), fxa...), fxb...))
	adj := func(y, x [][][]float64) [][][]float64 {
		out := make([][][]float64, len(y))
		for s := range y {
			out[s] = make([][]float64, len(y[s]))
			for p := range y[s] {
				out[s][p] = make([]float64, len(y[s][p]))
				for i := range y[s][p] {
					out[s][p][i] = y[s][p][i] - theta*(x[s][p][i]-xbar)
				}
			}
		}
		return out
	}
	c := sessionsLogs(adj(lya, lxa), adj(lyb, lxb), level)
	if c.Defined() && c.DF > 1 {
		c.DF-- // one degree of freedom spent on θ
		setInterval(&c, math.Log1p(c.Point))
	}
	c.Method = "regression-adjusted on the control (CUPED), " + c.Method
	c.Notes = append(c.Notes, fmt.Sprintf("adjusted on the control: θ = %.2f, r = %.2f within the sides (%d rounds); one degree of freedom spent on θ", theta, r, n))
	a.Change = c
	return a
}

// thetaWithin is the slope θ of log values on their log controls from
// the deviations of each side's rounds from that side's own mean, pooled
// over both sides, with their correlation r, the rounds n and Σdx².
func thetaWithin(ya, xa, yb, xb [][]float64) (theta, r float64, n int, sxx float64) {
	var sxy, syy float64
	for _, s := range []struct{ y, x [][]float64 }{{ya, xa}, {yb, xb}} {
		my, mx := meanFlat(s.y), meanFlat(s.x)
		for i := range s.y {
			for j := range s.y[i] {
				dy, dx := s.y[i][j]-my, s.x[i][j]-mx
				sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
				n++
			}
		}
	}
	theta, r = math.NaN(), math.NaN()
	if sxx > 0 {
		theta = sxy / sxx
		if syy > 0 {
			r = sxy / math.Sqrt(sxx*syy)
		}
	}
	return theta, r, n, sxx
}

func sameSessionShape(y, x [][][]float64) bool {
	if len(y) != len(x) {
		return false
	}
	for s := range y {
		if !sameShape(y[s], x[s]) {
			return false
		}
	}
	return true
}
