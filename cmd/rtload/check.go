package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/session"
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

// checkLong is rtload check --help's text (docs/cli and the man page
// are generated from it).
const checkLong = `check runs a scenario (by default the baseline's own, as its summary.json
recorded it, --set overrides included) in fresh processes, one after the
other (each re-executes rtload with its setup randomised), compares the new
results with the baseline's after planned looks and exits:

  0    proven not slower: every judged metric's whole confidence interval
       lies below +threshold, and the tail guard holds nothing (below)
  1    proven slower: a judged metric's whole interval lies beyond
       +threshold (not only its mean), or a tail metric's beyond +100%
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
replaced: the run never passes; the check samples on and exits 1 when a
look proves it slower, 125 otherwise (at once when a reader measured
nothing). Before the first new process, check prints the smallest
slowdown it can find from the baseline's noise, raw and adjusted on the
drift control it judges with.

--as COUNTERPART runs the baseline's own scenario, its --set overrides
kept, under the counterpart's name and requires:, for the other boot of an
A/B (a laight-450-unhardened baseline on a hardened_usercopy=on boot: --as
laight-450-hardened). A counterpart differs from the baseline's scenario
only in name, description and requires: (shipped: laight-450-hardened/
-unhardened, cook-hackbench-init-off/-on-alloc/-on-free); check says which
overrides it kept, and refuses a scenario that differs in more.

The samples are processes, never calls: each interval is Student's t on
the log values of per-process means (n = processes × rounds), so the
baseline should come from rtload run --processes N (run says how many
processes detect a 5% or 10% change at the noise it saw; with one baseline
process its between-process noise is borrowed from the new run's and the
verdict is mostly undecided). By default the judged metrics are each
column's primary one (mean per-call cost; wakeup latency p99 for a
timer-only reader) and, for the tail guard, its wakeup latency p99 and
each reader's spike rate (wakeups later than its threshold, or 1 ms, per
hour), held at a 5% family-wise false-alarm rate. The tail guard never
proves a tail not slower: a tail metric proven more than doubled is
slower (exit 1); one proven higher, or a wakeup p99 measured beyond
+100%, holds the gate undecided (125); otherwise it holds nothing.

Each reader times drift controls in every tick (readers[].controls: a
null syscall, a user-space loop, a loopback datagram through its recv
call): the machine's change between baseline and check moves them with
the recv calls. A per-call cost is judged adjusted on the null syscall
(θ estimated within each side, never assumed 1), θ, r and the raw change
beside it, and a "machine" line gives each control's own change. When
the null syscall moves over 10% beyond what the loop predicts (the
system-call entry changed: a mitigation, a seccomp filter), the raw
change is judged, and the output says so. --control none judges the raw
change (no guard), loop adjusts on the user loop, recv on the recv control
(only for a change outside the kernel's recv path, which moves it too).
When the machine line's loop excludes 0 (it makes no system call: the
machine's speed moved), a per-call verdict stands only if its change net
of the loop's reads the same; else it is undecided (the machine guard).

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
and runs nothing. Naming a scenario (check DIR SCENARIO) needs neither.`

func newCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check BASELINE_DIR [SCENARIO]",
		Short: "Run the baseline's scenario again in fresh processes and gate on it: exit 0 not slower, 1 slower, 125 undecided",
		Long:  checkLong,
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
	cpu := session.StartBudget(cmd.ErrOrStderr(), "check", f.cpuBudget)
	defer cpu.End()
	r := f.request(cmd, args, cpu)
	c, err := session.OpenCheck(r, opt)
	if err != nil {
		return err
	}
	var stopped error
	if !c.Done() {
		remove, stop, err := r.Run(sw, c)
		if err != nil {
			return err
		}
		defer remove() // once the verdict is printed
		stopped = stop
	}
	return writeCheck(cmd.OutOrStdout(), f, c, stopped)
}

// request is the session's check from f and the arguments; cpu is the
// budget the new run pauses.
func (f checkFlags) request(cmd *cobra.Command, args []string, cpu *session.CPUBudget) *session.CheckRun {
	errw := cmd.ErrOrStderr()
	r := &session.CheckRun{Baseline: args[0], As: f.as, Trust: f.trust, Keep: f.keep, Append: f.run.appendTo, Labels: f.labels,
		Budget: f.budget, Looks: f.looks, Overrides: f.run.ov, Options: f.run.options(errw, errw), In: cmd.InOrStdin(),
		Pause: cpu.Pause, Resume: cpu.Resume}
	if len(args) == 2 {
		r.Scenario, r.Named = args[1], true
	}
	return r
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
	if err := load.CheckLabels([]string{"a", "b"}, f.labels); err != nil {
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
