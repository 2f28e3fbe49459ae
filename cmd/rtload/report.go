package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/session"
)

func newReportCmd() *cobra.Command {
	var format string
	var budget time.Duration
	var quiet, verbose, strict bool
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Print the terminal report of a results directory again",
		Long: `Report prints a results directory as run printed it: by default what a
person reads (the seed's table, the headline statistics, the marks), with
-v everything the results hold, with -q only the closing block. The
closing block is last at every level: each variant's headline figure, the
change of every other variant against the first with its interval, the
marks, the results directory. A checkpoint (a run killed, or one whose
final summary could not be written) is flagged *** INCOMPLETE.

Of several processes, it says which the machine disturbed (a check
leaves them out) and that every figure is over all of them ("replaced"
in the JSON, numbered from 0).`,
		Example: `  rtload report rtload-results/laight-450-20261130-101500
  rtload report rtload-results/laight-450-20261130-101500 -v
  rtload report rtload-results/laight-450-20261130-101500 --format json | jq '.metrics[0]'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			level, err := levelOf(quiet, verbose)
			if err != nil {
				return err
			}
			defer session.StartBudget(cmd.ErrOrStderr(), "report", budget).End()
			if format == "json" {
				doc, err := session.ReadRunReport(args[0])
				if err != nil {
					return err
				}
				if err := compare.WriteJSON(cmd.OutOrStdout(), doc); err != nil {
					return err
				}
				return session.StrictExit(strict, doc.Summary)
			}
			s, err := store.ReadSummary(args[0])
			if err != nil {
				return usageError{Err: err}
			}
			if err := session.WriteRun(cmd.OutOrStdout(), s, args[0], "", level); err != nil {
				return err
			}
			return session.StrictExit(strict, s)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json (schema rtload-report, see docs/results.md)")
	cpuBudgetFlag(cmd, &budget)
	levelFlags(cmd, &quiet, &verbose)
	strictFlag(cmd, &strict)
	return cmd
}
