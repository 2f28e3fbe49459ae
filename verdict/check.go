package verdict

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/load"
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
	// Replaced are the new run's processes the machine disturbed, each
	// left out of the verdict with a fresh process run in its place;
	// BaselineDropped the baseline's, left out (replace.go). Nil when
	// none was.
	Replaced        *Dropped `json:"replaced,omitempty"`
	BaselineDropped *Dropped `json:"baseline_dropped,omitempty"`
	// PriorDropped are the processes of the new run's earlier sessions
	// (check --append: CheckOptions.Prior) the machine disturbed, left
	// out as the baseline's are: those sessions ended, so nothing
	// replaces them. Nil when none was.
	PriorDropped *Dropped `json:"prior_dropped,omitempty"`
	// Sizing is what the check can see, said before any new process ran:
	// from the baseline's noise and time per process (sizing.go); nil when
	// the baseline cannot be judged against.
	Sizing *Detectable `json:"sizing,omitempty"`
}

// Compared is a comparison with the gate that judged it: `rtload compare
// --fail-on` and a check's Report.Compare. Its JSON is the comparison's
// (schema rtload-compare) with "gate" added.
type Compared struct {
	*compare.Result
	Gate *Gate `json:"gate,omitempty"`
	// LeftOut are, for a gate, the runs' processes the machine disturbed,
	// left out of the verdict as a check leaves out its baseline's (the
	// runs ended: nothing replaces them): one per run that had any.
	LeftOut []LeftOut `json:"left_out,omitempty"`
}

