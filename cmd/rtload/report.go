package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
)

func newReportCmd() *cobra.Command {
	var format string
	var budget time.Duration
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Print the terminal report of a results directory again",
		Example: `  rtload report results/laight-450-20261130-101500
  rtload report results/laight-450-20261130-101500 --format json | jq '.metrics[0]'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			defer startBudget(cmd.ErrOrStderr(), "report", budget).end()
			if format == "json" {
				runs, err := compare.Load(args, nil)
				if err != nil {
					return usageError{err}
				}
				doc, err := compare.NewRunReport(runs[0])
				if err != nil {
					return err
				}
				return compare.WriteJSON(cmd.OutOrStdout(), doc)
			}
			s, err := results.ReadSummary(args[0])
			if err != nil {
				return usageError{err}
			}
			out := termsafe.Writer(cmd.OutOrStdout())
			if err := report.Report(out, s); err != nil {
				return err
			}
			return compare.WriteInterleaved(out, s)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json (schema rtload-report, see the README)")
	cpuBudgetFlag(cmd, &budget)
	return cmd
}
