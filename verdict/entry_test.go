package verdict

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rtload/rtload/stats"
)

// The entry-change rule and the adjusted verdict, simulated (seeded, no
// timing): a check's samples drawn from a model of this machine's drift,
// with and without a step of the machine between the baseline and the
// check, and with a change of the system-call entry.

// drift is a model of a check's per-round log values on one side: every
// process has its own offset and its rounds an AR(1) path, of two kinds
// of drift. Cache drift (another job's cache and memory traffic) slows
// the kernel's paths, the null syscall fully, the workload by workCache,
// and barely the register-only user loop (loopCache); speed drift
// (frequency, a hypervisor's steal) moves all three alike. Calibrated on
// bench's drift smoke run and rtload run laight-450 --processes 3 on the
// 2-vCPU VM: per round (4 s) the null syscall's log-SD about 0.045, the
// loop's 0.03, r(workload, null) 0.9, r(null, loop) 0.2–0.5.
type drift struct {
	procCache, roundCache, rho float64 // cache drift: SD between processes, of the rounds' AR(1) innovations, lag-1
	procSpeed, roundSpeed      float64 // speed drift, likewise
	loopCache, workCache       float64 // the loop's and the workload's loading on cache drift (the null's is 1)
	noiseNull, noiseLoop       float64 // each round's own noise
	noiseWork                  float64
	entryShare                 float64 // the share of an entry change the workload takes on (one entry per recv call)
}

var machine = drift{procCache: 0.03, roundCache: 0.025, rho: 0.5, procSpeed: 0.008, roundSpeed: 0.005,
	loopCache: 0.15, workCache: 1.2, noiseNull: 0.015, noiseLoop: 0.02, noiseWork: 0.015, entryShare: 0.3}

// side is what B differs by: the machine's steps (log), an entry change
// (fraction of the null syscall) and the workload's own change (log).
type side struct{ stepCache, stepSpeed, entry, work float64 }

// draw is procs processes × rounds of (workload, null, loop) values (> 0).
func (d drift) draw(rng *rand.Rand, procs, rounds int, s side) (y, null, loop [][]float64) {
	e := math.Log1p(s.entry)
	for range procs {
		pc, pf := rng.NormFloat64()*d.procCache, rng.NormFloat64()*d.procSpeed
		var uc, uf float64
		var gy, gn, gl []float64
		for j := range rounds {
			if j == 0 {
				uc, uf = rng.NormFloat64()*d.roundCache, rng.NormFloat64()*d.roundSpeed
			} else {
				uc = d.rho*uc + math.Sqrt(1-d.rho*d.rho)*rng.NormFloat64()*d.roundCache
				uf = d.rho*uf + math.Sqrt(1-d.rho*d.rho)*rng.NormFloat64()*d.roundSpeed
			}
			c, f := pc+uc+s.stepCache, pf+uf+s.stepSpeed
			gn = append(gn, math.Exp(6.4+c+f+e+rng.NormFloat64()*d.noiseNull))
			gl = append(gl, math.Exp(6.35+d.loopCache*c+f+rng.NormFloat64()*d.noiseLoop))
			gy = append(gy, math.Exp(7.6+d.workCache*c+f+d.entryShare*e+s.work+rng.NormFloat64()*d.noiseWork))
		}
		y, null, loop = append(y, gy), append(null, gn), append(loop, gl)
	}
	return y, null, loop
}

// outcome tallies one scenario's draws: how often the rule fired, and the
// gate's verdict on the adjusted-or-raw change (what the gate judges),
// on the raw change alone and on the adjusted change alone.
type outcome struct {
	n, fired                   int
	slower, notSlower, cover   int // the gate's; cover: its interval holds the workload's own change
	rawSlower, rawNotSlower    int
	adjSlower, adjNotSlower    int
	adjWidth, rawWidth, thetas float64
}

func (o outcome) pct(k int) float64 { return 100 * float64(k) / float64(o.n) }

// simulate draws n checks of a baseline of procsA processes against
// procsB new ones (rounds each) under scenario s, judging at level
// against thr with the rule's margin.
func simulate(seed uint64, n, procsA, procsB, rounds int, s side, level, thr, margin float64) outcome {
	rng := rand.New(rand.NewPCG(seed, 31))
	var o outcome
	for range n {
		ya, na, la := machine.draw(rng, procsA, rounds, side{})
		yb, nb, lb := machine.draw(rng, procsB, rounds, s)
		u := stats.Unexplained(na, la, nb, lb, level, false, EntryMinSlope)
		fired := u.Defined() && (u.Lo > 0 && u.Point > margin || u.Hi < 0 && u.Point < -margin)
		a := stats.AdjustAt(ya, na, yb, nb, level)
		judged := a.Change // as the gate chooses (adjusted): raw when fired, undefined or not narrower
		if fired || !a.Defined() || a.HalfWidth() >= a.Raw.HalfWidth() {
			judged = a.Raw
		}
		o.n++
		if fired {
			o.fired++
		}
		tally := func(c stats.Change, slower, notSlower *int) {
			switch stats.Decide(c, thr, false) {
			case stats.Slower:
				*slower++
			case stats.NotSlower, stats.Same:
				*notSlower++
			}
		}
		tally(judged, &o.slower, &o.notSlower)
		// The workload's own change: its share of the entry's, and its own.
		if w := math.Expm1(s.work + machine.entryShare*math.Log1p(s.entry)); judged.Defined() && judged.Lo <= w && w <= judged.Hi {
			o.cover++
		}
		tally(a.Raw, &o.rawSlower, &o.rawNotSlower)
		tally(a.Change, &o.adjSlower, &o.adjNotSlower)
		o.adjWidth += a.HalfWidth() / float64(n)
		o.rawWidth += a.Raw.HalfWidth() / float64(n)
		o.thetas += a.Theta / float64(n)
	}
	return o
}

