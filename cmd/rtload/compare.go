package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/compare/view"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/session"
	"github.com/rtload/rtload/verdict"
)

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare DIR [DIR ...]",
		Short: "Compare results directories side by side: seed table, percentiles, change with CI and verdict",
		Long: `compare puts results directories side by side: the per-call histogram table
with one column per (variant, run), per-call and wakeup percentiles, and for
every headline metric the change against the first run with its 95%
confidence interval and a verdict at --threshold: slower (the whole CI
beyond +threshold), not slower (the whole CI below it), same (the whole CI
within ±threshold) or undecided. Intervals are Student's t on log values of
independent samples: processes (rtload run --processes), or the rounds of
one process when a side has only one (said so); never calls or wakeups.
Each primary metric's verdict line gives n (processes × rounds), the
smallest change the noise measured could detect, and how many more
processes would decide it; the variance split says where the noise is
(between processes, between rounds) and Kalibera & Jones' rounds per
process.
The header lists, mmtests-style, only the facts that differ between runs
(kernel, command-line parameters, kernel config, mitigations, clocksource,
microcode, CPU, C-states, cpu_dma_latency); other differences (scenario,
clock, degraded mode) are listed field by field as warnings.

--fail-on slower makes it a gate, as rtload check is (check --help): it
judges every column's primary metric (mean per-call cost; wakeup latency
p99 for a timer-only reader) and, for the tail guard, its wakeup latency
p99 and spike rates (or those named: --fail-on slower=METRIC,...) at a
family-wise 95% level (Bonferroni over the metrics judged) and exits 0
only when every one outside the tail is proven not slower than
+threshold and the tail guard holds nothing, 1 when one is proven slower
(a tail metric: proven more than doubled), 125 when it is undecided or a
run cannot be judged. A per-call cost between runs is judged as check
judges it (--control, the machine guard); every comparison prints the
machine's own change.`,
		Example: `  rtload compare results/unhard results/hard --label unhard,hard
  rtload compare A B --format json > cmp.json
  rtload compare A B --format lkp
  rtload compare base new --fail-on slower --threshold 5%
  rtload compare base new --fail-on 'slower=mean per-call cost,wakeup latency p99'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, args, f)
		},
	}
	cmd.Flags().StringSliceVar(&f.labels, "label", nil, "name the runs' columns, one per DIR in order (comma-separated: unhard,hard); default: each DIR's base name")
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: "+strings.Join(view.Formats, ", "))
	cmd.Flags().StringVar(&f.failOn, "fail-on", "", "gate: slower (every column's primary metric) or slower=METRIC,... (by name, as compare prints them); exit 0 proven not slower, 1 proven slower beyond --threshold, 125 undecided or cannot judge")
	cmd.Flags().StringVar(&f.threshold, "threshold", "3%", "the change the verdicts are read against, in % of the baseline")
	cmd.Flags().StringVar(&f.control, "control", string(verdict.ControlNull), controlUsage)
	cpuBudgetFlag(cmd, &f.budget)
	levelFlags(cmd, &f.quiet, &f.verbose)
	return cmd
}

type compareFlags struct {
	labels                             []string
	format, failOn, threshold, control string
	budget                             time.Duration
	quiet, verbose                     bool
}

// controlUsage is --control's help, check's and compare's.
const controlUsage = "the gate adjusts per-call costs on this drift control: null (the null syscall), loop (the user-space loop), none (judge the raw change) or recv (the recv control: only for a change outside the kernel's recv path, which moves it too); the raw change is printed beside the adjusted one"

// runCompare is rtload compare: its flags, then the session's comparison
// (session.Compare: load, compare, judge with --fail-on); print, and exit with the gate's verdict's code.
func runCompare(cmd *cobra.Command, args []string, f compareFlags) error {
	if err := checkFormatIn(f.format, view.Formats); err != nil {
		return err
	}
	level, err := levelOf(f.quiet, f.verbose)
	if err != nil {
		return err
	}
	if len(f.labels) > 0 {
		if err := load.CheckLabels(args, f.labels); err != nil {
			return usageError{Err: err}
		}
	}
	gate, gating, err := parseFailOn(f.failOn, f.threshold)
	if err != nil {
		return err
	}
	if gate.Control, err = verdict.ParseControl(f.control); err != nil {
		return usageError{Err: err}
	}
	gate.GrowBaseline = true
	defer session.StartBudget(cmd.ErrOrStderr(), "compare", f.budget).End()
	out := cmd.OutOrStdout()
	if f.format != "json" {
		out = termsafe.Writer(out) // text, markdown, csv, lkp
	}
	c, runs, err := session.Compare(args, f.labels, gate, gating)
	if err != nil {
		return err
	}
	if f.format != "text" {
		err = c.Write(out, f.format)
	} else {
		err = session.WriteCompare(out, c, runs, level)
	}
	if err != nil || !gating {
		return err
	}
	return gateExit(c.Gate.Verdict)
}

// parseFailOn reads --fail-on and --threshold into gate options; gating
// is false without --fail-on (--threshold then sets compare's verdicts).
func parseFailOn(failOn, threshold string) (opt verdict.Options, gating bool, err error) {
	if opt.Threshold, err = session.ParsePercent("threshold", threshold); err != nil {
		return opt, false, err
	}
	if failOn == "" {
		return opt, false, nil
	}
	kind, metrics, hasList := strings.Cut(failOn, "=")
	if kind != "slower" {
		return opt, false, usageError{Err: fmt.Errorf("--fail-on %q: allowed: slower, or slower=METRIC,METRIC", failOn)}
	}
	if hasList {
		for _, m := range strings.Split(metrics, ",") {
			if m = strings.TrimSpace(m); m != "" {
				opt.Metrics = append(opt.Metrics, m)
			}
		}
		if len(opt.Metrics) == 0 {
			return opt, false, usageError{Err: fmt.Errorf("--fail-on %q: no metric after '='", failOn)}
		}
	}
	return opt, true, nil
}

// gateExit is the error a gate's verdict v exits with (its own code,
// verdict.Verdict.ExitCode; printed already): nil for not slower.
func gateExit(v verdict.Verdict) error {
	if code := v.ExitCode(); code != verdict.ExitNotSlower {
		return exitError{Code: code}
	}
	return nil
}
