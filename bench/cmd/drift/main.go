// Command drift is make bench-drift: issue 31's first Done-when line,
// "over at least 30 minutes of rounds under changing load (start and stop
// busy loops during it), the regression-adjusted per-call cost has a
// log-SD of 60 s means at most 1/3 of the raw one, with β and the
// correlation printed".
//
//	drift [flags]              run rtload under a busy-loop schedule, then analyse
//	drift -from DIR [-md F]    analyse DIR again, running nothing
//
// It runs `rtload run bench/drift-450.yaml --duration D --interval 1s`
// (seed 000's 450 sockets and SCHED_FIFO reader, recvfrom, the drift
// controls at 64 a tick; one interval record a second, each with its mean
// per-call cost and its controls' means) while it starts and stops busy
// loops on a fixed schedule: phases of -phase, each running a number of
// CPU spinners and memory streamers (64 MiB copies) as child processes of
// this program, SCHED_OTHER and unpinned, each bounded by its own timeout
// and killed with this program (PR_SET_PDEATHSIG). The schedule as run
// goes to DIR/schedule.csv, the load average every 5 s to DIR/load.csv,
// rtload's results to DIR/results.
//
// The analysis takes each 1 s interval's log mean per-call cost (all
// calls), log mean null-syscall cost and log mean user-loop cost, averages
// them over 60 s windows, and reports the log-SD of the windows' means:
// raw, divided by each control, and regression-adjusted on each (Y −
// β(X − X̄), β = cov/var of the window means, fitted on the first half of
// the windows and applied to the second, as the table does, and
// fitted on all), with β and the correlation r, and the same with the
// medians. The verdict line holds the held-out adjustment on the null
// syscall against the raw log-SD of the same second half. Needs root.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "drift:", err)
		os.Exit(1)
	}
}

type config struct {
	rtload, scenario, dir, md, from string
	duration, phase, window         time.Duration
	busy                            string
	busyFor                         time.Duration
}

func run(args []string) error {
	var c config
	fs := flag.NewFlagSet("drift", flag.ContinueOnError)
	fs.StringVar(&c.rtload, "rtload", "bin/rtload", "the rtload binary")
	fs.StringVar(&c.scenario, "scenario", "bench/drift-450.yaml", "the scenario rtload runs")
	fs.DurationVar(&c.duration, "duration", 36*time.Minute, "rtload's measured time (≥ 30m for the issue's line)")
	fs.DurationVar(&c.phase, "phase", 2*time.Minute, "length of one phase of the busy-loop schedule")
	fs.DurationVar(&c.window, "window", time.Minute, "the window the log-SD is taken over")
	fs.StringVar(&c.dir, "dir", "", "the bench directory (default /var/tmp/rtload-drift-<time>)")
	fs.StringVar(&c.md, "md", "bench/DRIFT.md", "the Markdown file written")
	fs.StringVar(&c.from, "from", "", "analyse this bench directory again, running nothing")
	fs.StringVar(&c.busy, "busy", "", "internal: run one busy loop (spin or mem) for -for")
	fs.DurationVar(&c.busyFor, "for", 0, "internal: how long the busy loop runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.busy != "" {
		return busyLoop(c.busy, c.busyFor)
	}
	if c.from != "" {
		return analyseTo(c.from, c.md, c.window)
	}
	if c.duration < time.Minute {
		return fmt.Errorf("-duration %v: want at least a minute (the issue's line needs 30m)", c.duration)
	}
	if c.dir == "" {
		c.dir = filepath.Join("/var/tmp", "rtload-drift-"+time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	if err := measure(c); err != nil {
		return err
	}
	return analyseTo(c.dir, c.md, c.window)
}

// measure runs rtload and the busy-loop schedule beside it until rtload
// ends (or this program is interrupted: rtload then gets SIGINT and writes
// complete results).
func measure(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	argv := []string{c.rtload, "run", c.scenario, "--duration", c.duration.String(), "--interval", "1s",
		"--out", filepath.Join(c.dir, "results"), "-q", "--no-wakeup-log"}
	if err := os.WriteFile(filepath.Join(c.dir, "command.txt"), []byte(strings.Join(argv, " ")+"\n"), 0o644); err != nil {
		return err
	}
	out, err := os.Create(filepath.Join(c.dir, "rtload.out"))
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	fmt.Fprintf(os.Stderr, "drift: %s (results in %s)\n", strings.Join(argv, " "), c.dir)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	sched, err := newSchedule(c.dir, self, c.phase)
	if err != nil {
		return err
	}
	defer sched.close()
	loadStop := sampleLoad(filepath.Join(c.dir, "load.csv"), sched)
	defer loadStop()
	// rtload's whole run: setup, warm-up, the window and its end; past it
	// the run is stuck and gets SIGINT, then SIGKILL.
	deadline := time.After(c.duration + 5*time.Minute)
	interrupted := false
	for phase := 0; ; phase++ {
		sched.start(phase)
		select {
		case err := <-done:
			sched.stopPhase()
			return rtloadExit(err, interrupted)
		case <-time.After(c.phase):
			sched.stopPhase()
		case <-ctx.Done():
			interrupted = true
		case <-deadline:
			fmt.Fprintln(os.Stderr, "drift: rtload ran past its time: SIGINT")
			interrupted = true
		}
		if interrupted {
			sched.stopPhase()
			syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			select {
			case err := <-done:
				return rtloadExit(err, true)
			case <-time.After(60 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				return rtloadExit(<-done, true)
			}
		}
	}
}

// rtloadExit says how rtload ended: an interrupted run's results are
// complete to its end (rtload writes them on SIGINT) and are analysed.
func rtloadExit(err error, interrupted bool) error {
	var xe *exec.ExitError
	switch {
	case err == nil:
		return nil
	case interrupted && errors.As(err, &xe):
		fmt.Fprintf(os.Stderr, "drift: rtload stopped early (%v): analysing what it measured\n", err)
		return nil
	}
	return fmt.Errorf("rtload: %w (see rtload.out)", err)
}
