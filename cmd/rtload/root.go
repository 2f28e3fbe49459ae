package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/session"
	"github.com/rtload/rtload/sysinfo"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "rtload",
		Short: "Real-time, pinned-thread load generator for Linux kernel performance work",
		Long: `rtload builds a YAML scenario for real (UDP socket fanout on loopback, paced
senders, SCHED_FIFO readers pinned to a CPU and waking on absolute ticks,
background noise), times every recv call with the TSC (or CLOCK_MONOTONIC),
logs the latency of every wakeup, and prints per-call histograms side by side.

Exit codes: 0 ok, 1 run failed, 2 usage or invalid scenario,
3 missing privilege or unsupported, 129 stopped by SIGHUP (a closed terminal
or ssh session), 130 interrupted (SIGINT or SIGTERM), 131 stopped by
SIGQUIT (then the goroutine stacks are printed); a stopped run still writes
its results. With --strict (run, report), 4: the run completed but was not
the run asked for (degraded, a trial invalid, a reader starved, traffic not
as specified); without it such a run exits 0 and its closing block says so.
Gates (check, compare --fail-on): 0 proven not slower, 1 proven slower,
125 undecided or cannot judge.

Every command that measures or judges (run, report, compare, check,
explain) ends on a closing block of 3 to 8 lines: the answer. By default
it prints what a person reads; -v everything, -q only the closing block.
Every command takes --format json; a file written is named on stderr.`,
		Example: `  rtload run                         # the default scenario (seed 000, laight-450)
  rtload run configs/laight-450.yaml --duration 2s --set readers[0].cpu=0
  rtload validate my.yaml
  rtload list
  rtload env --format json
  rtload check results/base       # exit 0 not slower, 1 slower, 125 undecided (git bisect run)`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version without cobra's -v: before a command, -v would print the
	// version and exit 0 (git bisect run: good) where the user meant the
	// command's -v (verbose); now it is a usage error naming -v.
	root.Flags().Bool("version", false, "print rtload's version")
	root.AddCommand(newRunCmd(), newValidateCmd(), newListCmd(), newEnvCmd(), newReportCmd(), newCleanupCmd(), newPlotCmd(), newCompareCmd(), newExplainCmd(), newCheckCmd(), newProcessCmd())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{Err: err} })
	root.Args = cobra.NoArgs // an unknown command is a usage error (exit 2)
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.Args = usageArgs(root.Args)
	for _, c := range root.Commands() {
		if c.Args != nil {
			c.Args = usageArgs(c.Args)
		}
	}
	return root
}

func newValidateCmd() *cobra.Command {
	var sets []string
	var allowDegraded bool
	var format string
	cmd := &cobra.Command{
		Use:   "validate FILE|NAME",
		Short: "Check a scenario and print every problem with file:line:col",
		Long: `Validate checks a scenario as run would, without running it: every problem
with file:line:col (exit 2), decode and value problems alike in one list;
fixed CPUs against the CPUs this process may use; the CPU each cpu: auto
reader would get; and the scenario's requires: block against this machine
(kernel config, command line, kernel version, features), listing every
unmet requirement and how to meet it (exit 3, or with --allow-degraded only
listed).`,
		Example: `  rtload validate configs/laight-450.yaml
  rtload validate laight-450 --set readers[0].priority=99
  rtload validate my.yaml --format json | jq -r '.problems[] | "\(.line):\(.col) \(.msg)"'
  rtload validate cook-hackbench-init-on-free --allow-degraded`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			doc, err := session.Validate(args[0], sets, allowDegraded)
			if err != nil {
				doc.ExitCode = exitCodeOf(err)
			}
			if format == "json" {
				if werr := compare.WriteJSON(cmd.OutOrStdout(), doc); werr != nil {
					return werr
				}
				return err
			}
			if err != nil {
				return err
			}
			_ = doc.Text(cmd.OutOrStdout()) // as ever, a failed write to stdout does not fail validate
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field: path=value (repeatable)")
	cmd.Flags().BoolVar(&allowDegraded, "allow-degraded", false, "list unmet requirements instead of refusing (a run would mark its results degraded)")
	formatFlag(cmd, &format, textJSON, "schema "+SchemaValidate+": ok, every problem with file, line, col, path, msg and allowed, unmet requirements")
	return cmd
}

func newListCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios with one-line descriptions",
		Example: `  rtload list
  rtload list --format json | jq -r '.scenarios[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			doc := session.List()
			if format == "json" {
				return compare.WriteJSON(cmd.OutOrStdout(), doc)
			}
			return doc.Text(cmd.OutOrStdout())
		},
	}
	formatFlag(cmd, &format, textJSON, "schema "+SchemaList+": every built-in scenario's name and description")
	return cmd
}

func newEnvCmd() *cobra.Command {
	var format string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Print the machine facts every result records (kernel, CPU, clocks, counters, privileges, hardening)",
		Long: `Env prints what every result records about the machine: kernel, CPU
model and count, clocksource, TSC flags, which counters work (perf cycles,
task-clock, TSC, CLOCK_MONOTONIC), capabilities held, RLIMIT_RTPRIO and
RLIMIT_MEMLOCK, sched_rt_runtime_us, isolcpus/nohz_full, hardening flags
from /proc/cmdline (init_on_alloc, init_on_free, mitigations, …) and from
the kernel config when readable (CONFIG_HARDENED_USERCOPY, preemption
model, CONFIG_HZ), microcode, the CPU vulnerabilities and their
mitigations (/sys/devices/system/cpu/vulnerabilities), the cpuidle driver
and governor. --format json (or --json) prints them as summary.json's env
holds them.`,
		Example: `  rtload env
  rtload env --format json > env.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				if cmd.Flags().Changed("format") && format != "json" {
					return usageError{Err: fmt.Errorf("--json and --format %s: give one", format)}
				}
				format = "json"
			}
			if err := checkFormat(format); err != nil {
				return err
			}
			f := sysinfo.Gather()
			if format == "json" {
				return compare.WriteJSON(cmd.OutOrStdout(), f)
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), f.Text())
			return err
		},
	}
	formatFlag(cmd, &format, textJSON, "the facts as summary.json's env holds them")
	cmd.Flags().BoolVar(&asJSON, "json", false, "same as --format json")
	return cmd
}

// usageArgs marks argument-count errors as usage errors (exit 2).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{Err: err}
		}
		return nil
	}
}

// newProcessCmd is the hidden command a multi-process run re-executes
// itself with, once per process (session.RunChild).
func newProcessCmd() *cobra.Command {
	return &cobra.Command{
		Use:    session.ProcessCommand,
		Short:  "one process of a multi-process run (internal: rtload run --processes starts it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return session.RunChild(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}
