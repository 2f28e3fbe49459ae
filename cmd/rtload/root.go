package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/configs"
	"github.com/rtload/rtload/internal/cpulist"
	"github.com/rtload/rtload/scenario"
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
3 missing privilege or unsupported, 130 interrupted (results still written).
Gates (check, compare --fail-on): 0 pass, 1 slower, 125 cannot judge.`,
		Example: `  rtload run                         # the default scenario (seed 000, laight-450)
  rtload run configs/laight-450.yaml --duration 2s --set readers[0].cpu=0
  rtload validate my.yaml
  rtload list
  rtload env --json
  rtload check results/base       # exit 0 pass, 1 slower, 125 cannot judge (git bisect run)`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCmd(), newValidateCmd(), newListCmd(), newEnvCmd(), newReportCmd(), newCleanupCmd(), newPlotCmd(), newCompareCmd(), newExplainCmd(), newCheckCmd(), newProcessCmd())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
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
	cmd := &cobra.Command{
		Use:   "validate FILE|NAME",
		Short: "Check a scenario and print every problem with file:line:col",
		Long: `Validate checks a scenario as run would, without running it: every problem
with file:line:col (exit 2); fixed CPUs against the CPUs this process may use;
the CPU each cpu: auto reader would get; and the scenario's requires: block
against this machine (kernel config, command line, kernel version,
features), listing every unmet requirement and how to meet it (exit 3, or
with --allow-degraded only listed).`,
		Example: `  rtload validate configs/laight-450.yaml
  rtload validate laight-450 --set readers[0].priority=99
  rtload validate cook-hackbench-init-on-free --allow-degraded`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := loadSpec(args[0], sets)
			if err != nil {
				return err
			}
			trials, err := spec.Expand()
			if err != nil {
				return err
			}
			facts := sysinfo.Gather()
			if _, err := fitMachine(cmd.OutOrStdout(), spec, trials, &facts, allowDegraded); err != nil {
				return err
			}
			if spec.Description != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%s)\n", spec.File, spec.Description)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", spec.File)
			}
			if _, note := spec.InterleaveBlock(); note != "" { // interleave: auto fell back
				fmt.Fprintf(cmd.OutOrStdout(), "note: %s\n", note)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field: path=value (repeatable)")
	cmd.Flags().BoolVar(&allowDegraded, "allow-degraded", false, "list unmet requirements instead of refusing (a run would mark its results degraded)")
	return cmd
}

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the built-in scenarios with one-line descriptions",
		Example: "  rtload list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, e := range configs.List() {
				def := ""
				if e.Name == configs.Default {
					def = " (default)"
				}
				fmt.Fprintf(w, "%s%s\t%s\n", e.Name, def, e.Description)
			}
			return w.Flush()
		},
	}
}

func newEnvCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Print the machine facts every result records (kernel, CPU, clocks, counters, privileges, hardening)",
		Example: `  rtload env
  rtload env --json > env.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := sysinfo.Gather()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(f)
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), f.Text())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	return cmd
}

// loadSpec reads FILE (a path on disk) or NAME (a built-in scenario),
// applies --set overrides and validates for this machine: its CPUs, and
// the CPUs this process may use (taskset, a container's cpuset).
func loadSpec(arg string, sets []string) (*scenario.Spec, error) {
	spec, err := readSpec(arg)
	if err != nil {
		return nil, err
	}
	if err := spec.Apply(sets); err != nil {
		return nil, err
	}
	if err := spec.Validate(thisHost()); err != nil {
		return nil, err
	}
	return spec, nil
}

// thisHost describes this machine for scenario.Validate: its online CPUs
// (/sys/devices/system/cpu/online) and the CPUs this process may use
// (sched_getaffinity(2) of the calling thread). validate and run both use
// it, so they accept and refuse the same CPUs.
func thisHost() scenario.Host {
	var online []int
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		online, _ = cpulist.Parse(string(b))
	}
	return hostFor(online, sysinfo.AllowedCPUs())
}

// hostFor builds the Host from the online CPUs and the affinity mask
// (either nil when unknown). NumCPU is one past the highest online CPU,
// never the size of the mask: runtime.NumCPU counts the mask, so under
// taskset -c 1 it is 1 and CPU 1 would look missing from the host.
// Without the online list it is one past the highest allowed CPU, else
// runtime.NumCPU.
func hostFor(online, allowed []int) scenario.Host {
	n := runtime.NumCPU()
	if len(online) > 0 {
		n = slices.Max(online) + 1
	} else if len(allowed) > 0 {
		n = max(n, slices.Max(allowed)+1)
	}
	return scenario.Host{NumCPU: n, Allowed: allowed}
}

// readSpec loads arg as a file when a path of that name exists and is not
// a directory (scenario.LoadFileLenient then refuses anything but a regular
// file), else as a built-in scenario. Decode problems are held for
// Validate, which every caller runs next, so that they come with every
// other problem of the file in one list. A directory is never a scenario, so
// one named like a built-in (./laight-450/) does not shadow it.
func readSpec(arg string) (*scenario.Spec, error) {
	fi, statErr := os.Stat(arg)
	if statErr == nil && !fi.IsDir() {
		return scenario.LoadFileLenient(arg) // every problem at once: Validate follows
	}
	data, err := configs.Read(arg)
	switch {
	case err != nil && statErr == nil:
		return nil, usageError{fmt.Errorf("%s: a directory, not a scenario file, and %w", arg, err)}
	case err != nil:
		return nil, usageError{fmt.Errorf("%s: not a file, and %w", arg, err)}
	}
	return scenario.LoadLenient("built-in:"+strings.TrimSuffix(arg, ".yaml")+".yaml", data)
}

// usageArgs marks argument-count errors as usage errors (exit 2).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
