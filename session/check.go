package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/term"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
	"github.com/rtload/rtload/verdict"
)

// CheckRun is what rtload check asks of a session: the baseline, the
// scenario to run (the baseline's own unless Scenario), and how to run
// the new processes. Its phases: OpenCheck reads the baseline and makes
// the check; Run plans the new run, asks consent for a baseline's own
// scenario, runs the processes (the check looking after each) and ends
// the check on what they gave.
type CheckRun struct {
	// Baseline is BASELINE_DIR: a results or sessions directory.
	Baseline string
	// Scenario is SCENARIO when Named; else the baseline's own runs.
	Scenario string
	Named    bool
	// As (--as) runs the baseline's scenario as its counterpart.
	As string
	// Trust (--trust-baseline) runs the baseline's scenario without asking.
	Trust bool
	// Keep (--keep) keeps the temporary results directory.
	Keep bool
	// Append (--append CAND) makes the new run a session of CAND.
	Append string
	// Labels are the two columns' names.
	Labels []string
	// Budget (--budget) bounds the new run; Looks (--looks) are the
	// verdict's planned looks (as in verdict.CheckOptions).
	Budget    time.Duration
	Looks     int
	Overrides Overrides
	// Options are the new run's; Out "" for a temporary directory.
	Options Options
	// In is where consent is asked (a terminal, or refused).
	In io.Reader
	// Pause and Resume bracket the new run (a command's CPU budget counts
	// only reading); nil for none.
	Pause, Resume func()

	base    *results.Summary
	baseDir string // the baseline, or a sessions directory's first session
	foreign string
}

// OpenCheck reads r's baseline and makes the check with opt. A sessions
// directory (run --append) is judged whole, the session the unit; its
// first session's summary holds the scenario it runs. Usage comes first
// (exit 2 whatever the baseline holds), then the baseline: one that
// cannot be judged against makes running pointless.
func OpenCheck(r *CheckRun, opt verdict.CheckOptions) (*verdict.Check, error) {
	first := r.Baseline
	if store.IsSessions(r.Baseline) {
		_, dirs, err := store.ReadSessions(r.Baseline)
		if err == nil && len(dirs) == 0 {
			err = errors.New("no session yet")
		}
		if err != nil {
			return nil, UsageError{fmt.Errorf("baseline: %w", err)}
		}
		first = dirs[0]
	}
	base, bst, err := store.ReadSummaryStat(first)
	if err != nil {
		return nil, UsageError{fmt.Errorf("baseline: %w", err)}
	}
	r.base, r.baseDir, r.foreign = base, first, bst.Foreign()
	if r.Append != "" && store.IsSessions(r.Append) {
		prior, err := load.Runs([]string{r.Append}, r.Labels[1:])
		if err != nil {
			return nil, UsageError{fmt.Errorf("--append: %w", err)}
		}
		opt.Prior = &prior[0]
	}
	if err := verdict.CheckMetrics(compare.Run{Label: opt.Labels[0], Summary: base}, opt.Options); err != nil {
		return nil, UsageError{fmt.Errorf("--metric: %w", err)}
	}
	if err := verdict.ControlTimed([]compare.Run{{Label: "the baseline", Summary: base}}, opt.Control); err != nil {
		return nil, UsageError{err}
	}
	baseRuns, err := load.Runs([]string{r.Baseline}, r.Labels[:1])
	if err != nil {
		return nil, UsageError{fmt.Errorf("baseline: %w", err)}
	}
	return verdict.NewCheck(baseRuns[0], opt), nil
}

