package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/termsafe"
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
			cols, err := plot.Load(args, ls)
			if err != nil { // not a readable results directory: bad input (2), as for compare
				return usageError{Err: err}
			}
			if err := plot.Render(cols, o); err != nil {
				return err
			}
			return plotWritten(cmd, o.Out, cols, format)
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

// plotWritten names the image written on stderr and, with --format json,
// describes it on stdout.
func plotWritten(cmd *cobra.Command, out string, cols []plot.Column, format string) error {
	labels := make([]string, len(cols))
	for i, c := range cols {
		labels[i] = c.Label
	}
	noun := "columns"
	if len(cols) == 1 {
		noun = "column"
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "plot: wrote %s (%s, %d %s: %s)\n", termsafe.Escape(out),
		strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), "."), len(cols), noun, termsafe.Escape(strings.Join(labels, ", ")))
	if format != "json" {
		return nil
	}
	return compare.WriteJSON(cmd.OutOrStdout(), struct {
		Schema  string   `json:"schema"`
		Version int      `json:"version"`
		File    string   `json:"file"`
		Columns []string `json:"columns"`
	}{SchemaPlot, SchemaVersion, out, labels})
}
