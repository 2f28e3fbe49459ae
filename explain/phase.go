package explain

import (
	"math"

	"github.com/rtload/rtload/record"
)

// OwnNoisePhase sets a reader's spikes against the duty cycle of one of
// the run's own noise sources that may keep it off its CPU (mayPreempt).
//
// The noise's on phases are not recorded, only its cycle: on for On, off
// for Off, from a start on CLOCK_MONOTONIC that summary.json does not
// keep (noise.Noise.Schedule). The reader's deadlines are on the same
// clock, so every on phase covers the same stretch of the cycle
// (deadline mod On+Off): the spikes such a noise causes have their
// deadline in one window of length On of the cycle. The analysis finds
// the window that holds the most spikes (WindowSpikes) and sets it
// against chance: Spikes times the share of all wakeups whose deadline
// falls in that window (WindowShare; the duty itself when the deadlines
// spread evenly over the cycle, more or less when the reader's period
// puts them on a few points of it). P is the binomial chance of as many
// spikes there or more, times the number of distinct windows the fit
// chose from (Bonferroni). A trial has few spikes (1% of its wakeups
// above its p99), so the window's wakeups are weighed too: SlowIn of
// them at or above SlowNs (the trial's p90) against SlowChance, the
// trial's share of such wakeups in as many, and SlowP, that chance
// with the same Bonferroni factor. Coincide when the window holds more
// spikes than chance, at least 2, and P or SlowP is at most PhaseLevel.
// MeanInNs and MeanOutNs are the mean latency of the wakeups whose
// deadline falls in that window and of the others.
type OwnNoisePhase struct {
	Noise         OwnNoise `json:"noise"`
	Spikes        int      `json:"spikes"`
	WindowSpikes  int      `json:"window_spikes"`
	WindowShare   float64  `json:"window_share"`
	Chance        float64  `json:"window_spikes_by_chance"`
	P             float64  `json:"p"`
	Coincide      bool     `json:"coincide"`
	WindowWakeups int      `json:"window_wakeups"`
	SlowNs        int64    `json:"slow_ns"`
	SlowIn        int      `json:"window_slow"`
	SlowChance    float64  `json:"window_slow_by_chance"`
	SlowP         float64  `json:"slow_p"`
	MeanInNs      float64  `json:"window_mean_latency_ns"`
	MeanOutNs     float64  `json:"other_mean_latency_ns"`
	// Explained is the spikes in the window that nothing else recorded
	// explains: with Coincide, the noise's, no longer unexplained.
	Explained int `json:"explained"`
	// Drains sets the reader's drains against the same cycle: a noise
	// whose on phase begins while the reader drains preempts the drain,
	// not the wakeup. nil when no drain time was logged.
	Drains *DrainPhase `json:"drains,omitempty"`
}

// DrainPhase is the window of the noise's cycle that holds the most long
// drains (at or above LongNs, the trial's drain p90): its Ticks, LongIn
// of them long against Chance (the trial's share of long drains in as
// many), P that chance with OwnNoisePhase's Bonferroni factor, and the
// mean drain time of its ticks and of the others. Coincide when LongIn is
// at least 2, above Chance, P ≤ PhaseLevel, and the window's drains are
// longer than the others' by a quarter of the on phase or more (a drain
// the noise preempts waits up to one on phase: a smaller excess is the
// drain after a late wakeup, not a preempted one).
type DrainPhase struct {
	LongNs    int64   `json:"long_ns"`
	Ticks     int     `json:"ticks"`
	LongIn    int     `json:"long_in"`
	Chance    float64 `json:"long_by_chance"`
	P         float64 `json:"p"`
	Coincide  bool    `json:"coincide"`
	MeanInNs  float64 `json:"window_mean_drain_ns"`
	MeanOutNs float64 `json:"other_mean_drain_ns"`
}

// PhaseLevel is the P at or below which a noise's window of spikes is
// more than chance.
const PhaseLevel = 0.05

// maxPhaseBins bounds the bins of the cycle (4096 × 3 counters).
const maxPhaseBins = 4096

