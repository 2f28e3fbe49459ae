package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare/auto"
	"github.com/rtload/rtload/configs"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/session"
)

type runFlags struct {
	// ov are the scenario's overrides; repeat and processes are read
	// into it when given (--repeat 0 is refused, not ignored).
	ov            session.Overrides
	repeat        int
	processes     int
	metricsAddr   string
	out           string
	allowDegraded bool
	noWakeupLog   bool
	taskPerf      bool
	quiet         bool
	verbose       bool
	// strict (--strict) makes a run that was not the run asked for exit
	// ExitNotAsAsked.
	strict bool
	format string
	// appendTo (--append BASE) makes the run a new session of the
	// sessions directory BASE (store.Sessions).
	appendTo string
}

// given reads into f.ov the flags whose zero value is a value: --repeat
// and --processes when cmd was given them, and which of rounds: auto's
// flags it was given.
func (f *runFlags) given(cmd *cobra.Command) {
	if cmd.Flags().Changed("repeat") {
		f.ov.Repeat = &f.repeat
	}
	if cmd.Flags().Lookup("processes") != nil && cmd.Flags().Changed("processes") {
		f.ov.Processes = &f.processes
	}
	for _, n := range []string{"precision", "max-rounds", "max-time"} {
		if cmd.Flags().Changed(n) {
			f.ov.Auto.Given = append(f.ov.Auto.Given, "--"+n)
		}
	}
}

// options are the session's options from f, the plan printed to plan.
func (f *runFlags) options(plan, errw io.Writer) session.Options {
	return session.Options{Out: f.out, AllowDegraded: f.allowDegraded, NoWakeupLog: f.noWakeupLog, TaskPerf: f.taskPerf,
		Quiet: f.quiet, MetricsAddr: f.metricsAddr, Plan: plan, Log: errw}
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [FILE|NAME]",
		Short: "Run a scenario for real and print the per-call and wakeup-latency tables",
		Long: `Run builds the scenario (sockets, senders, real-time readers, noise), runs
every variant in alternating order for the scenario's rounds, writes a
results directory (summary.json and one per-wakeup CSV per reader and trial)
and prints the seed's table: per-call histograms, one column per variant.

Without an argument it runs the built-in default scenario (laight-450, seed
000). NAME is a built-in scenario (see rtload list); FILE a YAML file.
The argument is a file when a path of that name exists and is not a
directory, else a built-in name: a directory ./laight-450/ does not hide
the built-in laight-450.
Ctrl-C (SIGINT) or SIGTERM stops the run early and still writes complete
results for every trial that ran (exit 130); so do SIGHUP, a closed
terminal or ssh session (exit 129), and SIGQUIT (exit 131, then the
goroutine stacks).

--profile (or profile: in the scenario) follows each variant's trial with a
profiled twin whose reader threads are sampled with perf_event_open
(cpu-clock, or cycles where a PMU counts them; kernel and user call chains):
the timed histograms are never measured under the sampler. It writes
profile-<variant>.pb.gz (go tool pprof) and .folded (flamegraph.pl) per
variant; rtload explain DIR then says which kernel functions carry each
variant's extra cost per call.`,
		Example: `  rtload run
  rtload run laight-450 --duration 2s
  rtload run configs/laight-450.yaml --set readers[0].cpu=0 --set noise[0].threads=2
  rtload run my.yaml --out /tmp/res --allow-degraded
  rtload run laight-450 --profile --duration 3s && rtload explain rtload-results/laight-450-*`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := configs.Default
			if len(args) == 1 {
				name = args[0]
			}
			f.given(cmd)
			return runScenario(cmd, name, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.ov.Duration, "duration", "", "measured time per trial, a Go duration up to 24h, or forever (a soak run until Ctrl-C, its logs rotated: for anything longer)")
	fl.StringVar(&f.ov.Interval, "interval", "", "emit an interval record every D (intervals.jsonl, a live line); default 10s for soak runs")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (loopback only, e.g. 127.0.0.1:9100)")
	fl.IntVar(&f.repeat, "repeat", 0, "run the whole scenario N times (variants alternating inside each repeat); same as --set rounds=N")
	fl.StringArrayVar(&f.ov.Sets, "set", nil, "override a scenario field: path=value, e.g. readers[0].cpu=0 (repeatable); a field a variant sets is refused (the variant's value would run)")
	fl.StringVar(&f.out, "out", "", "results directory: a new path, or an empty directory of yours not writable by others (default rtload-results/<scenario>-<timestamp>; $RTLOAD_RESULTS replaces rtload-results)")
	fl.StringVar(&f.appendTo, "append", "", "add this run as a new session (one boot, or one sitting) to the sessions directory BASE (made when new): BASE/sNNN plus its index; refused when the scenario (but processes, rounds), the kernel, its command line or the machine differ from BASE's first session; compare and check pool BASE's sessions")
	fl.BoolVar(&f.allowDegraded, "allow-degraded", false, "run without missing privileges (SCHED_OTHER, unpinned, unlocked memory) or unmet requirements, and mark results degraded")
	fl.BoolVar(&f.noWakeupLog, "no-wakeup-log", false, "do not write the per-wakeup CSV logs")
	fl.BoolVar(&f.taskPerf, "task-perf-counters", false, "count the reader threads' context switches, faults and CPU time with task-bound perf events instead of procfs (they add a few µs to every wakeup latency; results say so)")
	levelFlags(cmd, &f.quiet, &f.verbose)
	strictFlag(cmd, &f.strict)
	fl.StringVar(&f.format, "format", "text", "report format: text or json (schema rtload-report, see docs/results.md; the plan then goes to stderr)")
	autoFlags(cmd, &f)
	fl.BoolVar(&f.ov.Profile, "profile", false, "add a profiled trial after each variant's trial (kernel and user call chains of the readers); same as --set profile.enabled=true")
	processesFlag(cmd, &f)
	return cmd
}

