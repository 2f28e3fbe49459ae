package verdict

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rtload/rtload/stats"
)

// Defaults and bounds of check's sequential sampling.
const (
	// DefaultBudget bounds a check's new run. Measured on a 2-vCPU VM
	// (bench/VERDICTS.md): a process of the default scenario (laight-450,
	// 2 variants × 2 rounds of 4 s) costs about 20 s, so 5 minutes is
	// about 15 processes: enough to find a change of +15% against a
	// 10-process baseline, and as long as a bisect step may reasonably
	// take.
	DefaultBudget = 5 * time.Minute
	// DefaultLooks is how many times a check looks at its verdict (the
	// Pocock boundary's K): more looks stop earlier on big changes but
	// widen every look's interval (K = 5: each look at 98.4% for one
	// metric).
	DefaultLooks = 5
	// MaxLooks bounds Looks.
	MaxLooks = 20
	// MaxProcesses bounds a check's new processes.
	MaxProcesses = 200
	// MinLookProcesses is the fewest new processes a planned look needs:
	// Welch's degrees of freedom over fewer are too optimistic (simulated
	// at the threshold, the worst case: one look at 2 processes against
	// 10 gave 5.1% false alarms for 2.5% nominal, at 3 3.5%, at 5
	// 2.0–3.0%; stats/sim_test.go, bench/VERDICTS.md).
	MinLookProcesses = 5
)

// Why a check stopped adding processes (Sequential.Stop).
const (
	StopDecided     = stats.StopDecided  // a look decided: slower or not slower
	StopBudget      = stats.StopBudget   // the next process would pass the budget
	StopLastLook    = stats.StopLastLook // the last planned look, undecided
	StopCannotJudge = "cannot judge"     // the new run cannot be judged (marked, or not comparable)
	StopRunEnd      = "the run's end"    // the run ended before the rule stopped it
)

// Sequential is a check's sequential sampling (Pocock's boundary): the
// new run took one fresh process after another and the verdict was looked
// at after the processes LookProcesses lists, each look's intervals at
// Level, until it was decided, the budget was spent, or the last look.
type Sequential struct {
	BudgetNs int64 `json:"budget_ns"`
	// MaxLooks is the looks planned (after the first process timed the
	// rest) and LookProcesses the new processes each planned look falls
	// at; Looks the looks made, at Processes new processes judged (the
	// machine's disturbed ones left out: Report.Replaced). Ran counts
	// every new process run, replaced ones included: the budget pays for
	// them all.
	MaxLooks      int   `json:"max_looks"`
	LookProcesses []int `json:"look_processes"`
	Looks         int   `json:"looks"`
	Processes     int   `json:"processes"`
	Ran           int   `json:"processes_run"`
	// BaselineProcesses is the baseline's process count (the side that
	// cannot grow).
	BaselineProcesses int `json:"baseline_processes"`
	// Metrics is how many metrics each look judged and Level the
	// per-metric confidence level of each look's intervals (Pocock over
	// MaxLooks at 5%/Metrics).
	Metrics int     `json:"metrics"`
	Level   float64 `json:"level"`
	// Stop is why it stopped: StopDecided, StopBudget, StopLastLook,
	// StopCannotJudge or StopRunEnd.
	Stop      string `json:"stop"`
	ElapsedNs int64  `json:"elapsed_ns"`
}

// plan fixes the looks once the first process has taken perProcess (0:
// unknown): the budget allows n = budget/perProcess processes (at least
// MinLookProcesses, at most MaxProcesses); the looks fall at ⌈k·n/K⌉
// processes, k = 1…K (K = looks), the first at MinLookProcesses or more,
// duplicates dropped. The schedule depends only on time, never on what
// was measured, so the Pocock boundary over its looks holds.
func (q *Sequential) plan(looks int, perProcess time.Duration) {
	n := MaxProcesses
	if perProcess > 0 {
		n = min(n, int(time.Duration(q.BudgetNs)/perProcess))
	}
	n = max(n, MinLookProcesses)
	q.LookProcesses = nil
	for k := 1; k <= looks; k++ {
		at := max(int(math.Ceil(float64(k*n)/float64(looks))), MinLookProcesses)
		if len(q.LookProcesses) == 0 || at > q.LookProcesses[len(q.LookProcesses)-1] {
			q.LookProcesses = append(q.LookProcesses, at)
		}
	}
	q.MaxLooks = len(q.LookProcesses)
}

// planned reports whether q has its schedule.
func (q *Sequential) planned() bool { return q.LookProcesses != nil }

// step is the stop rule after a process: with done processes judged of
// ran run after elapsed, whether to look now (a planned look, past the
// last one, or the budget spent with enough processes for a look) and
// whether the budget is spent (the next process, at the mean time per
// process run so far, would pass it).
func (q *Sequential) step(done, ran int, elapsed time.Duration) (look, overBudget bool) {
	fresh := done != q.Processes // a replaced process adds nothing to look at
	q.Processes, q.Ran, q.ElapsedNs = done, ran, int64(elapsed)
	perProcess := elapsed / time.Duration(max(ran, 1))
	overBudget = elapsed+perProcess > time.Duration(q.BudgetNs)
	last := q.LookProcesses[len(q.LookProcesses)-1]
	look = fresh && (slices.Contains(q.LookProcesses, done) || done >= last || (overBudget && done >= MinLookProcesses))
	return look, overBudget
}

// after is the stop rule once a look has judged v (an empty v: no look
// now): it returns the reason to stop, or "" to go on.
func (q *Sequential) after(looked bool, v Verdict, overBudget bool) string {
	if looked {
		switch {
		case v == CannotJudge:
			return StopCannotJudge
		case v == Slower || v == NotSlower:
			return StopDecided
		case overBudget:
			return StopBudget
		case q.Looks >= q.MaxLooks || q.Processes >= q.LookProcesses[len(q.LookProcesses)-1]:
			return StopLastLook
		}
	}
	if overBudget {
		return StopBudget
	}
	return ""
}

// Short says in a few words how a check sampled and why it stopped, for
// its closing block (Line says it all).
func (q Sequential) Short() string {
	procs := func(n int) string {
		if n == 1 {
			return "1 process"
		}
		return fmt.Sprintf("%d processes", n)
	}
	return fmt.Sprintf("sampled: %s against %s of the baseline, look %d of %d (Pocock, %.2f%% per metric); stopped: %s after %v of the %v budget",
		procs(q.Processes), procs(q.BaselineProcesses), q.Looks, q.MaxLooks, q.Level*100, q.Stop,
		time.Duration(q.ElapsedNs).Round(time.Second), time.Duration(q.BudgetNs))
}

// Line says in one line how a check sampled and why it stopped.
func (q Sequential) Line() string {
	ran := ""
	if q.Ran > q.Processes {
		ran = fmt.Sprintf(" (%d run, %d replaced: disturbed by the machine)", q.Ran, q.Ran-q.Processes)
	}
	return fmt.Sprintf("check: n = %d candidate processes%s against %d baseline processes; look %d of %d planned at %v processes "+
		"(Pocock repeated CIs: each look at %.2f%% per metric over %d metrics, so that stopping at the first decided look keeps the false-alarm rate at 5%%); "+
		"stopped: %s after %v of the %v budget",
		q.Processes, ran, q.BaselineProcesses, q.Looks, q.MaxLooks, q.LookProcesses, q.Level*100, q.Metrics,
		q.Stop, time.Duration(q.ElapsedNs).Round(time.Second), time.Duration(q.BudgetNs))
}
