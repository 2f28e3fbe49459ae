package main

import (
	"github.com/spf13/cobra"

	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "report DIR",
		Short:   "Print the terminal report of a results directory again",
		Example: "  rtload report results/laight-450-20261130-101500",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := results.ReadSummary(args[0])
			if err != nil {
				return err
			}
			return report.Report(cmd.OutOrStdout(), s)
		},
	}
}
