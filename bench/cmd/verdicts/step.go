package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Step is one command the bench ran, as steps.jsonl records it: the raw
// log every section is rendered from (with -from, without running
// anything again).
type Step struct {
	// Name is the step's name, unique in the run ("aa-07", "base").
	Name string `json:"name"`
	// Argv is the command; Out the file its stdout went to, Err its
	// stderr's (both relative to the bench directory).
	Argv []string `json:"argv"`
	Out  string   `json:"out"`
	Err  string   `json:"err"`
	// Start and End are wall-clock times; ExitCode the command's exit
	// status (-1 when it did not exit: killed, or it never started).
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	ExitCode int       `json:"exit_code"`
	// TimeoutNs is the bound it ran under; TimedOut says it reached it
	// (it was sent SIGTERM, then SIGKILL). Interrupted says the bench
	// itself was stopped (SIGINT, SIGTERM) while the step ran.
	TimeoutNs   int64 `json:"timeout_ns"`
	TimedOut    bool  `json:"timed_out,omitempty"`
	Interrupted bool  `json:"interrupted,omitempty"`
	// Error is why the command could not be run or waited for.
	Error string `json:"error,omitempty"`
	// Load1Before and Load1After are /proc/loadavg's 1-minute load
	// average around the step: how busy the machine was.
	Load1Before float64 `json:"load1_before"`
	Load1After  float64 `json:"load1_after"`
}

// Took is the step's wall time.
func (s Step) Took() time.Duration { return s.End.Sub(s.Start) }

// Done says the step finished on its own (whatever its exit code): a
// rerun into the same directory skips it.
func (s Step) Done() bool { return !s.Interrupted && s.ExitCode >= 0 && s.Error == "" }

// stepsFile is the log of steps in a bench directory.
const stepsFile = "steps.jsonl"

// readSteps reads dir's steps.jsonl; a later record of a name replaces
// an earlier one. A missing file is no steps.
func readSteps(dir string) (map[string]Step, []string, error) {
	f, err := os.Open(filepath.Join(dir, stepsFile))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Step{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	steps := map[string]Step{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var s Step
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", filepath.Join(dir, stepsFile), line, err)
		}
		if _, seen := steps[s.Name]; !seen {
			order = append(order, s.Name)
		}
		steps[s.Name] = s
	}
	return steps, order, sc.Err()
}

// appendStep adds s to dir's steps.jsonl.
func appendStep(dir string, s Step) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, stepsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// load1 is the 1-minute load average (NaN-free: 0 when unreadable).
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// killGrace is how long a step has between SIGTERM and SIGKILL (rtload
// stops a run cleanly on SIGTERM and writes complete results: a process
// of the default scenario needs a few seconds to end its trial).
const killGrace = 30 * time.Second

// runner runs the bench's steps: each in a process group of its own, so
// that a timeout or an interrupt reaches rtload's child processes too,
// with TMPDIR inside the bench directory, and each recorded in
// steps.jsonl.
type runner struct {
	dir string
	// ctx is cancelled when the bench is interrupted: the running step
	// gets SIGINT (rtload's Ctrl-C: complete results) and no other starts.
	ctx  context.Context
	done map[string]Step
	log  io.Writer
	// cleanup is run after a step that did not end on its own (timed
	// out, interrupted): rtload cleanup, for namespaces a killed run left.
	cleanup []string
}

// errInterrupted is what every step returns once the bench is stopped.
var errInterrupted = errors.New("interrupted")

// stepSpec is a step to run: argv, its stdout to name+ext and its
// stderr to name.err under the bench directory, bounded by timeout, after
// removing clear (what an unfinished earlier attempt left: rtload writes
// only into a new or empty directory).
type stepSpec struct {
	name, ext string
	timeout   time.Duration
	clear     []string
	argv      []string
}

// run runs step x, unless a finished step of its name is on record (it
// returns that one then). It fails only when the bench cannot go on:
// interrupted, or the step could not be recorded.
func (r *runner) run(x stepSpec) (Step, error) {
	if s, ok := r.done[x.name]; ok && s.Done() {
		return s, nil
	}
	if r.ctx.Err() != nil {
		return Step{}, errInterrupted
	}
	s := Step{Name: x.name, Argv: x.argv, Out: x.name + x.ext, Err: x.name + ".err", ExitCode: -1, TimeoutNs: int64(x.timeout)}
	for _, c := range x.clear {
		if err := os.RemoveAll(c); err != nil {
			return s, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(r.dir, s.Out)), 0o755); err != nil {
		return s, err
	}
	fmt.Fprintf(r.log, "verdicts: %s: %s\n", x.name, strings.Join(x.argv, " "))
	s.Load1Before = load1()
	s.Start = time.Now()
	s.exec(r, x.timeout)
	s.End = time.Now()
	s.Load1After = load1()
	if s.TimedOut || s.Interrupted || s.ExitCode < 0 {
		r.runCleanup(x.name)
	}
	fmt.Fprintf(r.log, "verdicts: %s: exit %d in %v%s\n", x.name, s.ExitCode, s.Took().Round(time.Second), s.note())
	if err := appendStep(r.dir, s); err != nil {
		return s, err
	}
	r.done[x.name] = s
	if s.Interrupted {
		return s, errInterrupted
	}
	return s, nil
}

func (s Step) note() string {
	switch {
	case s.TimedOut:
		return fmt.Sprintf(" (timed out after %v)", time.Duration(s.TimeoutNs))
	case s.Interrupted:
		return " (interrupted)"
	case s.Error != "":
		return " (" + s.Error + ")"
	}
	return ""
}

// exec runs the step's command and fills its exit code and marks.
func (s *Step) exec(r *runner, timeout time.Duration) {
	out, err := os.Create(filepath.Join(r.dir, s.Out))
	if err != nil {
		s.Error = err.Error()
		return
	}
	defer out.Close()
	errf, err := os.Create(filepath.Join(r.dir, s.Err))
	if err != nil {
		s.Error = err.Error()
		return
	}
	defer errf.Close()
	tmp := filepath.Join(r.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		s.Error = err.Error()
		return
	}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, errf
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.Error = err.Error()
		return
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var werr error
	select {
	case werr = <-waited:
	case <-timer.C:
		s.TimedOut = true
		werr = stopGroup(cmd, syscall.SIGTERM, waited)
	case <-r.ctx.Done():
		s.Interrupted = true
		werr = stopGroup(cmd, syscall.SIGINT, waited)
	}
	s.ExitCode = cmd.ProcessState.ExitCode()
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		s.Error = werr.Error()
	}
}

// stopGroup sends sig to the command's process group, then SIGKILL
// after killGrace, and waits for it.
func stopGroup(cmd *exec.Cmd, sig syscall.Signal, waited <-chan error) error {
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, sig)
	select {
	case err := <-waited:
		return err
	case <-time.After(killGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-waited
	}
}

// runCleanup runs the cleanup command (rtload cleanup) after step name,
// its output appended to cleanup.log.
func (r *runner) runCleanup(name string) {
	if len(r.cleanup) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, r.cleanup[0], r.cleanup[1:]...).CombinedOutput()
	f, ferr := os.OpenFile(filepath.Join(r.dir, "cleanup.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if ferr != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "after %s: %s (err %v)\n%s\n", name, strings.Join(r.cleanup, " "), err, out)
}
