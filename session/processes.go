package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/scenario"
)

// ProcessCommand is the hidden command a multi-process run (run
// --processes, scenario processes:) re-executes /proc/self/exe with, once
// per process: it reads a childRequest on stdin, runs the whole plan with
// the process's setup, writes its files into the run's results directory
// and its summary as JSON on stdout.
const ProcessCommand = "__process"

// envPadVar pads a child's environment (engine.Child.EnvPadBytes).
const envPadVar = "RTLOAD_ENV_PAD"

// parentDeathSignal is the signal a child of a multi-process run gets
// when its parent dies (prctl PR_SET_PDEATHSIG). SIGKILL: the kernel ends
// the child at once, its SCHED_FIFO threads with it, whatever load the
// machine is under. A caught signal would need the child's Go scheduler
// to run its handler first: with SIGTERM handled, the child took 0.1-0.3 s
// to react, once more than 1 s, on this busy 2-CPU VM beside its own spin
// noise. The namespace the child leaves is removed as any killed run's
// is: by the next run into the same results directory (it takes the
// killed run's lock over), by the next run that makes a namespace, or by
// rtload cleanup.
const parentDeathSignal = syscall.SIGKILL

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

// RunChild is the child's side: one process of the run.
func RunChild(in io.Reader, out, errw io.Writer) error {
	data, err := io.ReadAll(io.LimitReader(in, maxChildRequest+1))
	if err != nil || len(data) > maxChildRequest {
		return UsageError{fmt.Errorf("%s: request: %v (at most %d bytes)", ProcessCommand, err, maxChildRequest)}
	}
	var req childRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return UsageError{fmt.Errorf("%s: request: %w", ProcessCommand, err)}
	}
	spec, err := scenario.LoadAsRun(fmt.Sprintf("process %d (spec)", req.Child.Process+1), req.Spec)
	if err != nil {
		return err
	}
	trials, err := spec.Expand()
	if err != nil {
		return err
	}
	ctx := watchChildSignals(errw).context()
	opt := engine.Options{AllowDegraded: req.AllowDegraded, OutDir: req.Out, NoWakeupLog: req.NoWakeupLog, TaskPerfCounters: req.TaskPerf,
		Unmet: req.Unmet, Log: childLog(req.Quiet, errw), Process: req.Child.Process, Processes: req.Child.Processes, Setup: req.Child.Setup}
	sum, runErr := engine.Run(ctx, spec, engine.ChildTrials(trials, req.Child), opt)
	if sum != nil {
		if err := json.NewEncoder(out).Encode(sum); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if _, ok := StoppedBy(runErr); ok && sum != nil {
		// Stopped by a signal, its summary written: the signal's code, and
		// nothing printed (the parent says why it stopped; no goroutine
		// stacks after SIGQUIT: the parent prints its own).
		return ExitError{Code: InterruptedCode(runErr)}
	}
	return runErr
}

// childLauncher starts each child of a multi-process run as
// /proc/self/exe __process, its environment padded, its stderr the
// run's, and reads its summary from its stdout. ctx ending sends it the
// signal that ended ctx (a StopSignal cause; SIGINT otherwise); a signal
// to the process group (Ctrl-C, a hangup) reaches it directly too. A
// child that stopped on a signal with its summary written is no failure:
// the parent stops too (childExit).
func childLauncher(spec *scenario.Spec, dir string, opt Options, unmet []string, errw io.Writer) (engine.Launcher, error) {
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("processes: scenario: %w", err)
	}
	return func(ctx context.Context, c engine.Child) (*results.Summary, int, error) {
		req, err := json.Marshal(childRequest{Spec: specJSON, Child: c, Out: dir, AllowDegraded: opt.AllowDegraded,
			NoWakeupLog: opt.NoWakeupLog, TaskPerf: opt.TaskPerf, Unmet: unmet, Quiet: opt.Quiet})
		if err != nil {
			return nil, 0, err
		}
		cmd := exec.Command("/proc/self/exe", ProcessCommand)
		// A parent killed with SIGKILL must not leave its child running
		// the plan with SCHED_FIFO threads: the kernel sends the child
		// parentDeathSignal when the thread that forked it ends (Go
		// checks getppid after the prctl, for a parent that died
		// before it). So that thread must outlive the child: locked to
		// this goroutine until Wait returns.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: parentDeathSignal}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cmd.Env = append(withoutVar(os.Environ(), envPadVar), envPadVar+"="+strings.Repeat("x", c.EnvPadBytes))
		cmd.Stdin = bytes.NewReader(req)
		var stdout limitedBuffer
		stdout.limit = maxChildSummary
		cmd.Stdout, cmd.Stderr = &stdout, errw
		if err := cmd.Start(); err != nil {
			return nil, 0, fmt.Errorf("start %s: %w", ProcessCommand, err)
		}
		done := make(chan struct{})
		go func() {
			select {
			case <-ctx.Done():
				sig := syscall.SIGINT
				if s, ok := StoppedBy(context.Cause(ctx)); ok {
					sig = s.Sig
				}
				_ = cmd.Process.Signal(sig)
			case <-done:
			}
		}()
		werr := cmd.Wait()
		close(done)
		pid := cmd.Process.Pid
		var sum *results.Summary
		if stdout.Len() > 0 {
			s, err := store.DecodeSummary(stdout.Bytes(), fmt.Sprintf("process %d summary", c.Process+1))
			if err != nil {
				return nil, pid, err
			}
			sum = s
		}
		if stdout.over {
			return sum, pid, fmt.Errorf("process %d: summary over %d bytes", c.Process+1, maxChildSummary)
		}
		return sum, pid, childExit(werr, sum)
	}, nil
}

// childExit is the error of a child that ended with werr (cmd.Wait's),
// its summary sum (nil: none): nil when it ran to its end; for one
// stopped by a signal with its summary written, an error wrapping
// engine.ErrStopped and the signal (its exit code's), which ends the run
// as that signal does; one killed by a signal names it; any other exit
// status points at the child's error, which it printed on the run's
// stderr.
func childExit(werr error, sum *results.Summary) error {
	var xe *exec.ExitError
	if werr == nil || !errors.As(werr, &xe) {
		return werr
	}
	if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Errorf("killed by %s (%s): its trials are lost, the wakeup logs it wrote are kept", signalName(ws.Signal()), ws.Signal())
	}
	code := xe.ExitCode()
	if s, ok := signalOfCode(code); ok && sum != nil && sum.Stopped {
		what := s.Error()
		if code == ExitInterrupted {
			what = "signal SIGINT or SIGTERM"
		}
		return fmt.Errorf("%w: %w", engine.ErrStopped, stopped{s, fmt.Sprintf("%s (exit %d)", what, code)})
	}
	return fmt.Errorf("exit status %d (its error is above)", code)
}

// stopped is a StopSignal with its own message (a child's stop, known by
// its exit code).
type stopped struct {
	StopSignal
	msg string
}

func (s stopped) Error() string { return s.msg }

func (s stopped) Unwrap() error { return s.StopSignal }

// signalName is sig's name as kill -l gives it, with SIG ("SIGKILL").
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// runProcesses runs a multi-process run's children (engine.RunProcesses).
func runProcesses(ctx context.Context, spec *scenario.Spec, trials []scenario.Trial, opt engine.Options, o Options, errw io.Writer) (*results.Summary, error) {
	launch, err := childLauncher(spec, opt.OutDir, o, opt.Unmet, errw)
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
