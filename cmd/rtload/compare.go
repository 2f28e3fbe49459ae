package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
)

func newCompareCmd() *cobra.Command {
	var (
		labels []string
		format string
	)
	cmd := &cobra.Command{
		Use:   "compare DIR [DIR ...]",
		Short: "Compare results directories side by side: seed table, percentiles, change with CI and verdict",
		Long: `compare puts results directories side by side: the per-call histogram table
with one column per (variant, run), per-call and wakeup percentiles, and for
every headline metric the change against the first run, a 95% confidence
interval (Welch's t-test over rounds, or a seeded bootstrap over per-call
samples, stated per metric) and a verdict: faster, slower or within noise.
Runs that differ in scenario, CPU, clocksource, clock, degraded mode or
kernel command line are listed field by field as warnings.`,
		Example: `  rtload compare results/unhard results/hard --label unhard,hard
  rtload compare A B --format json > cmp.json
  rtload compare A B --format markdown`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(compare.Formats, format) {
				return usageError{fmt.Errorf("--format %q: allowed %s", format, strings.Join(compare.Formats, ", "))}
			}
			if len(labels) > 0 {
				if err := compare.CheckLabels(args, labels); err != nil {
					return usageError{err}
				}
			}
			runs, err := compare.Load(args, labels)
			if err != nil {
				return err
			}
			res, err := compare.Compare(runs)
			if err != nil {
				return err
			}
			return compare.Write(cmd.OutOrStdout(), res, format)
		},
	}
	cmd.Flags().StringSliceVar(&labels, "label", nil, "name the runs' columns, one per DIR in order (comma-separated: unhard,hard); default: each DIR's base name")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json, csv or markdown")
	return cmd
}
