package verdict

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/stats"
)

// Schema is the JSON schema of a check's report (Report), at
// compare.SchemaVersion.
const Schema = "rtload-check"

// Report is `rtload check --format json`: the verdict with its exit code,
// the gate, the comparison it judged and how the check sampled.
type Report struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	// Verdict is the gate's; ExitCode the code rtload exits with
	// (Verdict.ExitCode: 0, 1, 125; the command's own when the run was
	// interrupted: 130, 129, 131).
	Verdict  Verdict `json:"verdict"`
	ExitCode int     `json:"exit_code"`
	// Baseline is the baseline's results directory, Results the new run's
	// ("" when it measured nothing); Error why the run could not judge
	// (it failed, or lacked a privilege), "" otherwise.
	Baseline string `json:"baseline"`
	Results  string `json:"results,omitempty"`
	// ResultsRemoved says Results was a temporary directory, removed once
	// the verdict was printed (check --keep or --out keeps it).
	ResultsRemoved bool   `json:"results_removed,omitempty"`
	Error          string `json:"error,omitempty"`
	Gate           Gate   `json:"gate"`
	// Compare is the comparison of baseline and new run with the gate;
	// nil when there was nothing to compare.
	Compare *Compared `json:"compare,omitempty"`
	// Sequential is how the check added processes and when it stopped;
	// nil when it ran none.
	Sequential *Sequential `json:"sequential,omitempty"`
}

// Compared is a comparison with the gate that judged it: `rtload compare
// --fail-on` and a check's Report.Compare. Its JSON is the comparison's
// (schema rtload-compare) with "gate" added.
type Compared struct {
	*compare.Result
	Gate *Gate `json:"gate,omitempty"`
}

// CheckOptions are a check's: the gate (threshold, metrics), the
// columns' labels, the new run's budget and its looks.
type CheckOptions struct {
	Options
	// Labels name the baseline's and the new run's columns.
	Labels [2]string
	// Budget bounds the new run's time (DefaultBudget); Looks is how many
	// times the verdict is looked at within it (DefaultLooks, 1–MaxLooks).
	Budget time.Duration
	Looks  int
	// Log, when set, gets one line per look ("check: look 2 of 5 at 8
	// new processes: undecided").
	Log io.Writer
	// Prior, when set, are the candidate's earlier sessions (check
	// --append CAND: a sessions directory): each look judges the baseline
	// against them with the new run as one more session
	// (compare.AppendSession), the session the unit.
	Prior *compare.Run
}

// Check is one `rtload check`, from its baseline to its Report: After
// looks at the new run after each of its processes and says when to
// stop; End (or Fail) makes the verdict.
type Check struct {
	Report
	opt  CheckOptions
	base compare.Run
	seq  Sequential
	// The last look's: the new run's summary, its headline metrics'
	// gate (nil before a look judged), and the reasons it could not.
	sum     *results.Summary
	gate    *Gate
	reasons []string
}

// NewCheck is a check of a new run against base (compare.Load's, from
// the directory Baseline names). When base cannot be judged against
// (Unjudgeable) the check is over before anything runs: its Report says
// CannotJudge and Done reports true.
func NewCheck(base compare.Run, opt CheckOptions) *Check {
	c := &Check{opt: opt, base: base,
		Report: Report{Schema: Schema, Version: compare.SchemaVersion, Baseline: base.Dir,
			Gate: Gate{ThresholdPct: opt.threshold() * 100, Metrics: []Metric{}}},
		seq: Sequential{BudgetNs: int64(opt.Budget), BaselineProcesses: processCount(base.Summary)}}
	if reasons := Unjudgeable(opt.Labels[0], base.Summary); len(reasons) > 0 {
		c.Gate.Reasons = reasons
		c.finish()
	}
	return c
}

// Done reports whether c has its verdict.
func (c *Check) Done() bool { return c.Verdict != "" }

// BaselineProcesses is the baseline's process count.
func (c *Check) BaselineProcesses() int { return c.seq.BaselineProcesses }

// processCount is how many processes s's trials came from (at least 1).
func processCount(s *results.Summary) int {
	seen := map[int]bool{}
	for _, t := range s.Trials {
		seen[t.Process] = true
	}
	return max(len(seen), 1)
}

// After is engine.Options.AfterProcess: after each new process, with
// the new run's merged summary so far and the time since its first
// process started, it plans the looks (after the first process), looks
// when the plan says (at once when the new run cannot be judged: more
// processes will not make it judgeable), and returns false to stop.
func (c *Check) After(sum *results.Summary, elapsed time.Duration) bool {
	q := &c.seq
	if !q.planned() {
		q.plan(c.opt.Looks, elapsed)
	}
	look, overBudget := q.step(len(sum.Processes), elapsed)
	if len(Unjudgeable(c.opt.Labels[1], c.newRun(sum).Summary)) > 0 {
		c.look(sum)
		q.Stop = StopCannotJudge
		return false
	}
	var v Verdict
	if look {
		v = c.look(sum)
	}
	q.Stop = q.after(look, v, overBudget)
	return q.Stop == ""
}