// LeftOut is what a gate left out of one run (Compared.LeftOut).
type LeftOut struct {
	Label string `json:"label"`
	*Dropped
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
	// (load.AppendSession), the session the unit.
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

// NewCheck is a check of a new run against base (load.Runs's, from
// the directory Baseline names), judged on base's processes less those
// the machine disturbed (BaselineDropped). When base cannot be judged
// against (too many disturbed, or Unjudgeable) the check is over before
// anything runs: its Report says CannotJudge and Done reports true.
func NewCheck(base compare.Run, opt CheckOptions) *Check {
	ran := base.Summary.ProcessCount()
	clean, dropped := dropDisturbed(base.Summary, ran)
	base.Summary = clean
	c := &Check{opt: opt, base: base,
		Report: Report{Schema: Schema, Version: compare.SchemaVersion, Baseline: base.Dir, BaselineDropped: dropped,
			Gate: Gate{ThresholdPct: opt.threshold() * 100, Metrics: []Metric{}}},
		seq: Sequential{BudgetNs: int64(opt.Budget), BaselineProcesses: ran}}
	if why := dropped.Reason(opt.Labels[0], true); why != "" {
		c.Gate.Reasons = []string{why}
		c.finish()
		return c
	}
	if dropped != nil {
		c.seq.BaselineProcesses = ran - len(dropped.Disturbed)
	}
	if reasons := Unjudgeable(opt.Labels[0], base.Summary); len(reasons) > 0 {
		c.Gate.Reasons = reasons
		c.finish()
		return c
	}
	if p := opt.Prior; p != nil && p.Summary != nil {
		// The earlier sessions ended: what the machine disturbed in them
		// is left out as the baseline's is (newRun), never blamed on
		// the new session.
		_, d := dropDisturbed(p.Summary, p.Summary.ProcessCount())
		if why := d.Reason(opt.Labels[1]+" (earlier sessions)", true); why != "" {
			c.Gate.Reasons = []string{why}
			c.finish()
			return c
		}
		c.PriorDropped = d
	}
	c.Sizing = c.size()
	return c
}

// size is what the check can see before it runs anything: the clean
// baseline's noise, and the new processes its budget allows at the
// baseline's own time per process.
func (c *Check) size() *Detectable {
	s := c.base.Summary
	n := s.ProcessCount()
	from := fmt.Sprintf("the baseline's %d %s", n, plural(n, "process", "processes"))
	if n == 1 {
		from += " (one: the noise between processes is not measured)"
	}
	return sizeCheck(c.base, c.opt.Options, n, c.looks(), c.opt.Budget, PerProcess(s), from, false)
}

// looks is the looks the check plans (DefaultLooks when not set).
func (c *Check) looks() int {
	if c.opt.Looks < 1 {
		return DefaultLooks
	}
	return c.opt.Looks
}

// PerProcess is the mean time a process of s took (its records' start to
// end; a run of one process without them: the run's), 0 when not known.
func PerProcess(s *results.Summary) time.Duration {
	var sum time.Duration
	n := 0
	for _, p := range s.Processes {
		if !p.Start.IsZero() && p.End.After(p.Start) {
			sum += p.End.Sub(p.Start)
			n++
		}
	}
	switch {
	case n > 0:
		return sum / time.Duration(n)
	case len(s.Processes) <= 1 && !s.Start.IsZero() && s.End.After(s.Start):
		return s.End.Sub(s.Start)
	}
	return 0
}

// Done reports whether c has its verdict.
func (c *Check) Done() bool { return c.Verdict != "" }

// BaselineProcesses is the baseline's process count, those the machine
// disturbed left out.
func (c *Check) BaselineProcesses() int { return c.seq.BaselineProcesses }

// After is engine.Options.AfterProcess: after each new process, with
// the new run's merged summary so far and the time since its first
// process started, it plans the looks (after the first process), leaves
// out the processes the machine disturbed (a fresh one runs in the place
// of each: the run goes on), looks when the plan says (at once when the
// new run cannot be judged: more processes will not make it judgeable),
// and returns false to stop.
func (c *Check) After(sum *results.Summary, elapsed time.Duration) bool {
	q := &c.seq
	if !q.planned() {
		q.plan(c.opt.Looks, elapsed)
	}
	judged, why := c.judged(sum, false)
	look, overBudget := q.step(processCount0(judged), len(sum.Processes), elapsed)
	if why == "" && len(judged.Trials) == 0 { // every process so far replaced: nothing to look at yet
		q.Stop = q.after(false, "", overBudget)
		return q.Stop == ""
	}
	cand := c.newRun(judged).Summary
	reasons, own := OwnMarks(c.opt.Labels[1], cand)
	if why != "" || len(reasons) > 0 || (len(own) > 0 && measuredNothing(cand)) {
		// A run the machine disturbed past a third, that cannot be
		// judged for a reason of its own run (degraded, a requirement
		// not met), or whose reader measured nothing in a trial by its
		// own doing (a trial with no samples proves nothing slower, and
		// a fresh process would repeat it): no later process can mend
		// it. What this look proves slower stands (JudgeMarked);
		// nothing else does.
		if c.look(judged, why) == Slower {
			q.Stop = StopDecided
		} else {
			q.Stop = StopCannotJudge
		}
		return false
	}
	var v Verdict
	if look {
		v = c.look(judged, "")
	}
	if len(own) == 0 {
		q.Stop = q.after(look, v, overBudget)
		return q.Stop == ""
	}
	// Marked by the workload's own threads only (a reader its own
	// noise starves): it can never pass, but what it changes can be
	// proven slower, as any change, with more processes. So it samples
	// on at the planned looks (their Pocock level holds for a slower
	// verdict) and stops at the first slower look; at the budget's end
	// or after the last look it cannot judge.
	if v == CannotJudge {
		v = Undecided
	}
	q.Stop = q.after(look, v, overBudget)
	if q.Stop == StopBudget || q.Stop == StopLastLook {
		if !look { // the gate must hold this run's marks
			c.look(judged, "")
		}
		q.Stop = StopCannotJudge
	}
	return q.Stop == ""
}

// measuredNothing reports whether a trial of s is invalid or empty
// (results.MarkInvalid, MarkEmpty): a reader that measured nothing, or a
// trial whose measure the kernel changed.
func measuredNothing(s *results.Summary) bool {
	for i := range s.Trials {
		if s.Trials[i].Marked(results.MarkInvalid, results.MarkEmpty) {
			return true
		}
	}
	return false
}

// judged is the new run sum without the processes the machine disturbed
// (Replaced: they were, by the processes after them), saying so on the
// log for each new one, and why the run cannot be judged for them ("" if
// it can; final: the run ended, so no fresh process will come).
func (c *Check) judged(sum *results.Summary, final bool) (*results.Summary, string) {
	judged, d := dropDisturbed(sum, len(sum.Processes))
	if d != nil && c.opt.Log != nil {
		seen := 0
		if c.Replaced != nil {
			seen = len(c.Replaced.Disturbed)
		}
		for _, x := range d.Disturbed[min(seen, len(d.Disturbed)):] {
			fmt.Fprintf(c.opt.Log, "check: process %d disturbed by the machine (%s): left out, a fresh process runs in its place\n", x.Process+1, x.Why)
		}
	}
	c.Replaced = d
	return judged, d.Reason(c.opt.Labels[1], final)
}

// processCount0 is how many processes s's trials came from (0 for none).
func processCount0(s *results.Summary) int {
	if len(s.Trials) == 0 {
		return 0
	}
	return s.ProcessCount()
}

// look judges the baseline against the new run sum so far (the machine's
// disturbed processes left out) at the looks' level (fixed at the first
// look: Pocock over the planned looks, Bonferroni over the judged
// metrics): CannotJudge when sum cannot be judged (why, when not "", and
// Unjudgeable) or compared. It reads only the headline metrics
// (compare.Headlines).
func (c *Check) look(sum *results.Summary, why string) Verdict {
	q := &c.seq
	q.Looks++
	c.sum = sum
	cand := c.newRun(sum)
	res, err := compare.Headlines([]compare.Run{c.base, cand}, c.opt.CompareOptions())
	if err != nil {
		c.reasons = []string{termsafe.Escape(err.Error())}
		if why != "" {
			c.reasons = []string{termsafe.Escape(why)}
		}
		return CannotJudge
	}
	// The run's own reasons first (degraded, a requirement not met: no
	// fresh process can mend them), then the machine's disturbance; the
	// marks that are the workload's own apart (JudgeMarked).
	var own []string
	c.reasons, own = OwnMarks(c.opt.Labels[1], cand.Summary)
	if why != "" {
		c.reasons = append(c.reasons, termsafe.Escape(why))
	}
	if q.Metrics == 0 {
		judged, _, err := gated(res.Metrics, c.opt.Metrics)
		if err != nil {
			c.reasons = append(c.reasons, termsafe.Escape(err.Error()))
			return CannotJudge
		}
		q.Metrics = max(len(judged), 1)
		q.Level = stats.Stop{Decide: true, MaxLooks: q.MaxLooks, Metrics: q.Metrics}.Level()
	}
	opt := c.opt.Options
	opt.Level, opt.Machine = q.Level, res.Machine
	g, err := JudgeMarked(res.Metrics, c.reasons, own, opt)
	if err != nil {
		c.reasons = append(append(c.reasons, own...), termsafe.Escape(err.Error()))
		return CannotJudge
	}
	c.reasons = g.Reasons
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
// processes, then the comparison a person reads (facts.CompareWith, on
// the last look's summary) with the gate.
func (c *Check) End(sum *results.Summary) {
	q := &c.seq
	judged, why := c.judged(sum, true)
	if c.gate == nil || q.Processes != processCount0(judged) || q.Ran != len(sum.Processes) {
		if !q.planned() {
			q.plan(c.opt.Looks, 0)
		}
		q.Processes, q.Ran = processCount0(judged), len(sum.Processes)
		c.look(judged, why)
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
	res, err := facts.CompareWith([]compare.Run{c.base, c.newRun(c.sum)}, c.opt.CompareOptions())
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
	// Prior whole, then its disturbed processes out: its processes keep
	// their numbers in the merge (it comes first) and its sessions' lists.
	r := load.AppendSession(*c.opt.Prior, sum)
	r.Label = c.opt.Labels[1]
	if d := c.PriorDropped; d != nil {
		r.Summary = withoutProcesses(r.Summary, d.processes())
	}
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
