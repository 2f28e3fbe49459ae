package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/session"
)

func newExplainCmd() *cobra.Command {
	var format string
	var budget time.Duration
	var quiet, verbose bool
	cmd := &cobra.Command{
		Use:   "explain DIR",
		Short: "Say what makes up each per-call peak, the tail and the wakeup spikes of a results directory",
		Long: `Explain finds the modes (peaks) of each reader's per-call histogram and
attributes each to the calls that make it up: data, warm EAGAIN (the socket
returned data earlier in the same drain), cold EAGAIN (nothing on it that
tick), and the first calls after a wakeup against the later ones. It does
the same for the tail (calls at or above the 99th percentile) and the
overflow bucket, and lists what coincided with the wakeup-latency spikes of
the per-wakeup log (overruns, context switches, noise state). Every
sentence carries its count and share; where nothing recorded explains
something, it says so.

On a profiled run (rtload run --profile) it then says where in the kernel
the time goes: each profiled variant's samples, the profiler's cost
(per-call p50 in the profiled trials against the timed ones), and for each
variant against the first the kernel functions whose share of the drain
differs, in ns per call with sample counts and 95% intervals, where in the
call tree the difference sits, and the known hardening or debug hook
behind a function with whether its kernel option is on.

Each spike is set against the machine too, where the kernel tells it: the
steal time and interrupts the reader's CPU counted in the spike's window
(the writer's 50 ms polls of /proc/stat, /proc/interrupts and
/proc/softirqs) against that CPU's usual rate, the preemption model and
whether this is a VM. "Nothing recorded explains" comes only after these,
and says what was checked and what cannot be seen from the results.

By default it prints a few lines per reader and trial, -v every sentence,
-q only the closing block: the spikes' causes with their share, and the
per-call tail's make-up.`,
		Example: `  rtload explain rtload-results/laight-450-20261130-101500
  rtload explain rtload-results/laight-450-20261130-101500 --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			level, err := levelOf(quiet, verbose)
			if err != nil {
				return err
			}
			defer session.StartBudget(cmd.ErrOrStderr(), "explain", budget).End()
			doc, err := session.Explain(args[0])
			if err != nil {
				return err
			}
			if format == "json" {
				return compare.WriteJSON(cmd.OutOrStdout(), doc)
			}
			return session.WriteExplain(termsafe.Writer(cmd.OutOrStdout()), doc, level)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json (schema rtload-explain, see docs/results.md)")
	cpuBudgetFlag(cmd, &budget)
	levelFlags(cmd, &quiet, &verbose)
	return cmd
}
