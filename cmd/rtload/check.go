package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/session"
	"github.com/rtload/rtload/sysinfo"
	"github.com/rtload/rtload/verdict"
)

type checkFlags struct {
	run       runFlags
	threshold string
	control   string
	metrics   []string
	labels    []string
	format    string
	trust     bool
	keep      bool
	cpuBudget time.Duration
	budget    time.Duration
	looks     int
	// as (--as) runs the baseline's scenario under a counterpart's
	// requirements (counterpart.go).
	as string
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check BASELINE_DIR [SCENARIO]",
		Short: "Run the baseline's scenario again in fresh processes and gate on it: exit 0 not slower, 1 slower, 125 undecided",
		Long: `check runs a scenario (by default the baseline's own, as its summary.json
recorded it, --set overrides included) in fresh processes, one after the
other (each re-executes rtload with its setup randomised), compares the new
results with the baseline's after planned looks and exits:

  0    proven not slower: every judged metric's whole confidence interval
       lies below +threshold
  1    proven slower: a judged metric's whole interval lies beyond
       +threshold (not only its mean)
  125  undecided (not shown either way when the budget ran out), or the runs
       cannot be judged: a degraded, stopped or incomplete run (either one),
       a missing privilege or requirement, a run that failed, a trial marked
       by the workload itself, more than a third of a side's processes
       disturbed by the machine
  2    a usage error; among them a scenario whose requires: this boot does
       not meet (nothing is run): the message names the flag that runs the
       other side of a boot A/B, --as COUNTERPART

A process the machine disturbed (a reader kept off its CPU by another
thread or RT throttling it did not cause, a clocksource change, the
hypervisor taking the sender's CPU) is left out of the verdict and a
fresh one runs in its place within the budget; the output says how many
and why. A baseline is judged on its clean processes. A mark the workload
brought on itself (a reader starved by its own overruns) is never
replaced: the run cannot be judged. Before the first new process, check
prints the smallest slowdown it can find from the baseline's noise, raw
and adjusted on the null-syscall drift control.

--as COUNTERPART runs the baseline's own scenario, every --set override it
ran with kept, under the counterpart's name and requires: instead of its
own: the other boot of an A/B (a laight-450-unhardened baseline checked on
a hardened_usercopy=on boot: --as laight-450-hardened). A counterpart
differs from the baseline's scenario only in name, description and
requires: (the shipped pairs: laight-450-hardened/-unhardened,
cook-hackbench-init-off/-on-alloc/-on-free); check says which overrides it
kept, and refuses a scenario that differs in more.

The samples are processes, never calls: each interval is Student's t on
the log values of per-process means (n = processes × rounds), so the
baseline should come from rtload run --processes N (run says how many
processes detect a 5% or 10% change at the noise it saw; with one baseline
process its between-process noise is borrowed from the new run's and the
verdict is mostly undecided). By default the judged metrics are each
column's primary one (mean per-call cost; wakeup latency p99 for a
timer-only reader) and each reader's spike rate (wakeups later than its
threshold, or 1 ms, per hour: slower when proven more than doubled), held
at a 5% family-wise false-alarm rate.

Each reader times drift controls in every tick (a null syscall and a
user-space loop, readers[].controls): the machine's change between the
baseline and the check moves them with the recv calls. A per-call cost is
judged adjusted on the null syscall (regression on the logs, its slope θ
estimated within each side, never assumed 1), with θ, the correlation r
and the raw change printed beside it, and a "machine" line gives each
control's own change. When the null syscall moves by more than 10% beyond
what the user loop's change predicts (a change of the system-call entry:
a mitigation, a seccomp filter), the raw change is judged instead, and the
output says so. --control none judges the raw change; --control loop
adjusts on the user loop.

--budget bounds the new run, its first process included: a plan whose one
process cannot fit (its trials' durations and warm-ups alone reach the
budget) is refused (exit 2), and a first process still running when the
budget runs out is stopped (undecided, 125). After the first process it
plans --looks looks evenly over the processes the budget allows and stops
at the first look that decides. Each look reads its intervals at Pocock's repeated-CI
level, so stopping early does not raise the false-alarm rate. Every verdict
line gives the smallest change it could have detected and how many more
processes would decide it. For a kernel A/B the boot is the top level: one
boot per kernel cannot tell a kernel from its boot; run the baseline and the
check on several boots (docs/ci-bisect.md).

It works as is inside git bisect run (125 skips the commit), after the
script has built, installed and booted the kernel. 2 is a usage error, 130
an interrupted run (129 SIGHUP, 131 SIGQUIT). The new results go to --out,
and are kept there; without --out to a temporary directory, removed once
the verdict is printed (--keep keeps it). The comparison and the verdict
are printed.

A baseline is data, not orders: before running the baseline's own
scenario check prints what it will do on this machine (trials, real-time
priorities and CPUs, noise and the directories it writes in, endpoints),
and runs it only after you answer yes on a terminal, for a baseline of
your own (its summary.json and directory owned by you or root). A baseline
owned by someone else, or a check without a terminal to ask on (a script,
CI, git bisect run), needs --trust-baseline; otherwise it refuses (exit 2)
and runs nothing. Naming a scenario (check DIR SCENARIO) needs neither.`,
		Example: `  rtload run laight-450 --processes 10 --out /srv/base   # once, on the good kernel
  rtload check /srv/base                            # later: same scenario, up to 5 minutes (asks first)
  rtload check /srv/base --trust-baseline --threshold 5% --metric 'mean per-call cost'
  rtload check /srv/base laight-450 --set traffic[0].size=9000
  rtload check /srv/unhard --as laight-450-hardened --trust-baseline   # the other boot of the A/B
  rtload check /srv/base --trust-baseline --format json | jq .verdict`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.run.given(cmd)
			return runCheck(cmd, args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.threshold, "threshold", "3%", "the change tolerated, in % of the baseline")
	fl.StringVar(&f.control, "control", string(verdict.ControlNull), controlUsage)
	fl.StringArrayVar(&f.metrics, "metric", nil, "judge this headline metric, by name as compare prints it (repeatable); default each column's primary metric")
	fl.DurationVar(&f.budget, "budget", verdict.DefaultBudget, "the most time the new run may take: fresh processes are added until the verdict is decided or the next would pass it (then undecided, 125)")
	fl.IntVar(&f.looks, "looks", verdict.DefaultLooks, "how many times the verdict is looked at within the budget (Pocock's boundary keeps the false-alarm rate at 5% over them)")
	fl.StringSliceVar(&f.labels, "label", []string{"baseline", "new"}, "names of the two runs' columns")
	fl.StringVar(&f.format, "format", "text", "output format: text or json (schema rtload-check, see docs/results.md)")
	fl.StringVar(&f.run.ov.Duration, "duration", "", "measured time per trial (overrides the scenario's)")
	fl.IntVar(&f.run.repeat, "repeat", 0, "rounds per process (overrides the scenario's)")
	fl.StringArrayVar(&f.run.ov.Sets, "set", nil, "override a scenario field: path=value (repeatable)")
	fl.StringVar(&f.run.out, "out", "", "results directory of the new run, kept: a new path, or an empty directory of yours (default: a temporary directory, removed at the end unless --keep)")
	fl.BoolVar(&f.keep, "keep", false, "keep the new run's temporary results directory (without --out it is removed once the verdict is printed)")
	fl.BoolVar(&f.run.allowDegraded, "allow-degraded", false, "run without missing privileges: the results are degraded, so the verdict is 125")
	fl.BoolVar(&f.run.noWakeupLog, "no-wakeup-log", false, "do not write the per-wakeup CSV logs (wakeup metrics then need rounds ≥ 2 for a CI)")
	levelFlags(cmd, &f.run.quiet, &f.run.verbose)
	fl.StringVar(&f.run.appendTo, "append", "", "add the new run as a session to the sessions directory CAND (made when new) and judge the baseline against all of CAND's sessions, the session the unit: a check after each boot of the candidate (run --append's rules)")
	fl.StringVar(&f.as, "as", "", "run the baseline's own scenario (its --set overrides kept) as its counterpart SCENARIO: that scenario's name and requires: in place of the baseline's, for the other side of a boot A/B (laight-450-hardened for an -unhardened baseline)")
	fl.BoolVar(&f.trust, "trust-baseline", false, "run the baseline's own scenario without asking: needed when the baseline is not yours or stdin is not a terminal")
	cpuBudgetFlag(cmd, &f.cpuBudget)
	autoFlags(cmd, &f.run)
	return cmd
}