// TestEntryRuleSimulation: the entry-change rule's false alarms and its
// power, and the gate's verdicts with it, on 400 simulated checks per
// scenario (10 baseline processes against 10 new, 2 rounds each, at a
// check's first-look level over 2 metrics, threshold +3%). With -v it
// prints the table for margins around EntryMargin (docs/ci-bisect.md
// quotes it).
func TestEntryRuleSimulation(t *testing.T) {
	const n, procsA, procsB, rounds, thr = 400, 10, 10, 2, 0.03
	level := stats.Stop{Decide: true, MaxLooks: DefaultLooks, Metrics: 2}.Level()
	pct := func(p float64) float64 { return math.Log1p(p / 100) }
	for _, tc := range []struct {
		name string
		s    side
		// Bounds in % of the draws: the rule fired in [firedMin,
		// firedMax]; the gate said slower at most slowerMax, not slower
		// at most notSlowerMax (-1: no bound).
		firedMin, firedMax, slowerMax, notSlowerMax float64
		// cover: the judged interval holds the workload's true change
		// (0 in an A/A) in at least this share (-1: not checked).
		cover float64
	}{
		// The machine steady: no false alarm, and the adjusted interval
		// (a third of the raw width) covers 0 as a 99% interval should.
		{"A/A, machine steady", side{}, 0, 1, 1, -1, 98},
		// A step of the machine's speed moves both controls alike: the
		// floor on the loop's slope keeps the rule quiet. The workload
		// moves with each kind of drift by its own share, and θ is fitted
		// on both kinds: a step of one kind leaves a bias (here -0.4%),
		// so the adjusted interval covers 0 a little less often than its
		// level says (the raw one almost never).
		{"A/A, speed step +10%", side{stepSpeed: pct(10)}, 0, 1, 1, -1, 88},
		// Cache drift moves the null syscall and not the loop, as an
		// entry change does: a +5% step is adjusted through (bias +0.8%).
		{"A/A, cache step +5%", side{stepCache: pct(5)}, 0, 2, 2, -1, 88},
		// At +10% the rule fires on a share of checks, which then judge
		// the raw change and say slower: the price of the margin.
		{"A/A, cache step +10%", side{stepCache: pct(10)}, 0, 25, 25, -1, -1},
		{"A/A, cache step -10%", side{stepCache: pct(-10)}, 0, 30, 1, -1, -1},
		// An entry change at +10% takes +3% onto the workload, at the
		// threshold: caught about half the time.
		{"entry +10% (workload +3%)", side{entry: 0.10}, 25, 75, -1, -1, -1},
		// From +15% (the workload +4.3%, beyond the threshold) it is
		// caught, and the gate never passes it as not slower.
		{"entry +15% (workload +4.3%)", side{entry: 0.15}, 95, 100, -1, 3, -1},
		{"entry +20% (workload +5.6%)", side{entry: 0.20}, 99, 100, -1, 0, -1},
		// seccomp's runtime-default (+22% on getppid, the loop flat:
		// bench/SECCOMP.md) while the machine got 5% faster.
		{"seccomp-like: entry +22%, cache step -5%", side{entry: 0.22, stepCache: pct(-5)}, 99, 100, -1, 15, -1},
		// A cheaper entry (a mitigation removed): adjusting through it
		// would call the workload slower; the rule judges raw.
		{"entry -20% (a mitigation removed)", side{entry: -0.20}, 99, 100, 0, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := simulate(7, n, procsA, procsB, rounds, tc.s, level, thr, EntryMargin)
			t.Logf("margin %.0f%%: fired %.1f%%; gate slower %.1f%%, not slower %.1f%%, covers the true change %.1f%%; raw alone %.1f%% / %.1f%%; adjusted alone %.1f%% / %.1f%%; half-width adjusted %.3f, raw %.3f; θ %.2f",
				EntryMargin*100, o.pct(o.fired), o.pct(o.slower), o.pct(o.notSlower), o.pct(o.cover), o.pct(o.rawSlower), o.pct(o.rawNotSlower),
				o.pct(o.adjSlower), o.pct(o.adjNotSlower), o.adjWidth, o.rawWidth, o.thetas)
			if f := o.pct(o.fired); f < tc.firedMin || f > tc.firedMax {
				t.Errorf("the rule fired in %.1f%% of the checks, want %.0f–%.0f%%", f, tc.firedMin, tc.firedMax)
			}
			if tc.slowerMax >= 0 && o.pct(o.slower) > tc.slowerMax {
				t.Errorf("the gate said slower in %.1f%%, want at most %.0f%%", o.pct(o.slower), tc.slowerMax)
			}
			if tc.notSlowerMax >= 0 && o.pct(o.notSlower) > tc.notSlowerMax {
				t.Errorf("the gate said not slower in %.1f%%, want at most %.0f%%", o.pct(o.notSlower), tc.notSlowerMax)
			}
			if tc.cover >= 0 && o.pct(o.cover) < tc.cover {
				t.Errorf("the judged interval covered the true change in %.1f%%, want at least %.0f%%", o.pct(o.cover), tc.cover)
			}
			if testing.Verbose() {
				for _, margin := range []float64{0.05, 0.08, 0.12, 0.15} {
					o := simulate(7, n, procsA, procsB, rounds, tc.s, level, thr, margin)
					t.Logf("margin %.0f%%: fired %.1f%%; gate slower %.1f%%, not slower %.1f%%", margin*100, o.pct(o.fired), o.pct(o.slower), o.pct(o.notSlower))
				}
			}
		})
	}
}