// phaseCheck is the streaming analysis of OwnNoisePhase: bin counts of
// the deadlines' place in the noise's cycle, over every wakeup (pass 1)
// and over the spikes (pass 2).
type phaseCheck struct {
	x                                    *OwnNoisePhase
	period, binNs, longDrainNs           int64
	window                               int // bins in one on phase
	all, spikes, unexpl, slow, longDrain []int
	latSum, drainSum                     []float64
}

// newPhaseCheck prepares the check of n's cycle; nil when n has none.
func newPhaseCheck(n OwnNoise) *phaseCheck {
	if !n.cycled() || n.OnNs > math.MaxInt64/2-n.OffNs {
		return nil
	}
	period := n.OnNs + n.OffNs
	// Bins a quarter of the on phase wide, at most maxPhaseBins.
	nb := maxPhaseBins
	if ratio := period / max(n.OnNs, 1); ratio < maxPhaseBins/4 {
		nb = int(max(4, 4*ratio))
	}
	binNs := (period + int64(nb) - 1) / int64(nb)
	w := int(min(int64(nb), max(1, (n.OnNs+binNs/2)/binNs)))
	return &phaseCheck{x: &OwnNoisePhase{Noise: n}, period: period, binNs: binNs, window: w,
		all: make([]int, nb), spikes: make([]int, nb), unexpl: make([]int, nb), slow: make([]int, nb), longDrain: make([]int, nb),
		latSum: make([]float64, nb), drainSum: make([]float64, nb)}
}

func (c *phaseCheck) bin(deadline int64) int {
	ph := deadline % c.period
	if ph < 0 {
		ph += c.period
	}
	return min(int(ph/c.binNs), len(c.all)-1)
}

// wakeup counts one wakeup of pass 1.
func (c *phaseCheck) wakeup(wk record.Wakeup) {
	if c == nil {
		return
	}
	b := c.bin(wk.DeadlineNs)
	c.all[b]++
	c.latSum[b] += float64(wk.LatencyNs)
	c.drainSum[b] += float64(wk.DrainNs)
}

// row counts one wakeup of pass 2: slow at or above slowNs, its drain
// long at or above longDrainNs (either ≤ 0: not counted).
func (c *phaseCheck) row(wk record.Wakeup, slowNs, longDrainNs int64) {
	if c == nil {
		return
	}
	b := c.bin(wk.DeadlineNs)
	if slowNs > 0 {
		c.x.SlowNs = slowNs
		if wk.LatencyNs >= slowNs {
			c.slow[b]++
		}
	}
	if longDrainNs > 0 {
		c.longDrainNs = longDrainNs
		if wk.DrainNs >= longDrainNs {
			c.longDrain[b]++
		}
	}
}

// spike counts one spike of pass 2; explained says whether anything else
// recorded explains it.
func (c *phaseCheck) spike(wk record.Wakeup, explained bool) {
	if c == nil {
		return
	}
	b := c.bin(wk.DeadlineNs)
	c.spikes[b]++
	c.x.Spikes++
	if !explained {
		c.unexpl[b]++
	}
}

// done fits the windows and returns the analysis; nil when there is no
// spike and no long drain to set against the cycle.
func (c *phaseCheck) done() *OwnNoisePhase {
	if c == nil {
		return nil
	}
	rows, occupied := 0, 0
	for _, n := range c.all {
		rows += n
		if n > 0 {
			occupied++
		}
	}
	if rows == 0 {
		return nil
	}
	m := float64(max(occupied, 1))
	c.fitDrains(rows, m)
	if c.x.Spikes == 0 {
		if c.x.Drains == nil {
			return nil
		}
		return c.x
	}
	c.fitSpikes(rows, m)
	return c.x
}

