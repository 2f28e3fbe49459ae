package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/rtload/rtload/configs"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/sysinfo"
)

type runFlags struct {
	duration      string
	repeat        int
	sets          []string
	out           string
	allowDegraded bool
	noWakeupLog   bool
	quiet         bool
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [FILE|NAME]",
		Short: "Run a scenario for real and print the per-call and wakeup-latency tables",
		Long: `Run builds the scenario (sockets, senders, real-time readers, noise), runs
every variant in alternating order for the scenario's rounds, writes a
results directory (summary.json and one per-wakeup CSV per reader and trial)
and prints the seed's table: per-call histograms, one column per variant.

Without an argument it runs the built-in default scenario (laight-450, seed
000). NAME is a built-in scenario (see rtload list); FILE a YAML file.
Ctrl-C stops the run early and still writes complete results (exit 130).`,
		Example: `  rtload run
  rtload run laight-450 --duration 2s
  rtload run configs/laight-450.yaml --set readers[0].cpu=0 --set noise[0].threads=2
  rtload run my.yaml --out /tmp/res --allow-degraded`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := configs.Default
			if len(args) == 1 {
				name = args[0]
			}
			return runScenario(cmd, name, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.duration, "duration", "", "measured time per trial, a Go duration (overrides the scenario's duration)")
	fl.IntVar(&f.repeat, "repeat", 0, "run the whole scenario N times (variants alternating inside each repeat); same as --set rounds=N")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario field: path=value, e.g. readers[0].method=recvmsg (repeatable)")
	fl.StringVar(&f.out, "out", "", "results directory (default results/<scenario>-<timestamp>)")
	fl.BoolVar(&f.allowDegraded, "allow-degraded", false, "run without missing privileges (SCHED_OTHER, unpinned, unlocked memory) and mark results degraded")
	fl.BoolVar(&f.noWakeupLog, "no-wakeup-log", false, "do not write the per-wakeup CSV logs")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

func runScenario(cmd *cobra.Command, name string, f runFlags) error {
	sets := f.sets
	if f.duration != "" {
		sets = append([]string{"duration=" + f.duration}, sets...)
	}
	if f.repeat > 0 {
		sets = append([]string{fmt.Sprintf("rounds=%d", f.repeat), fmt.Sprintf("repeat=%d", f.repeat)}, sets...)
	}
	spec, err := loadSpec(name, sets)
	if err != nil {
		return err
	}
	trials, err := spec.Expand()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	errw := cmd.ErrOrStderr()
	fmt.Fprintf(out, "rtload %s: %s\n", spec.Name, spec.Description)
	fmt.Fprintf(out, "%d trial(s) of %v (+%v warm-up) each\n", len(trials), time.Duration(spec.Duration), time.Duration(spec.Warmup))

	dir := f.out
	if dir == "" {
		dir = filepath.Join("results", fmt.Sprintf("%s-%s", spec.Name, time.Now().Format("20060102-150405")))
	}
	if _, err := os.Stat(filepath.Join(dir, report.SummaryFile)); err == nil {
		return usageError{fmt.Errorf("results directory %s already holds a run (%s): choose another --out or remove it", dir, report.SummaryFile)}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		fmt.Fprintf(errw, "\nrtload: %v: stopping, writing results (again to force exit)\n", s)
		cancel(fmt.Errorf("signal %v", s))
		if s2, ok := <-sigs; ok {
			fmt.Fprintf(errw, "rtload: %v again: exiting now\n", s2)
			// No time for an orderly close: remove our namespaces (and the
			// tap devices in them) so nothing is left behind.
			if removed, err := netns.RemoveOwned(os.Getpid()); err != nil {
				fmt.Fprintf(errw, "rtload: %v (rtload cleanup removes it later)\n", err)
			} else if len(removed) > 0 {
				fmt.Fprintf(errw, "rtload: removed %v\n", removed)
			}
			os.Exit(ExitInterrupted)
		}
	}()

	opt := engine.Options{AllowDegraded: f.allowDegraded, OutDir: dir, NoWakeupLog: f.noWakeupLog}
	var bar *progressbar.ProgressBar
	if !f.quiet && term.IsTerminal(int(os.Stderr.Fd())) {
		bar = progressbar.NewOptions(1000, progressbar.OptionSetWriter(errw), progressbar.OptionSetWidth(30),
			progressbar.OptionSetDescription("running"), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		opt.Progress = func(trial, n int, frac float64) {
			bar.Describe(fmt.Sprintf("trial %d/%d %s", trial+1, n, trials[trial].Variant))
			_ = bar.Set(int(1000 * (float64(trial) + frac) / float64(n)))
		}
	} else if !f.quiet {
		opt.Log = errw
	}
	env := sysinfo.Gather()
	sum, runErr := engine.Run(ctx, spec, trials, opt)
	if bar != nil {
		_ = bar.Finish()
	}
	if sum == nil || (runErr != nil && len(sum.Trials) == 0) {
		if f.out == "" {
			os.Remove(dir) // only if empty: never removes results
			os.Remove(filepath.Dir(dir))
		}
		return runErr
	}
	sum.Spec = spec
	sum.Env = env
	if err := report.WriteSummary(dir, sum); err != nil {
		return errors.Join(runErr, err)
	}
	if len(sum.Trials) > 0 {
		if err := report.Report(out, sum); err != nil {
			return errors.Join(runErr, err)
		}
	}
	fmt.Fprintf(out, "\nresults: %s\n", dir)
	return runErr
}