// look judges the baseline against the new run sum so far at the
// looks' level (fixed at the first look: Pocock over the planned looks,
// Bonferroni over the judged metrics): CannotJudge when sum cannot be
// judged or compared. It reads only the headline metrics
// (compare.Headlines).
func (c *Check) look(sum *results.Summary) Verdict {
	q := &c.seq
	q.Looks++
	c.sum = sum
	cand := c.newRun(sum)
	res, err := compare.Headlines([]compare.Run{c.base, cand}, compare.Options{Threshold: c.opt.Threshold})
	if err != nil {
		c.reasons = []string{termsafe.Escape(err.Error())}
		return CannotJudge
	}
	c.reasons = Unjudgeable(c.opt.Labels[1], cand.Summary)
	if q.Metrics == 0 {
		judged, err := gated(res.Metrics, c.opt.Metrics)
		if err != nil {
			c.reasons = append(c.reasons, termsafe.Escape(err.Error()))
			return CannotJudge
		}
		q.Metrics = max(len(judged), 1)
		q.Level = stats.Stop{Decide: true, MaxLooks: q.MaxLooks, Metrics: q.Metrics}.Level()
	}
	opt := c.opt.Options
	opt.Level = q.Level
	g, err := Judge(res.Metrics, c.reasons, opt)
	if err != nil {
		c.reasons = append(c.reasons, termsafe.Escape(err.Error()))
		return CannotJudge
	}
	c.gate = &g
	if c.opt.Log != nil {
		fmt.Fprintf(c.opt.Log, "check: look %d of %d at %d candidate processes: %s\n", q.Looks, q.MaxLooks, q.Processes, g.Verdict)
	}
	if len(c.reasons) > 0 {
		return CannotJudge
	}
	return g.Verdict
}

// End makes the verdict on the new run's summary sum (as saved; never
// nil) once it ran to its end: a last look when no look judged its final
// processes, then the comparison a person reads (compare.CompareWith, on
// the last look's summary) with the gate.
func (c *Check) End(sum *results.Summary) {
	q := &c.seq
	if c.gate == nil || q.Processes != len(sum.Processes) {
		if !q.planned() {
			q.plan(c.opt.Looks, 0)
		}
		q.Processes = len(sum.Processes)
		c.look(sum)
		if q.Stop == "" {
			q.Stop = StopRunEnd
		}
	}
	c.Sequential = &c.seq
	if c.gate == nil {
		c.Gate.Reasons = append(c.Gate.Reasons, c.reasons...)
		c.finish()
		return
	}
	c.Gate = *c.gate
	res, err := compare.CompareWith([]compare.Run{c.base, c.newRun(c.sum)}, compare.Options{Threshold: c.opt.Threshold})
	if err == nil {
		c.Compare = &Compared{Result: res}
	}
	c.finish()
}

// Fail ends a check whose run gave no results to judge: err says why,
// requirement that it lacked a privilege or a feature of this machine
// (the kernel). Its verdict is CannotJudge.
func (c *Check) Fail(err error, requirement bool) {
	c.Error = err.Error()
	// The error's own lines stay lines (a requirement's list); each is
	// escaped, so that the only newlines in a reason are rtload's.
	lines := strings.Split(err.Error(), "\n")
	for i := range lines {
		lines[i] = termsafe.Escape(lines[i])
	}
	why := "the run failed: " + strings.Join(lines, "\n")
	if requirement {
		why = "a requirement is not met: " + strings.Join(lines, "\n")
	}
	c.Gate.Reasons = append(c.Gate.Reasons, why)
	c.finish()
}

// finish fixes the verdict and its exit code: CannotJudge whenever the
// gate holds a reason.
func (c *Check) finish() {
	if len(c.Gate.Reasons) > 0 {
		c.Gate.Verdict = CannotJudge
	}
	c.Verdict, c.ExitCode = c.Gate.Verdict, c.Gate.ExitCode()
	if c.Compare != nil {
		g := c.Gate
		c.Compare.Gate = &g
	}
}

// Interrupted sets the exit code of a check whose run was stopped by a
// signal (the command's: 130, 129, 131) after Fail.
func (c *Check) Interrupted(code int) { c.ExitCode = code }

// newRun is the candidate side of a look at the new run's summary sum:
// sum itself, or with the candidate's earlier sessions (Prior) sum as
// one more session.
func (c *Check) newRun(sum *results.Summary) compare.Run {
	if c.opt.Prior == nil {
		return compare.Run{Label: c.opt.Labels[1], Summary: sum}
	}
	r := compare.AppendSession(*c.opt.Prior, sum)
	r.Label = c.opt.Labels[1]
	return r
}

// PriorSessions is how many sessions Prior holds (1 for a run that is
// not a sessions directory, 0 without Prior).
func (c *Check) PriorSessions() int {
	switch {
	case c.opt.Prior == nil:
		return 0
	case len(c.opt.Prior.Sessions) == 0:
		return 1
	}
	return len(c.opt.Prior.Sessions)
}