// runCheck is rtload check: parse, read the baseline, run the new
// processes with the check looking after each one (verdict.Check), print
// the verdict and exit with its code.
func runCheck(cmd *cobra.Command, args []string, f checkFlags) error {
	sw := session.WatchSignals(cmd.ErrOrStderr())
	opt, err := checkOptions(f, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	cpu := startBudget(cmd.ErrOrStderr(), "check", f.cpuBudget)
	defer cpu.end()
	// A sessions directory (run --append) is judged whole, the session
	// the unit; its first session's summary holds the scenario it runs.
	first := args[0]
	if results.IsSessions(args[0]) {
		_, dirs, err := results.ReadSessions(args[0])
		if err == nil && len(dirs) == 0 {
			err = errors.New("no session yet")
		}
		if err != nil {
			return usageError{Err: fmt.Errorf("baseline: %w", err)}
		}
		first = dirs[0]
	}
	base, bst, err := results.ReadSummaryStat(first)
	if err != nil {
		return usageError{Err: fmt.Errorf("baseline: %w", err)}
	}
	if f.run.appendTo != "" && results.IsSessions(f.run.appendTo) {
		prior, err := compare.Load([]string{f.run.appendTo}, f.labels[1:])
		if err != nil {
			return usageError{Err: fmt.Errorf("--append: %w", err)}
		}
		opt.Prior = &prior[0]
	}
	// Usage first (exit 2 whatever the baseline holds), then the baseline:
	// one that cannot be judged against makes running pointless.
	if err := verdict.CheckMetrics(compare.Run{Label: opt.Labels[0], Summary: base}, opt.Options); err != nil {
		return usageError{Err: fmt.Errorf("--metric: %w", err)}
	}
	baseRuns, err := compare.Load([]string{args[0]}, f.labels[:1])
	if err != nil {
		return usageError{Err: fmt.Errorf("baseline: %w", err)}
	}
	c := verdict.NewCheck(baseRuns[0], opt)
	var stopped error
	if !c.Done() {
		remove, stop, err := runChecked(cmd, sw, cpu, args, f, c, base, first, bst.Foreign())
		if err != nil {
			return err
		}
		defer remove() // once the verdict is printed
		stopped = stop
	}
	return writeCheck(cmd.OutOrStdout(), f, c, stopped)
}

// checkOptions are the check's options from its flags; a usage error
// names the flag.
func checkOptions(f checkFlags, log io.Writer) (verdict.CheckOptions, error) {
	var opt verdict.CheckOptions
	if f.format != "text" && f.format != "json" {
		return opt, usageError{Err: fmt.Errorf("--format %q: allowed text, json", f.format)}
	}
	if _, err := levelOf(f.run.quiet, f.run.verbose); err != nil {
		return opt, err
	}
	if err := compare.CheckLabels([]string{"a", "b"}, f.labels); err != nil {
		return opt, usageError{Err: fmt.Errorf("--label: %w", err)}
	}
	thr, err := session.ParsePercent("threshold", f.threshold)
	if err != nil {
		return opt, err
	}
	if f.budget <= 0 || f.looks < 1 || f.looks > verdict.MaxLooks {
		return opt, usageError{Err: fmt.Errorf("--budget %v, --looks %d: a budget above 0 and 1–%d looks", f.budget, f.looks, verdict.MaxLooks)}
	}
	ctl, err := verdict.ParseControl(f.control)
	if err != nil {
		return opt, usageError{Err: err}
	}
	return verdict.CheckOptions{Options: verdict.Options{Threshold: thr, Metrics: f.metrics, Control: ctl}, Labels: [2]string{f.labels[0], f.labels[1]},
		Budget: f.budget, Looks: f.looks, Log: log}, nil
}

// runChecked runs the new processes for check c (after the consent a
// baseline's own scenario needs), into --out or a temporary directory,
// and ends c on what they gave. remove removes the temporary directory
// (call it once the verdict is printed); stopped is the error of a run
// stopped by a signal; err one before anything ran.
func runChecked(cmd *cobra.Command, sw *session.Watch, cpu *cpuBudget, args []string, f checkFlags, c *verdict.Check, base *results.Summary, baseDir, foreign string) (remove func(), stopped, err error) {
	spec, err := checkSpec(cmd.ErrOrStderr(), args, base, f.as, baseDir)
	if err != nil {
		return nil, nil, err
	}
	// The new run is processes, one after the other (the check stops
	// them), and never profiled (profiles need one process).
	f.run.ov.Check, f.run.ov.CheckProcesses = true, verdict.MaxProcesses
	p, err := session.NewPlan(spec, f.run.ov)
	if err != nil {
		return nil, nil, err
	}
	spec, trials := p.Spec, p.Trials
	// A boot that is not the side the scenario needs is refused before
	// anything is asked or run (execute would refuse it too).
	if !f.run.allowDegraded {
		facts := sysinfo.Gather()
		facts.ReadKernelConfig(spec.Requires.ConfigNames())
		if unmet := engine.Requirements(spec.Requires, &facts); len(unmet) > 0 {
			return nil, nil, session.RequirementFix(&engine.RequirementsError{Scenario: spec.File, Unmet: unmet}, args[0], base, f.as)
		}
	}
	// The budget bounds every process, the first included: one that
	// cannot fit is refused before anything runs, and the first process
	// is stopped when the budget runs out (after it the looks' schedule
	// never starts a process that would pass it).
	if least := scenario.MeasuredTime(trials); least >= f.budget {
		return nil, nil, usageError{Err: fmt.Errorf("--budget %v: one process of this plan runs at least %v (%d trials: their durations and warm-ups, setup on top), so not one fits: give a --budget above it, or a shorter --duration",
			f.budget, least, len(trials))}
	}
	if len(args) == 1 { // the baseline's own scenario: data, not orders (trust.go)
		tty := term.IsTerminal(int(os.Stdin.Fd()))
		if err := session.ConsentBaseline(cmd.ErrOrStderr(), cmd.InOrStdin(), args[0], foreign, spec, trials, tty, f.trust); err != nil {
			return nil, nil, err
		}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "check: up to %v of fresh processes (%d trials each), the verdict looked at %d times; baseline: %d processes\n",
		f.budget, len(trials), f.looks, c.BaselineProcesses())
	if c.BaselineDropped != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "check: "+c.BaselineDropped.Line(true))
	}
	if c.Sizing != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), c.Sizing.Line("check: sizing"))
	}
	tmp := ""
	var sess *results.Sessions
	if f.run.appendTo != "" {
		if f.run.out != "" {
			return nil, nil, usageError{Err: errors.New("--append and --out: give one (--append CAND writes the session into CAND/sNNN)")}
		}
		if sess, err = session.OpenAppend(f.run.appendTo, spec, sysinfo.Gather()); err != nil {
			return nil, nil, err
		}
		defer sess.Close()
		if n, m := len(sess.Index.Sessions), c.PriorSessions(); n != m {
			return nil, nil, fmt.Errorf("--append %s: its sessions changed (%d, read %d) while the check started: run it again", f.run.appendTo, n, m)
		}
		if f.run.out, err = sess.Next(); err != nil {
			return nil, nil, err
		}
	}
	if f.run.out == "" {
		if tmp, err = os.MkdirTemp("", "rtload-check-"+spec.Name+"-"); err != nil {
			return nil, nil, err
		}
		// The verdict is the answer; the new run's results are kept only
		// when asked for (--keep, --out).
		f.run.out, c.ResultsRemoved = tmp, !f.keep
	}
	cpu.pause() // the run's own CPU time is not reading
	opts := f.run.options(cmd.ErrOrStderr(), cmd.ErrOrStderr())
	opts.FirstProcessLimit, opts.AfterProcess = f.budget, c.After
	o, err := session.Execute(sw, p, opts)
	cpu.resume()
	if sess != nil {
		if aerr := session.EndAppend(cmd.ErrOrStderr(), sess, f.run.out, o); aerr != nil {
			err = errors.Join(err, aerr)
		}
	}
	if errors.As(err, new(*engine.RequirementsError)) {
		if tmp != "" {
			os.Remove(tmp)
		}
		// This boot is not the side the scenario needs: the user's to fix
		// (--as, or another boot), not the kernel's to be judged.
		return nil, nil, session.RequirementFix(err, args[0], base, f.as)
	}
	remove = func() {}
	switch {
	case tmp != "" && (err != nil || o.Sum == nil):
		os.Remove(tmp) // empty: nothing ran
	case tmp != "" && !f.keep:
		remove = func() { removeCheckResults(cmd.ErrOrStderr(), tmp) }
	}
	stopped, err = endCheck(c, o, err)
	return remove, stopped, err
}

