package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/stats"
)

// Defaults of check's sequential sampling.
const (
	// DefaultBudget bounds a check's candidate run. Measured on this
	// 2-vCPU VM (bench/VERDICTS.md): a process of the default scenario
	// (laight-450, 2 variants × 2 rounds of 4 s) costs about 20 s, so
	// 5 minutes is about 15 processes: enough to find a change of +15%
	// against a 10-process baseline, and as long as a bisect step may
	// reasonably take.
	DefaultBudget = 5 * time.Minute
	// DefaultLooks is how many times a check looks at its verdict (the
	// Pocock boundary's K): more looks stop earlier on big changes but
	// widen every look's interval (K = 5: each look at 98.4% for one
	// metric).
	DefaultLooks = 5
	// MaxCheckProcesses bounds a check's candidate processes.
	MaxCheckProcesses = 200
	// minLookProcesses is the fewest candidate processes a look needs:
	// Welch's degrees of freedom over fewer are too optimistic (simulated
	// at the threshold, the worst case: one look at 2 processes against
	// 10 gave 5.1% false alarms for 2.5% nominal, at 3 3.5%, at 5
	// 2.0–3.0%; stats/sim_test.go, bench/VERDICTS.md).
	minLookProcesses = 5
)

// sequential is a check's stop rule over candidate processes: after the
// first process it plans Looks looks evenly over the processes the
// budget allows, and at each one compares the baseline with the
// candidate so far at the look's level (stats.Stop, Pocock), stopping
// once the gate decides (slower or not slower), the next process would
// pass the budget (a last look then), or at the last planned look.
type sequential struct {
	base   compare.Run
	label  string
	gopt   compare.GateOptions
	budget time.Duration
	looks  int
	log    io.Writer

	metrics  int     // judged metrics (known after the first look)
	level    float64 // each look's per-metric level
	schedule []int   // candidate processes at each planned look
	info     compare.Sequential
	res      *compare.Result
	gate     *compare.Gate
	reasons  []string
}

func newSequential(base compare.Run, label string, gopt compare.GateOptions, budget time.Duration, looks int, log io.Writer) *sequential {
	return &sequential{base: base, label: label, gopt: gopt, budget: budget, looks: looks, log: log,
		info: compare.Sequential{BudgetNs: int64(budget), BaselineProcesses: processCount(base.Summary)}}
}

// processCount is how many processes s's trials came from.
func processCount(s *results.Summary) int {
	var ps []int
	for _, t := range s.Trials {
		if !slices.Contains(ps, t.Process) {
			ps = append(ps, t.Process)
		}
	}
	return max(len(ps), 1)
}

// plan fixes the looks once the first process has taken perProcess: the
// budget allows n = budget/perProcess processes (at least minLookProcesses, at most
// MaxCheckProcesses); the looks fall at ⌈k·n/K⌉ processes, k = 1…K, the
// first at minLookProcesses or more, duplicates dropped. The schedule depends only on
// time, never on what was measured, so the Pocock boundary over its
// looks holds.
func (q *sequential) plan(perProcess time.Duration) {
	n := MaxCheckProcesses
	if perProcess > 0 {
		n = min(n, int(q.budget/perProcess))
	}
	n = max(n, minLookProcesses)
	for k := 1; k <= q.looks; k++ {
		at := max(int(math.Ceil(float64(k*n)/float64(q.looks))), minLookProcesses)
		if len(q.schedule) == 0 || at > q.schedule[len(q.schedule)-1] {
			q.schedule = append(q.schedule, at)
		}
	}
	q.info.MaxLooks, q.info.LookProcesses = len(q.schedule), q.schedule
}

// after is engine.Options.AfterProcess: it returns false to stop.
func (q *sequential) after(sum *results.Summary, elapsed time.Duration) bool {
	done := len(sum.Processes)
	q.info.Processes, q.info.ElapsedNs = done, int64(elapsed)
	if q.schedule == nil {
		q.plan(elapsed)
	}
	// A candidate that cannot be judged (degraded, an invalid trial,
	// traffic not as specified, a starved reader) will not become
	// judgeable with more processes: stop at once.
	if len(compare.Unjudgeable(q.label, sum)) > 0 {
		q.lookAt(sum)
		q.info.Stop = "cannot judge"
		return false
	}
	perProcess := elapsed / time.Duration(max(done, 1))
	overBudget := elapsed+perProcess > q.budget
	last := q.schedule[len(q.schedule)-1]
	look := slices.Contains(q.schedule, done) || done >= last || (overBudget && done >= minLookProcesses)
	if look {
		q.lookAt(sum)
		switch {
		case len(q.reasons) > 0:
			q.info.Stop = "cannot judge"
			return false
		case q.gate != nil && (q.gate.Verdict == compare.GateSlower || q.gate.Verdict == compare.GateNotSlower):
			q.info.Stop = stats.StopDecided
			return false
		case overBudget:
			q.info.Stop = stats.StopBudget
			return false
		case q.info.Looks >= q.info.MaxLooks || done >= last:
			q.info.Stop = stats.StopLastLook
			return false
		}
	}
	if overBudget {
		q.info.Stop = stats.StopBudget
		return false
	}
	return true
}

// lookAt compares the baseline with the candidate so far and judges it
// at the look's level.
func (q *sequential) lookAt(sum *results.Summary) {
	q.info.Looks++
	runs := []compare.Run{q.base, {Label: q.label, Summary: sum}}
	res, err := compare.CompareWith(runs, compare.Options{Threshold: q.gopt.Threshold})
	if err != nil {
		q.reasons = []string{err.Error()}
		return
	}
	q.reasons = nil
	for _, r := range runs {
		q.reasons = append(q.reasons, compare.Unjudgeable(r.Label, r.Summary)...)
	}
	if q.metrics == 0 {
		g, err := compare.Judge(res, nil, q.gopt)
		if err != nil {
			q.reasons = append(q.reasons, err.Error())
			return
		}
		q.metrics = max(len(g.Metrics), 1)
		q.level = stats.Stop{Decide: true, MaxLooks: q.info.MaxLooks, Metrics: q.metrics}.Level()
		q.info.Metrics, q.info.Level = q.metrics, q.level
	}
	opt := q.gopt
	opt.Level = q.level
	g, err := compare.Judge(res, q.reasons, opt)
	if err != nil {
		q.reasons = append(q.reasons, err.Error())
		return
	}
	q.res, q.gate = res, &g
	fmt.Fprintf(q.log, "check: look %d of %d at %d candidate processes: %s\n", q.info.Looks, q.info.MaxLooks, q.info.Processes, g.Verdict)
}

// budgetSpent is the cause of a check's run stopped because its first
// process ran past the budget (runFlags.firstProcessLimit): undecided
// (ExitCannotJudge), not interrupted.
type budgetSpent struct{ budget time.Duration }

func (b budgetSpent) Error() string {
	return fmt.Sprintf("the --budget of %v ran out in the first process (its setup and trials take longer): give a larger --budget", b.budget)
}