// fitSpikes fits the window holding the most spikes (ties: the highest
// latency) and weighs it; m is the Bonferroni factor.
func (c *phaseCheck) fitSpikes(rows int, m float64) {
	spikes, all, unexpl, lat := slide(c.spikes, c.window), slide(c.all, c.window), slide(c.unexpl, c.window), slide(c.latSum, c.window)
	best, slowAll, latAll := 0, 0, 0.0
	for s := range c.all {
		slowAll += c.slow[s]
		latAll += c.latSum[s]
		if spikes[s] > spikes[best] || spikes[s] == spikes[best] && lat[s] > lat[best] {
			best = s
		}
	}
	x := c.x
	x.WindowSpikes, x.WindowWakeups, x.Explained = spikes[best], all[best], unexpl[best]
	x.SlowIn = slide(c.slow, c.window)[best]
	x.WindowShare = float64(x.WindowWakeups) / float64(rows)
	x.Chance = float64(x.Spikes) * x.WindowShare
	x.MeanInNs, x.MeanOutNs = means(lat[best], latAll, x.WindowWakeups, rows)
	x.P = math.Min(1, m*binomialTail(x.Spikes, x.WindowSpikes, x.WindowShare))
	x.SlowP = 1
	if slowAll > 0 {
		share := float64(slowAll) / float64(rows)
		x.SlowChance = float64(x.WindowWakeups) * share
		x.SlowP = math.Min(1, m*binomialTail(x.WindowWakeups, x.SlowIn, share))
	}
	x.Coincide = x.WindowSpikes >= 2 && float64(x.WindowSpikes) > x.Chance && min(x.P, x.SlowP) <= PhaseLevel
	if !x.Coincide {
		x.Explained = 0
	}
}

// fitDrains fits the window holding the most long drains (ties: the
// longest drains) and weighs it; m is the Bonferroni factor.
func (c *phaseCheck) fitDrains(rows int, m float64) {
	long, all, drain := slide(c.longDrain, c.window), slide(c.all, c.window), slide(c.drainSum, c.window)
	best, longAll, drainAll := 0, 0, 0.0
	for s := range c.all {
		longAll += c.longDrain[s]
		drainAll += c.drainSum[s]
		if long[s] > long[best] || long[s] == long[best] && drain[s] > drain[best] {
			best = s
		}
	}
	if longAll == 0 || c.longDrainNs <= 0 {
		return
	}
	share := float64(longAll) / float64(rows)
	d := &DrainPhase{LongNs: c.longDrainNs, Ticks: all[best], LongIn: long[best], Chance: float64(all[best]) * share}
	d.MeanInNs, d.MeanOutNs = means(drain[best], drainAll, d.Ticks, rows)
	d.P = math.Min(1, m*binomialTail(d.Ticks, d.LongIn, share))
	d.Coincide = d.LongIn >= 2 && float64(d.LongIn) > d.Chance && d.P <= PhaseLevel && d.MeanInNs-d.MeanOutNs >= float64(c.x.Noise.OnNs)/4
	c.x.Drains = d
}

// means splits a sum over rows into the mean of the n in a window (sum
// in) and of the others.
func means(in, all float64, n, rows int) (float64, float64) {
	var a, b float64
	if n > 0 {
		a = in / float64(n)
	}
	if rows > n {
		b = (all - in) / float64(rows-n)
	}
	return a, b
}

// slide is, for each bin s of the cycle, the sum of v over the w bins
// from s on (wrapping around).
func slide[T int | float64](v []T, w int) []T {
	out := make([]T, len(v))
	if len(v) == 0 {
		return out
	}
	var sum T
	for j := range w {
		sum += v[j%len(v)]
	}
	for s := range v {
		out[s] = sum
		sum += v[(s+w)%len(v)] - v[s]
	}
	return out
}

// binomialTail is P(X ≥ k) for X ~ Binomial(n, p), summed in log space.
func binomialTail(n, k int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n || p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	lgn, _ := math.Lgamma(float64(n + 1))
	lp, lq := math.Log(p), math.Log1p(-p)
	total := 0.0
	for i := k; i <= n; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		term := math.Exp(lgn - a - b + float64(i)*lp + float64(n-i)*lq)
		total += term
		if term < total*1e-12 && float64(i) > float64(n)*p {
			break
		}
	}
	return math.Min(1, total)
}
