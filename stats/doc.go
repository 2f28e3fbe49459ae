// Package stats is rtload's one statistics core: every verdict (compare,
// check, compare --fail-on, rounds: auto, make bench) is decided here, by
// one rule, from independent samples at the level where the noise is
// (boot, process, round, block), never from calls or wakeups. It reads
// like golang/perf's benchmath: a summary carries its own confidence
// interval and sample count, and "undecided" is an answer.
//
// # Shapes
//
//   - Change: the relative change B/A − 1 with its confidence interval,
//     computed on the log scale (log B − log A), its standard error and
//     degrees of freedom, the per-unit variances it came from, and n named
//     by level ("6 processes × 8 rounds").
//   - Decide(c, threshold, higherIsBetter): Slower when the whole CI lies
//     beyond +threshold in the worse direction, NotSlower when it lies
//     wholly on the better side of +threshold, Same (compare) when it lies
//     within ±threshold, Undecided otherwise and when there is no CI.
//   - Nested(a, b), NestedPaired(a, b): the Change of two nested samples
//     (processes × rounds), the unit being the top level both sides
//     measured: Welch's t on per-process means of logs between two runs; a
//     paired t on per-process differences between the variants of one run.
//   - Sessions(a, b), SessionsPaired: the Change of two samples of
//     sessions (boots) ⊃ processes ⊃ rounds, the unit being the session:
//     a t on per-session mean logs, df from the sessions (pooled with
//     equal counts, Welch–Satterthwaite otherwise; sessions.go says why);
//     SessionComponents (σ²s, σ²p, σ²r), SessionsToDetect (sizing in
//     sessions per side) and AdjustSessions (the drift controls).
//   - Adjust(ya, xa, yb, xb), AdjustPaired: Nested and NestedPaired on
//     values regression-adjusted on a control measured with them (CUPED,
//     Deng et al. 2013: log Y − θ(log X − X̄), θ = cov/var from the
//     variation within each side, one degree of freedom spent on it),
//     with θ, the correlation, the raw change and the control's own
//     change beside it (the drift controls, issue 31).
//   - Components(groups): variance components by one-way random-effects
//     ANOVA (between processes, between rounds of a process; within a
//     round when blocks exist), the pooled lag-1 autocorrelation of
//     consecutive rounds, and Kalibera & Jones' rounds per process.
//   - MinDetectable, MoreSamplesNeeded, UnitsToDetect: the smallest change
//     the measured noise could show, how many more units would decide,
//     how many units a design needs.
//   - FamilyLevel (Bonferroni over judged metrics), Sequential and Stop:
//     the one stop rule, with Pocock's repeated confidence intervals when
//     it stops on decisions.
//   - PoissonRate, RateRatio: exact rate intervals (spikes per hour, MTBF)
//     and the exact conditional binomial interval of a rate ratio.
//   - CI, MeanCI, RatioCI, AtMost, Within, Either: make bench's per-pair
//     intervals and targets.
//   - Paired (stats/paired.go, h/interleave): ABBA block pairs.
//
// Sample levels, top to bottom: session (a boot, or a sitting on another
// day: a kernel A/B, several rtload runs appended to one baseline), process (rtload run --processes), round (one trial per variant),
// block (interleave), call or wakeup (never a sample of a verdict).
//
// # What is written by hand, and why
//
// Distributions come from gonum (distuv.StudentsT, Normal, Gamma, Beta):
// every quantile and CDF. golang.org/x/perf/benchmath was weighed and is
// not used: its Comparison is a Mann–Whitney U test of two flat samples
// (a p-value, no interval of the change to hold against a threshold) and
// its Summary a nonparametric interval of one sample's median; it has no
// nested samples, no variance components and no sequential rule, which
// are what verdicts on a machine with temporal noise need. What remains
// by hand, because no maintained Go library does it:
//
//   - Welch's t on the log scale with Welch–Satterthwaite degrees of
//     freedom (gonum's stat has moments, not two-sample tests): a few
//     lines over stat-free sums;
//   - the random-effects ANOVA of an unbalanced nested design (Searle,
//     Casella & McCulloch, Variance Components, ch. 3) and Kalibera &
//     Jones' optimal allocation;
//   - Pocock's boundary for K looks, by recursive numerical integration
//     (Armitage, McPherson & Rowe 1969) and bisection, checked against
//     Jennison & Turnbull's table and by simulation;
//   - the power projections (MinDetectable, MoreSamplesNeeded), closed
//     forms and a bisection over t quantiles.
//
// Seed 001's population standard deviation, as its table prints it, is a
// display formula and stays in package report (report.Summarize).
package stats
