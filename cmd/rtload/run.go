package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

type runFlags struct {
	duration      string
	repeat        int
	interval      string
	metricsAddr   string
	sets          []string
	out           string
	allowDegraded bool
	noWakeupLog   bool
	taskPerf      bool
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
	fl.StringVar(&f.duration, "duration", "", "measured time per trial, a Go duration, or forever (a soak run until Ctrl-C)")
	fl.StringVar(&f.interval, "interval", "", "emit an interval record every D (intervals.jsonl, a live line); default 10s for soak runs")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (loopback only, e.g. 127.0.0.1:9100)")
	fl.IntVar(&f.repeat, "repeat", 0, "run the whole scenario N times (variants alternating inside each repeat); same as --set rounds=N")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario field: path=value, e.g. readers[0].method=recvmsg (repeatable)")
	fl.StringVar(&f.out, "out", "", "results directory (default results/<scenario>-<timestamp>)")
	fl.BoolVar(&f.allowDegraded, "allow-degraded", false, "run without missing privileges (SCHED_OTHER, unpinned, unlocked memory) and mark results degraded")
	fl.BoolVar(&f.noWakeupLog, "no-wakeup-log", false, "do not write the per-wakeup CSV logs")
	fl.BoolVar(&f.taskPerf, "task-perf-counters", false, "count the reader threads' context switches, faults and CPU time with task-bound perf events instead of procfs (they add a few µs to every wakeup latency; results say so)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

func runScenario(cmd *cobra.Command, name string, f runFlags) error {
	sets := f.sets
	if f.duration == "forever" {
		f.duration = "0"
	}
	if f.duration != "" {
		sets = append([]string{"duration=" + f.duration}, sets...)
	}
	if f.interval != "" {
		sets = append([]string{"interval=" + f.interval}, sets...)
	}
	if cmd.Flags().Changed("repeat") {
		if f.repeat < 1 || f.repeat > scenario.MaxRounds {
			return usageError{fmt.Errorf("--repeat %d out of range (allowed: 1–%d)", f.repeat, scenario.MaxRounds)}
		}
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
	// Every refusal comes before anything is printed or created.
	var srv *exporter.Server
	if f.metricsAddr != "" {
		if srv, err = exporter.Listen(f.metricsAddr, false); err != nil {
			return usageError{fmt.Errorf("--metrics-addr: %w", err)}
		}
		defer srv.Close()
	}
	if f.out != "" {
		if _, err := os.Stat(filepath.Join(f.out, report.SummaryFile)); err == nil {
			return usageError{fmt.Errorf("results directory %s already holds a run (%s): choose another --out or remove it", f.out, report.SummaryFile)}
		}
	}
	fmt.Fprintf(out, "rtload %s: %s\n", spec.Name, spec.Description)
	if spec.Duration == 0 {
		fmt.Fprintf(out, "%d trial(s), each until stopped (Ctrl-C ends the current one and writes the results)\n", len(trials))
	} else if len(spec.Readers) == 0 && len(spec.Probes) > 0 {
		fmt.Fprintf(out, "%d trial(s), each running its probes to the end\n", len(trials))
	} else {
		fmt.Fprintf(out, "%d trial(s) of %v (+%v warm-up) each\n", len(trials), time.Duration(spec.Duration), time.Duration(spec.Warmup))
	}

	dir := f.out
	if dir == "" {
		dir = filepath.Join("results", fmt.Sprintf("%s-%s", spec.Name, time.Now().Format("20060102-150405")))
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

	opt := engine.Options{AllowDegraded: f.allowDegraded, OutDir: dir, NoWakeupLog: f.noWakeupLog, TaskPerfCounters: f.taskPerf}
	var bar *progressbar.ProgressBar
	if !f.quiet && spec.Interval == 0 && term.IsTerminal(int(os.Stderr.Fd())) {
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
	live := newLiveLine(errw, term.IsTerminal(int(os.Stderr.Fd())))
	opt.OnInterval = live.update
	opt.OnCheckpoint = func(s *report.Summary) {
		s.Spec, s.Env = spec, env
		if err := report.WriteSummary(dir, s); err != nil {
			fmt.Fprintf(errw, "rtload: checkpoint: %v\n", err)
		}
	}
	if srv != nil {
		srv.SetRunInfo(spec.Name, "", env.Kernel) // the clock is filled in by the engine once chosen
		opt.Exporter = srv
		opt.Kernel = env.Kernel
		fmt.Fprintf(errw, "metrics: http://%s/metrics\n", srv.Addr())
	}
	sum, runErr := engine.Run(ctx, spec, trials, opt)
	live.done()
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
	// The same histograms in formats other tools read: HdrHistogram
	// interval logs and cyclictest's -h layout.
	if _, err := report.WriteInterop(dir, sum); err != nil {
		fmt.Fprintf(errw, "rtload: interop files: %v\n", err)
	}
	if len(sum.Trials) > 0 {
		if err := report.Report(out, sum); err != nil {
			return errors.Join(runErr, err)
		}
	}
	fmt.Fprintf(out, "\nresults: %s\n", dir)
	return runErr
}

// liveLine prints one line per interval record: the current interval and
// the worst wakeup latency so far (rewritten in place on a terminal).
type liveLine struct {
	w       io.Writer
	tty     bool
	worst   int64
	worstAt time.Time
	printed bool
}

func newLiveLine(w io.Writer, tty bool) *liveLine { return &liveLine{w: w, tty: tty} }

func (l *liveLine) update(iv report.Interval) {
	if iv.WakeupLatency.MaxNs > l.worst {
		l.worst, l.worstAt = iv.WakeupLatency.MaxNs, iv.Time
	}
	line := fmt.Sprintf("%s %s/%s #%d: wakeup p99 %.1fµs max %.1fµs (worst %.1fµs at %s) | call p99 %d ticks | msgs %d lost %d | spikes %d | rss %.1fMiB fds %d",
		iv.Time.Format("15:04:05"), iv.Variant, iv.Reader, iv.Seq, float64(iv.WakeupLatency.P99Ns)/1e3, float64(iv.WakeupLatency.MaxNs)/1e3,
		float64(l.worst)/1e3, l.worstAt.Format("15:04:05"), iv.PerCallTicks.P99Ns, iv.Messages, iv.Lost, iv.Spikes,
		float64(iv.RSSBytes)/(1<<20), iv.FDs)
	if l.tty {
		fmt.Fprintf(l.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(l.w, line)
	}
	l.printed = true
}

func (l *liveLine) done() {
	if l.tty && l.printed {
		fmt.Fprintln(l.w)
	}
}
