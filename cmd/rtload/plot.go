package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/plot"
	"github.com/rtload/rtload/session"
)

func newPlotCmd() *cobra.Command {
	var (
		o      plot.Options
		labels string
		budget time.Duration
		format string
	)
	cmd := &cobra.Command{
		Use:   "plot DIR [DIR ...] --out FILE.png|.svg",
		Short: "Draw per-call histograms, wakeup latency over time and latency CDFs into one image",
		Long: `Draw one image from one or more results directories, three panels stacked:
per-call cost histograms overlaid (one colour per column), wakeup latency over
time (a point per logged wakeup, so spikes and their times show), and wakeup
latency CDFs. The --out extension picks the image's format: .png or .svg.
The path written goes to stderr; --format json prints it, with the
columns drawn, on stdout.`,
		Example: "  rtload plot rtload-results/laight-450-20261130-101500 --out laight.png\n" +
			"  rtload plot old/ new/ --label before,after --log --calls data --out cmp.svg",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			if o.Out == "" {
				return usageError{Err: errors.New("plot: --out FILE.png|.svg is required")}
			}
			if err := o.Validate(); err != nil {
				return usageError{Err: err}
			}
			var ls []string
			if labels != "" {
				ls = strings.Split(labels, ",")
				if len(ls) != len(args) {
					return usageError{Err: errors.New("plot: --label needs one label per results directory")}
				}
			}
			defer session.StartBudget(cmd.ErrOrStderr(), "plot", budget).End()
			doc, err := session.Plot(args, ls, o)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), doc.Wrote())
			if format != "json" {
				return nil
			}
			return compare.WriteJSON(cmd.OutOrStdout(), doc)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.Out, "out", "o", "", "image file to write: .png or .svg (required)")
	fl.StringVar(&labels, "label", "", "comma-separated run labels, one per DIR (default: directory names)")
	fl.BoolVar(&o.LogCounts, "log", false, "per-call counts on a log scale")
	fl.StringVar(&o.Hist, "calls", "all", "per-call histogram: all, data or eagain")
	fl.StringVar(&o.Title, "title", "", "image title (default: scenario and run names)")
	cpuBudgetFlag(cmd, &budget)
	formatFlag(cmd, &format, textJSON, "schema "+SchemaPlot+": the image written and its columns")
	return cmd
}
