package stats

import (
	"math"
	"time"
)

// Variance holds the variance components of a nested sample on the log
// scale (so that a standard deviation of 0.10 is about ±10% from unit to
// unit), by one-way random-effects ANOVA (method of moments, unbalanced
// design: Searle, Casella & McCulloch, Variance Components, ch. 3):
//
//	BetweenProcesses  σ²p: the variance of a process's true mean
//	BetweenRounds     σ²r: the variance of a round about its process's mean
//	WithinRound       σ²w: the variance of a block about its round's mean
//	                  (interleaved blocks only; NaN otherwise)
//
// A component that the sample cannot estimate is NaN: BetweenProcesses
// with one process, BetweenRounds with one round per process. A negative
// moment estimate of σ²p is truncated to 0 (the usual convention).
type Variance struct {
	BetweenProcesses, BetweenRounds, WithinRound float64
	// Processes is the number of processes, Rounds the mean number of
	// rounds per process (the n0 of the unbalanced ANOVA).
	Processes int
	Rounds    float64
	// Lag1 is the pooled lag-1 autocorrelation of consecutive rounds
	// within a process (deviations from the process's mean), from
	// processes of ≥ 3 rounds; NaN without 2 pairs.
	Lag1 float64
	// Lag1Pairs is the number of consecutive pairs it is computed from.
	Lag1Pairs int
}

// Components computes the variance components of groups (groups[i]: the
// per-round values, > 0, of process i) on the log scale. Values ≤ 0 give
// all NaN.
func Components(groups [][]float64) Variance {
	logs, ok := Logs(groups)
	if !ok {
		return Variance{BetweenProcesses: math.NaN(), BetweenRounds: math.NaN(), WithinRound: math.NaN(), Lag1: math.NaN()}
	}
	return components(logs)
}

func components(logs [][]float64) Variance {
	v := Variance{BetweenProcesses: math.NaN(), BetweenRounds: math.NaN(), WithinRound: math.NaN(), Processes: len(logs)}
	var n, sumN2 float64
	var all []float64
	for _, g := range logs {
		n += float64(len(g))
		sumN2 += float64(len(g) * len(g))
		all = append(all, g...)
	}
	if len(logs) == 0 {
		v.Lag1 = math.NaN()
		return v
	}
	v.Rounds = n / float64(len(logs))
	v.BetweenRounds = pooledWithin(logs)
	v.Lag1, v.Lag1Pairs = pooledLag1(logs)
	if len(logs) < 2 {
		return v
	}
	grand, _ := meanVar(all)
	var ssb float64
	for _, g := range logs {
		m, _ := meanVar(g)
		ssb += float64(len(g)) * (m - grand) * (m - grand)
	}
	p := float64(len(logs))
	msb := ssb / (p - 1)
	n0 := (n - sumN2/n) / (p - 1)
	v.Rounds = n0
	msw := v.BetweenRounds
	if math.IsNaN(msw) {
		// One round per process: rounds and processes cannot be told
		// apart; all of the spread is the processes'.
		msw = 0
	}
	v.BetweenProcesses = math.Max(0, (msb-msw)/n0)
	return v
}

// pooledWithin is the pooled within-group variance (MSW), NaN when no
// group has 2 values.
func pooledWithin(logs [][]float64) float64 {
	var ss, df float64
	for _, g := range logs {
		if len(g) < 2 {
			continue
		}
		_, v := meanVar(g)
		ss += v * float64(len(g)-1)
		df += float64(len(g) - 1)
	}
	if df == 0 {
		return math.NaN()
	}
	return ss / df
}

// pooledLag1 is the lag-1 autocorrelation of consecutive values within
// each group, their deviations from the group's mean pooled over groups.
func pooledLag1(logs [][]float64) (float64, int) {
	var num, den float64
	pairs := 0
	for _, g := range logs {
		if len(g) < 3 {
			continue // two deviations from their own mean always correlate −1/2
		}
		m, _ := meanVar(g)
		for i, x := range g {
			den += (x - m) * (x - m)
			if i > 0 {
				num += (x - m) * (g[i-1] - m)
				pairs++
			}
		}
	}
	if pairs < 2 || den == 0 {
		return math.NaN(), pairs
	}
	return num / den, pairs
}

// Lag1 is the lag-1 autocorrelation of xs in time order: Σ (x_t − m)(x_t+1
// − m) / Σ (x_t − m)²; NaN for fewer than 3 values or no spread.
func Lag1(xs []float64) float64 {
	if len(xs) < 3 {
		return math.NaN()
	}
	r, _ := pooledLag1([][]float64{xs})
	return r
}

// Lag1High reports whether a lag-1 autocorrelation r from pairs
// consecutive pairs says the samples are not independent: r above both
// 0.3 and the approximate 95% bound for white noise, 2/√pairs.
func Lag1High(r float64, pairs int) bool {
	if math.IsNaN(r) || pairs < 2 {
		return false
	}
	return r > math.Max(0.3, 2/math.Sqrt(float64(pairs)))
}

// UnitVar is the variance of one process's mean log value with rounds
// rounds: σ²p + σ²r/rounds (a NaN component counts as 0).
func (v Variance) UnitVar(rounds int) float64 {
	return nz(v.BetweenProcesses) + nz(v.BetweenRounds)/float64(max(rounds, 1))
}

func nz(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// MaxRoundsPerProcess bounds RoundsPerProcess when the processes show no
// variance of their own.
const MaxRoundsPerProcess = 32

// RoundsPerProcess is Kalibera & Jones' choice of repetitions ("Rigorous
// Benchmarking in Reasonable Time", ISMM 2013, the optimal allocation of
// two-stage sampling): the rounds per process that minimise the variance
// of the mean for a given time, with a process costing costProcess of its
// own (start, setup, warm-up) and a round costRound:
//
//	r = ⌈√( costProcess · σ²r / (costRound · σ²p) )⌉, 1 … MaxRoundsPerProcess.
//
// σ²p = 0 gives MaxRoundsPerProcess; a component not measured gives 0
// (unknown).
func (v Variance) RoundsPerProcess(costProcess, costRound time.Duration) int {
	if math.IsNaN(v.BetweenProcesses) || math.IsNaN(v.BetweenRounds) || costRound <= 0 {
		return 0
	}
	if v.BetweenProcesses == 0 {
		return MaxRoundsPerProcess
	}
	r := math.Sqrt(float64(costProcess) * v.BetweenRounds / (float64(costRound) * v.BetweenProcesses))
	return int(min(max(math.Ceil(r), 1), MaxRoundsPerProcess))
}
