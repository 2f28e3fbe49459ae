package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/scenario"
)

// processCommand is the hidden command a multi-process run (run
// --processes, scenario processes:) re-executes /proc/self/exe with, once
// per process: it reads a childRequest on stdin, runs the whole plan with
// the process's setup, writes its files into the run's results directory
// and its summary as JSON on stdout.
const processCommand = "__process"

// envPadVar pads a child's environment (engine.Child.EnvPadBytes).
const envPadVar = "RTLOAD_ENV_PAD"

// maxChildRequest and maxChildSummary bound what parent and child read
// from each other.
const (
	maxChildRequest = 16 << 20
	maxChildSummary = results.MaxSummaryBytes
)

// childRequest is what the parent sends a child on stdin.
type childRequest struct {
	Spec          json.RawMessage `json:"spec"`
	Child         engine.Child    `json:"child"`
	Out           string          `json:"out"`
	AllowDegraded bool            `json:"allow_degraded"`
	NoWakeupLog   bool            `json:"no_wakeup_log"`
	TaskPerf      bool            `json:"task_perf_counters"`
	Unmet         []string        `json:"unmet,omitempty"`
	Quiet         bool            `json:"quiet,omitempty"`
}

func newProcessCmd() *cobra.Command {
	return &cobra.Command{
		Use:    processCommand,
		Short:  "one process of a multi-process run (internal: rtload run --processes starts it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChild(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// runChild is the child's side: one process of the run.
func runChild(in io.Reader, out, errw io.Writer) error {
	data, err := io.ReadAll(io.LimitReader(in, maxChildRequest+1))
	if err != nil || len(data) > maxChildRequest {
		return usageError{fmt.Errorf("%s: request: %v (at most %d bytes)", processCommand, err, maxChildRequest)}
	}
	var req childRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return usageError{fmt.Errorf("%s: request: %w", processCommand, err)}
	}
	spec, err := scenario.LoadAsRun(fmt.Sprintf("process %d (spec)", req.Child.Process+1), req.Spec)
	if err != nil {
		return err
	}
	trials, err := spec.Expand()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if s, ok := <-sigs; ok {
			cancel(fmt.Errorf("signal %v", s))
		}
	}()
	opt := engine.Options{AllowDegraded: req.AllowDegraded, OutDir: req.Out, NoWakeupLog: req.NoWakeupLog, TaskPerfCounters: req.TaskPerf,
		Unmet: req.Unmet, Log: childLog(req.Quiet, errw), Process: req.Child.Process, Processes: req.Child.Processes, Setup: req.Child.Setup}
	sum, runErr := engine.Run(ctx, spec, engine.ChildTrials(trials, req.Child), opt)
	if sum != nil {
		if err := json.NewEncoder(out).Encode(sum); err != nil {
			return errors.Join(runErr, err)
		}
	}
	return runErr
}

// childLauncher starts each child of a multi-process run as
// /proc/self/exe __process, its environment padded, its stderr the
// run's, and reads its summary from its stdout. ctx ending sends it
// SIGINT (a Ctrl-C on a terminal reaches it directly too).
func childLauncher(spec *scenario.Spec, dir string, f runFlags, unmet []string, errw io.Writer) (engine.Launcher, error) {
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("processes: scenario: %w", err)
	}
	return func(ctx context.Context, c engine.Child) (*results.Summary, int, error) {
		req, err := json.Marshal(childRequest{Spec: specJSON, Child: c, Out: dir, AllowDegraded: f.allowDegraded,
			NoWakeupLog: f.noWakeupLog, TaskPerf: f.taskPerf, Unmet: unmet, Quiet: f.quiet})
		if err != nil {
			return nil, 0, err
		}
		cmd := exec.Command("/proc/self/exe", processCommand)
		cmd.Env = append(withoutVar(os.Environ(), envPadVar), envPadVar+"="+strings.Repeat("x", c.EnvPadBytes))
		cmd.Stdin = bytes.NewReader(req)
		var stdout limitedBuffer
		stdout.limit = maxChildSummary
		cmd.Stdout, cmd.Stderr = &stdout, errw
		if err := cmd.Start(); err != nil {
			return nil, 0, fmt.Errorf("start %s: %w", processCommand, err)
		}
		done := make(chan struct{})
		go func() {
			select {
			case <-ctx.Done():
				_ = cmd.Process.Signal(syscall.SIGINT)
			case <-done:
			}
		}()
		werr := cmd.Wait()
		close(done)
		pid := cmd.Process.Pid
		var sum *results.Summary
		if stdout.Len() > 0 {
			s, err := results.DecodeSummary(stdout.Bytes(), fmt.Sprintf("process %d summary", c.Process+1))
			if err != nil {
				return nil, pid, err
			}
			sum = s
		}
		if stdout.over {
			return sum, pid, fmt.Errorf("process %d: summary over %d bytes", c.Process+1, maxChildSummary)
		}
		var xe *exec.ExitError
		switch {
		case werr == nil:
			return sum, pid, nil
		case errors.As(werr, &xe) && xe.ExitCode() == ExitInterrupted && sum != nil && sum.Stopped:
			return sum, pid, nil // stopped: the parent sees ctx ended
		case errors.As(werr, &xe):
			return sum, pid, fmt.Errorf("exit status %d (its error is above)", xe.ExitCode())
		}
		return sum, pid, werr
	}, nil
}

// runProcesses runs a multi-process run's children (engine.RunProcesses).
func runProcesses(ctx context.Context, spec *scenario.Spec, trials []scenario.Trial, opt engine.Options, f runFlags, errw io.Writer) (*results.Summary, error) {
	launch, err := childLauncher(spec, opt.OutDir, f, opt.Unmet, errw)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	sum, err := engine.RunProcesses(ctx, spec, trials, opt, 0, launch)
	if sum != nil {
		noun := "processes"
		if len(sum.Processes) == 1 {
			noun = "process"
		}
		fmt.Fprintf(errw, "%d %s in %v\n", len(sum.Processes), noun, time.Since(start).Round(time.Second))
	}
	return sum, err
}

func childLog(quiet bool, errw io.Writer) io.Writer {
	if quiet {
		return io.Discard
	}
	return errw
}

func withoutVar(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// limitedBuffer keeps at most limit bytes and notes that more came.
type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
