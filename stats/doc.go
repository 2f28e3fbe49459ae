// Package stats is rtload's one statistics core: every verdict (compare,
// check, compare --fail-on, rounds: auto, make bench) is decided here, by
// one rule, from independent samples at the level where the noise is
// (boot, process, round, block), never from calls or wakeups.
//
// It reads like golang/perf's benchmath: a summary carries its own
// confidence interval and sample count, and "undecided" is an answer.
//
// # Shapes
//
//   - Change: the relative change B/A − 1 with its 95% CI, computed on the
//     log scale (log B − log A), its standard error and degrees of
//     freedom, and n named by level ("6 processes × 8 rounds").
//   - Decide(c, threshold, higherIsBetter): Slower when the whole CI lies
//     beyond +threshold in the worse direction, NotSlower when it lies
//     wholly on the better side of +threshold, Same (compare only) when it
//     lies within ±threshold, Undecided otherwise or when no CI exists.
//   - Nested(a, b): the Change of two nested samples (processes × rounds),
//     the unit being the top level present on both sides.
//   - Components(groups): one-way random-effects ANOVA variance components
//     (between processes, between rounds of one process) and Kalibera &
//     Jones' choice of repetitions per level.
//   - MinDetectable, MoreSamplesNeeded: the smallest change the measured
//     noise could show, and how many more top-level units would decide.
//   - Poisson rates: exact CI of a count per unit time and the exact
//     conditional binomial CI of a rate ratio (spikes per hour, MTBF).
//   - Lag1: lag-1 autocorrelation of consecutive samples.
//   - Paired (stats/paired.go, h/interleave): ABBA block pairs.
//
// Sample levels, top to bottom: boot (a kernel A/B: outside one rtload
// run), process (rtload run --processes), round (one trial per variant),
// block (interleave), call or wakeup (never a sample of a verdict).
package stats