// endCheck ends check c on its run's outcome o (err: the run could not
// start): the verdict on the new run, or cannot judge when it failed (a
// missing privilege or requirement, a failed run or save). stopped is
// the run's error when a signal stopped it (c's exit code is then the
// signal's); err an error before anything ran.
func endCheck(c *verdict.Check, o session.Outcome, err error) (stopped, _ error) {
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
	if errors.As(o.RunErr, new(session.BudgetSpent)) && o.SaveErr == nil {
		// Not interrupted: the budget stopped the first process, and
		// nothing can be judged (125).
		c.Fail(o.RunErr, false)
		return nil, nil
	}
	if err := errors.Join(o.RunErr, o.SaveErr); err != nil {
		c.Fail(err, errors.Is(err, rt.ErrNoPrivilege) || errors.Is(err, rt.ErrNotSupported))
		if errors.Is(err, engine.ErrStopped) {
			c.Interrupted(session.InterruptedCode(err))
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

// checkSpec is the scenario to run: SCENARIO when given (a file or a
// built-in name), else the baseline's own, as its summary.json recorded
// it (in baseDir: the baseline, or a sessions directory's first session),
// under the counterpart as's requirements when given (asCounterpart, which
// says on w what it kept and took).
func checkSpec(w io.Writer, args []string, base *results.Summary, as, baseDir string) (*scenario.Spec, error) {
	if len(args) == 2 {
		if as != "" {
			return nil, usageError{Err: fmt.Errorf("--as %s and SCENARIO %s: give one (--as keeps the baseline's scenario and overrides, SCENARIO runs that scenario as it is)", as, args[1])}
		}
		return session.ReadSpec(args[1])
	}
	if as != "" {
		return session.AsCounterpart(w, args[0], base, as)
	}
	if len(base.Spec) == 0 {
		return nil, usageError{Err: fmt.Errorf("baseline %s records no scenario: name one (rtload check DIR SCENARIO)", args[0])}
	}
	return scenario.LoadAsRun(filepath.Join(baseDir, results.SummaryFile)+" (spec)", base.Spec)
}

// writeCheck prints c's report and returns the error its exit code
// stands for: the verdict's (verdict.Verdict.ExitCode), or a stopped
// run's, whose error stays its cause (main still sees its signal).
func writeCheck(w io.Writer, f checkFlags, c *verdict.Check, stopped error) error {
	level, _ := levelOf(f.run.quiet, f.run.verbose) // checked in checkOptions
	if err := c.Report.Write(w, f.format, level); err != nil {
		return err
	}
	switch {
	case stopped != nil:
		return exitError{Code: c.ExitCode, Msg: stopped.Error(), Cause: stopped}
	case c.ExitCode != verdict.ExitNotSlower:
		return exitError{Code: c.ExitCode}
	}
	return nil
}
