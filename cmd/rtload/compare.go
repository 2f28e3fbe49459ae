package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/termsafe"
)

func newCompareCmd() *cobra.Command {
	var (
		labels    []string
		format    string
		failOn    string
		threshold string
		budget    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "compare DIR [DIR ...]",
		Short: "Compare results directories side by side: seed table, percentiles, change with CI and verdict",
		Long: `compare puts results directories side by side: the per-call histogram table
with one column per (variant, run), per-call and wakeup percentiles, and for
every headline metric the change against the first run, a 95% confidence
interval (Welch's t-test over rounds, or a seeded bootstrap over per-call
samples, stated per metric) and a verdict: faster, slower or within noise.
The header lists, mmtests-style, only the facts that differ between runs
(kernel, command-line parameters, kernel config, mitigations, clocksource,
microcode, CPU, C-states, cpu_dma_latency); other differences (scenario,
clock, degraded mode) are listed field by field as warnings.

--fail-on slower makes it a gate, as rtload check is: exit 0 when no
headline metric (or none of those named: --fail-on slower=METRIC,...) is
slower than the first run beyond --threshold, its whole 95% CI beyond it;
1 when one is; 125 when a run cannot be judged (degraded, stopped,
incomplete, or no metric with a CI).`,
		Example: `  rtload compare results/unhard results/hard --label unhard,hard
  rtload compare A B --format json > cmp.json
  rtload compare A B --format lkp
  rtload compare base new --fail-on slower --threshold 5%
  rtload compare base new --fail-on 'slower=mean per-call cost,wakeup latency p99'`,
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
			gate, gating, err := parseFailOn(failOn, threshold, cmd.Flags().Changed("threshold"))
			if err != nil {
				return err
			}
			defer startBudget(cmd.ErrOrStderr(), "compare", budget).end()
			out := cmd.OutOrStdout()
			if format != "json" {
				out = termsafe.Writer(out) // text, markdown, csv, lkp
			}
			runs, err := compare.Load(args, labels)
			if err != nil { // not a results directory: bad input (2), gate or not
				return usageError{err}
			}
			res, err := compare.Compare(runs)
			if err != nil {
				return err
			}
			if !gating {
				return compare.Write(out, res, format)
			}
			var reasons []string
			for _, r := range runs {
				reasons = append(reasons, compare.Unjudgeable(r.Label, r.Summary)...)
			}
			g, err := compare.Judge(res, reasons, gate)
			if err != nil {
				return usageError{err}
			}
			res.Gate = &g
			if err := compare.Write(out, res, format); err != nil {
				return err
			}
			return gateExit(g)
		},
	}
	cmd.Flags().StringSliceVar(&labels, "label", nil, "name the runs' columns, one per DIR in order (comma-separated: unhard,hard); default: each DIR's base name")
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(compare.Formats, ", "))
	cmd.Flags().StringVar(&failOn, "fail-on", "", "gate: slower (every headline metric) or slower=METRIC,... (by name, as compare prints them); exit 1 when one is slower beyond --threshold, 125 when the runs cannot be judged")
	cmd.Flags().StringVar(&threshold, "threshold", "3%", "with --fail-on: the change tolerated, in % of the baseline")
	cpuBudgetFlag(cmd, &budget)
	return cmd
}

// parseFailOn reads --fail-on and --threshold into gate options; gating
// is false without --fail-on (then --threshold is refused).
func parseFailOn(failOn, threshold string, thresholdSet bool) (opt compare.GateOptions, gating bool, err error) {
	if failOn == "" {
		if thresholdSet {
			return opt, false, usageError{fmt.Errorf("--threshold needs --fail-on slower")}
		}
		return opt, false, nil
	}
	kind, metrics, hasList := strings.Cut(failOn, "=")
	if kind != "slower" {
		return opt, false, usageError{fmt.Errorf("--fail-on %q: allowed: slower, or slower=METRIC,METRIC", failOn)}
	}
	if hasList {
		for _, m := range strings.Split(metrics, ",") {
			if m = strings.TrimSpace(m); m != "" {
				opt.Metrics = append(opt.Metrics, m)
			}
		}
		if len(opt.Metrics) == 0 {
			return opt, false, usageError{fmt.Errorf("--fail-on %q: no metric after '='", failOn)}
		}
	}
	if opt.Threshold, err = parsePercent("threshold", threshold); err != nil {
		return opt, false, err
	}
	return opt, true, nil
}

// parsePercent reads flag's value "3%" or "3" (percent of the baseline)
// as 0.03.
func parsePercent(flag, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || !(v > 0 && v < 100) {
		return 0, usageError{fmt.Errorf("--%s %q: a percentage above 0 and below 100, e.g. 3%%", flag, s)}
	}
	return v / 100, nil
}

// gateExit maps a gate's verdict to its exit code (the verdict is printed
// already).
func gateExit(g compare.Gate) error {
	switch g.Verdict {
	case compare.GatePass:
		return nil
	case compare.GateSlower:
		return exitError{code: ExitSlower}
	}
	return exitError{code: ExitCannotJudge}
}
