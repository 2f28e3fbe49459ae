// Package compare puts the results directories of several rtload runs side
// by side: `rtload compare DIR_A DIR_B`. It prints the seed's histogram
// table (seed 000_b19799733a2511c2: recvfrom and recvmsg, each on an
// unhardened and a hardened kernel) with one column per (variant, run), a
// percentile table per column, and for every headline metric the change
// against the first run in % with a 95% confidence interval and a plain
// verdict, in seed 001's words: faster, slower, or within noise.
//
// The confidence interval comes from Welch's t-test on per-round values
// when both sides ran at least two rounds, otherwise from a seeded
// bootstrap over per-call (or per-wakeup) samples; every metric says which.
// Runs that differ in something that matters (scenario, CPU model,
// clocksource, clock unit, degraded mode, kernel command line, the
// scenario as run) are listed field by field as warnings; a differing
// kernel is expected and listed as information.
//
// The package is pure: it reads summary.json and each reader's own
// per-wakeup log through package results (the percentiles are results'
// one definition, so they match the report's), lays text out with
// package report's helpers, and never touches the kernel.
package compare