// Run runs the new processes for check c (after the consent a
// baseline's own scenario needs), into Options.Out or a temporary
// directory, and ends c on what they gave. remove removes the temporary
// directory (call it once the verdict is printed); stopped is the error
// of a run stopped by a signal; err one before anything ran.
func (r *CheckRun) Run(w *Watch, c *verdict.Check) (remove func(), stopped, err error) {
	p, err := r.plan(c)
	if err != nil {
		return nil, nil, err
	}
	opt := r.Options
	var sess *store.Sessions
	if r.Append != "" {
		if sess, err = r.openAppend(p.Spec, c, &opt); err != nil {
			return nil, nil, err
		}
		defer sess.Close()
	}
	tmp := ""
	if opt.Out == "" {
		if tmp, err = os.MkdirTemp("", "rtload-check-"+p.Spec.Name+"-"); err != nil {
			return nil, nil, err
		}
		// The verdict is the answer; the new run's results are kept only
		// when asked for (--keep, --out).
		opt.Out, c.ResultsRemoved = tmp, !r.Keep
	}
	opt.FirstProcessLimit, opt.AfterProcess = r.Budget, c.After
	o, err := r.execute(w, p, opt)
	if sess != nil {
		if aerr := endAppend(opt.Log, sess, opt.Out, o); aerr != nil {
			err = errors.Join(err, aerr)
		}
	}
	if errors.As(err, new(*engine.RequirementsError)) {
		if tmp != "" {
			os.Remove(tmp)
		}
		// This boot is not the side the scenario needs: the user's to fix
		// (--as, or another boot), not the kernel's to be judged.
		return nil, nil, requirementFix(err, r.Baseline, r.base, r.As)
	}
	remove = func() {}
	switch {
	case tmp != "" && (err != nil || o.Sum == nil):
		os.Remove(tmp) // empty: nothing ran
	case tmp != "" && !r.Keep:
		remove = func() { removeCheckResults(opt.Log, tmp) }
	}
	stopped, err = endCheck(c, o, err)
	return remove, stopped, err
}

// execute runs p with opt, the command's CPU budget paused: the run's
// own CPU time is not reading.
func (r *CheckRun) execute(w *Watch, p *Plan, opt Options) (Outcome, error) {
	if r.Pause != nil {
		r.Pause()
	}
	o, err := Execute(w, p, opt)
	if r.Resume != nil {
		r.Resume()
	}
	return o, err
}