// processesFlag adds --processes to cmd.
func processesFlag(cmd *cobra.Command, f *runFlags) {
	cmd.Flags().IntVar(&f.processes, "processes", 0, "run the whole plan in N fresh processes one after the other, setup randomised, so that verdicts have independent samples (n = processes × rounds); same as --set processes=N")
}

// autoFlags adds --rounds and rounds: auto's --precision, --max-rounds
// and --max-time to cmd.
func autoFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.ov.Rounds, "rounds", "", "rounds: a count, or auto (alternate the variants until the 95% CI of the headline difference is within --precision); same as --set rounds=…")
	fl.StringVar(&f.ov.Auto.Precision, "precision", "2%", "rounds: auto: stop once the 95% CI of the headline difference is within ± this much of the baseline")
	fl.IntVar(&f.ov.Auto.MaxRounds, "max-rounds", auto.DefaultMaxRounds, "rounds: auto: stop after this many rounds")
	fl.DurationVar(&f.ov.Auto.MaxTime, "max-time", 0, "rounds: auto: stop before a round that would end past this long into the run (0: no limit)")
}

func runScenario(cmd *cobra.Command, name string, f runFlags) error {
	sw := session.WatchSignals(cmd.ErrOrStderr())
	if err := checkFormat(f.format); err != nil {
		return err
	}
	level, err := levelOf(f.quiet, f.verbose)
	if err != nil {
		return err
	}
	p, err := session.Load(name, f.ov)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	plan := out
	switch {
	case f.format == "json":
		plan = cmd.ErrOrStderr()
	case level == report.Quiet:
		plan = io.Discard
	}
	o, err := session.Run(sw, p, f.options(plan, cmd.ErrOrStderr()), f.appendTo)
	if err != nil {
		return err
	}
	return session.WriteOutcome(out, o, f.format, level, f.strict)
}