// plan is the new run's plan: processes, one after the other (the check
// stops them), never profiled (profiles need one process); refused
// before anything is asked or run on a boot that is not the side the
// scenario needs, or when one process cannot fit the budget; then the
// consent a baseline's own scenario needs, and what the check will do.
func (r *CheckRun) plan(c *verdict.Check) (*Plan, error) {
	errw := r.Options.Log
	spec, err := r.spec(errw)
	if err != nil {
		return nil, err
	}
	ov := r.Overrides
	ov.Check, ov.CheckProcesses = true, verdict.MaxProcesses
	p, err := NewPlan(spec, ov)
	if err != nil {
		return nil, err
	}
	spec, trials := p.Spec, p.Trials
	if !r.Options.AllowDegraded { // Execute would refuse it too
		facts := sysinfo.Gather()
		facts.ReadKernelConfig(spec.Requires.ConfigNames())
		if unmet := engine.Requirements(spec.Requires, &facts); len(unmet) > 0 {
			return nil, requirementFix(&engine.RequirementsError{Scenario: spec.File, Unmet: unmet}, r.Baseline, r.base, r.As)
		}
	}
	// The budget bounds every process, the first included: one that
	// cannot fit is refused before anything runs, and the first process
	// is stopped when the budget runs out (after it the looks' schedule
	// never starts a process that would pass it).
	budget := r.Budget
	if least := scenario.MeasuredTime(trials); least >= budget {
		return nil, UsageError{fmt.Errorf("--budget %v: one process of this plan runs at least %v (%d trials: their durations and warm-ups, setup on top), so not one fits: give a --budget above it, or a shorter --duration",
			budget, least, len(trials))}
	}
	if !r.Named { // the baseline's own scenario: data, not orders (trust.go)
		tty := term.IsTerminal(int(os.Stdin.Fd()))
		if err := consentBaseline(errw, r.In, r.Baseline, r.foreign, spec, trials, tty, r.Trust); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(errw, "check: up to %v of fresh processes (%d trials each), the verdict looked at %d times; baseline: %d processes\n",
		budget, len(trials), r.Looks, c.BaselineProcesses())
	if c.BaselineDropped != nil {
		fmt.Fprintln(errw, "check: "+c.BaselineDropped.Line(true))
	}
	if c.Sizing != nil {
		fmt.Fprintln(errw, c.Sizing.Line("check: sizing"))
	}
	return p, nil
}

// openAppend opens the sessions directory CAND (--append) for the new
// run, its next session the run's directory (opt.Out).
func (r *CheckRun) openAppend(spec *scenario.Spec, c *verdict.Check, opt *Options) (*store.Sessions, error) {
	if opt.Out != "" {
		return nil, UsageError{errors.New("--append and --out: give one (--append CAND writes the session into CAND/sNNN)")}
	}
	sess, err := openAppend(r.Append, spec, sysinfo.Gather())
	if err != nil {
		return nil, err
	}
	if n, m := len(sess.Index.Sessions), c.PriorSessions(); n != m {
		sess.Close()
		return nil, fmt.Errorf("--append %s: its sessions changed (%d, read %d) while the check started: run it again", r.Append, n, m)
	}
	if opt.Out, err = sess.Next(); err != nil {
		sess.Close()
		return nil, err
	}
	return sess, nil
}

// endCheck ends check c on its run's outcome o (err: the run could not
// start): the verdict on the new run, or cannot judge when it failed (a
// missing privilege or requirement, a failed run or save). stopped is
// the run's error when a signal stopped it (c's exit code is then the
// signal's); err an error before anything ran.
func endCheck(c *verdict.Check, o Outcome, err error) (stopped, _ error) {
	requirement := errors.Is(err, rt.ErrNoPrivilege) || errors.Is(err, rt.ErrNotSupported)
	switch {
	case err != nil && !requirement:
		return nil, err
	case err != nil:
		c.Fail(err, true) // a requirement this machine (kernel) does not meet
		return nil, nil
	}
	if o.Sum != nil {
		c.Results = o.Path
	}
	if errors.As(o.RunErr, new(BudgetSpent)) && o.SaveErr == nil {
		// Not interrupted: the budget stopped the first process, and
		// nothing can be judged (125).
		c.Fail(o.RunErr, false)
		return nil, nil
	}
	if err := errors.Join(o.RunErr, o.SaveErr); err != nil {
		c.Fail(err, errors.Is(err, rt.ErrNoPrivilege) || errors.Is(err, rt.ErrNotSupported))
		if errors.Is(err, engine.ErrStopped) {
			c.Interrupted(InterruptedCode(err))
			return err, nil
		}
		return nil, nil
	}
	c.End(o.Sum)
	return nil, nil
}

// removeCheckResults removes a check's temporary results directory dir
// (created by os.MkdirTemp, so rtload's own: RemoveAll removes links in it,
// never what they point at) and says so.
func removeCheckResults(errw io.Writer, dir string) {
	if _, err := os.Lstat(dir); err != nil {
		return // nothing ran: execute removed it already
	}
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(errw, "check: removing the new run's results %s: %v\n", termsafe.Escape(dir), err)
		return
	}
	fmt.Fprintf(errw, "check: removed the new run's results %s (--keep or --out keeps them)\n", termsafe.Escape(dir))
}

// spec is the scenario to run: Scenario when given (a file or a
// built-in name), else the baseline's own, as its summary.json recorded
// it (in baseDir: the baseline, or a sessions directory's first session),
// under the counterpart As's requirements when given (asCounterpart,
// which says on w what it kept and took).
func (r *CheckRun) spec(w io.Writer) (*scenario.Spec, error) {
	if r.Named {
		if r.As != "" {
			return nil, UsageError{fmt.Errorf("--as %s and SCENARIO %s: give one (--as keeps the baseline's scenario and overrides, SCENARIO runs that scenario as it is)", r.As, r.Scenario)}
		}
		return ReadSpec(r.Scenario)
	}
	if r.As != "" {
		return asCounterpart(w, r.Baseline, r.base, r.As)
	}
	if len(r.base.Spec) == 0 {
		return nil, UsageError{fmt.Errorf("baseline %s records no scenario: name one (rtload check DIR SCENARIO)", r.Baseline)}
	}
	return scenario.LoadAsRun(filepath.Join(r.baseDir, results.SummaryFile)+" (spec)", r.base.Spec)
}
