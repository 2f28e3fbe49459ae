package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/rtload/rtload/net/netns"
)

// SignalWindow is how long after a first stop signal further ones count
// as the same: one Ctrl-C reaches every process of the terminal's
// foreground group, so rtload under a wrapper (timeout, sudo) gets it
// twice within microseconds, once from the terminal and once forwarded.
const SignalWindow = 500 * time.Millisecond

// ForcedExitWait bounds how long a second Ctrl-C waits for a summary.json
// write in flight before rtload exits.
const ForcedExitWait = 3 * time.Second

// stopSignals are the signals that stop a run cleanly (results written for
// every trial that ran, the namespace removed), each with its exit code
// (128 + the signal's number, as a shell reports a process it killed;
// SIGTERM keeps SIGINT's 130) and what sends it. SIGHUP comes from a
// closed terminal or ssh session, SIGQUIT from Ctrl-\ (its goroutine
// stacks are printed at exit, after the results are written).
var stopSignals = []struct {
	sig  syscall.Signal
	name string
	code int
	why  string
}{
	{syscall.SIGINT, "SIGINT", ExitInterrupted, "interrupt"},
	{syscall.SIGTERM, "SIGTERM", ExitInterrupted, "terminated"},
	{syscall.SIGHUP, "SIGHUP", ExitHangup, "hangup: the terminal or ssh session closed"},
	{syscall.SIGQUIT, "SIGQUIT", ExitQuit, "quit"},
}

// StopSignals are the signals that stop a run cleanly, in stopSignals'
// order.
func StopSignals() []StopSignal {
	var out []StopSignal
	for _, e := range stopSignals {
		out = append(out, StopSignal{e.sig})
	}
	return out
}

// StopSignal is the cause of a run stopped by a signal (the cancel cause
// of its context, wrapped in engine.ErrStopped's error): exitCode maps it
// to the signal's code.
type StopSignal struct{ Sig syscall.Signal }

func (s StopSignal) Error() string {
	for _, e := range stopSignals {
		if e.sig == s.Sig {
			return fmt.Sprintf("signal %s (%s)", e.name, e.why)
		}
	}
	return "signal " + s.Sig.String()
}

// Code is the exit code of a run s stopped.
func (s StopSignal) Code() int {
	for _, e := range stopSignals {
		if e.sig == s.Sig {
			return e.code
		}
	}
	return ExitInterrupted
}

// Name is the signal's name ("SIGHUP").
func (s StopSignal) Name() string {
	for _, e := range stopSignals {
		if e.sig == s.Sig {
			return e.name
		}
	}
	return s.Sig.String()
}

// signalOfCode is the stop signal whose exit code is code (SIGINT for
// ExitInterrupted, which SIGTERM shares), false when none has it.
func signalOfCode(code int) (StopSignal, bool) {
	for _, e := range stopSignals {
		if e.code == code {
			return StopSignal{e.sig}, true
		}
	}
	return StopSignal{}, false
}

// StoppedBy returns the signal that stopped the run err reports, if any.
func StoppedBy(err error) (StopSignal, bool) {
	var s StopSignal
	ok := errors.As(err, &s)
	return s, ok
}

// InterruptedCode is the exit code of a stopped run: its signal's, else
// ExitInterrupted.
func InterruptedCode(err error) int {
	if s, ok := StoppedBy(err); ok {
		return s.Code()
	}
	return ExitInterrupted
}

// Watch turns stop signals into a cancelled context for one run.
// It watches from watchSignals to the process's exit (signal.Notify is
// never undone, so that a signal in the last microseconds, while the
// report is printed, cannot kill the process with its default action).
type Watch struct {
	errw   io.Writer
	sigs   chan os.Signal
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu sync.Mutex
	sv *saver // set once the results directory exists (attach)

	// child marks a child of a multi-process run (watchChildSignals).
	child bool
}

// WatchSignals starts watching SIGINT, SIGTERM, SIGHUP and SIGQUIT: the
// first cancels the returned watch's context with a StopSignal (an
// orderly stop), and another one after SignalWindow exits at once (a
// second SIGHUP never does: it comes from the terminal's or the shell's
// machinery, not from a user asking again). Of the signals this process
// was started with ignored, only SIGHUP stays ignored (watched): nohup's
// convention. SIGINT, SIGTERM and SIGQUIT stop the run whatever was
// inherited, as cyclictest, perf, fio and stress-ng do: a non-interactive
// shell starts its background jobs (`rtload run … &`) with SIGINT and
// SIGQUIT ignored, and `kill -INT $!` from the script must still stop
// them. SIGPIPE is ignored from here on, so that a write to a closed
// terminal, ssh pipe or `| head` fails instead of killing the run before
// its results are saved.
func WatchSignals(errw io.Writer) *Watch {
	return startWatch(errw, false)
}

// watchChildSignals is watchSignals for a child of a multi-process run
// (__process): it stops on the same signals as its parent, so that a
// hangup or Ctrl-\ sent to the process group (a closing terminal or ssh
// session) stops it cleanly instead of killing it with the default
// action, and the parent gets its summary. It says nothing of the first
// signal (the parent does); a second one exits at once as in the parent,
// removing the child's namespaces. (A parent that dies kills it:
// parentDeathSignal.)
func watchChildSignals(errw io.Writer) *Watch {
	return startWatch(errw, true)
}

func startWatch(errw io.Writer, child bool) *Watch {
	ctx, cancel := context.WithCancelCause(context.Background())
	w := &Watch{errw: errw, sigs: make(chan os.Signal, 8), ctx: ctx, cancel: cancel, child: child}
	signal.Notify(w.sigs, watchedSignals()...)
	signal.Ignore(syscall.SIGPIPE)
	go w.loop()
	return w
}

// watchedSignals are the stop signals this process watches: every one
// of stopSignals, less SIGHUP when the process was started with it
// ignored (nohup). signal.Notify installs a handler for an ignored SIGINT
// or SIGQUIT, so they are watched whatever was inherited.
func watchedSignals() []os.Signal {
	var watched []os.Signal
	for _, e := range stopSignals {
		if e.sig == syscall.SIGHUP && signal.Ignored(e.sig) {
			continue
		}
		watched = append(watched, e.sig)
	}
	return watched
}

// context is the run's context, cancelled by the first stop signal.
func (w *Watch) context() context.Context { return w.ctx }

// stopped is the stop signal received so far (a StopSignal), nil if none.
func (w *Watch) stopped() error {
	if w.ctx.Err() == nil {
		return nil
	}
	return context.Cause(w.ctx)
}

// attach hands the watch the run's saver, for a forced exit to wait for
// a summary write in flight and to release the results directory.
func (w *Watch) attach(sv *saver) {
	w.mu.Lock()
	w.sv = sv
	w.mu.Unlock()
}

func (w *Watch) loop() {
	s := StopSignal{(<-w.sigs).(syscall.Signal)}
	first := time.Now()
	switch {
	case w.child:
	case s.Sig == syscall.SIGHUP:
		fmt.Fprintf(w.errw, "\nrtload: %s (%s): stopping, writing results\n", s.Name(), "hangup")
	case s.Sig == syscall.SIGQUIT:
		fmt.Fprintf(w.errw, "\nrtload: %s: stopping, writing results; goroutine stacks follow at exit (again to force exit)\n", s.Name())
	default:
		fmt.Fprintf(w.errw, "\nrtload: %s: stopping, writing results (again to force exit)\n", s.Name())
	}
	w.cancel(s)
	for s2 := range w.sigs {
		if time.Since(first) < SignalWindow || s2 == syscall.SIGHUP {
			continue // the same Ctrl-C, delivered to rtload and to a wrapper; or a hangup's echo
		}
		w.mu.Lock()
		sv := w.sv
		w.mu.Unlock()
		forceExit(w.errw, StopSignal{s2.(syscall.Signal)}, sv)
	}
}

// forceExit ends the process after a second signal, leaving the finished
// trials' summary.json and no temporary file, and exits with the second
// signal's code.
func forceExit(errw io.Writer, s StopSignal, sv *saver) {
	fmt.Fprintf(errw, "rtload: %s again: exiting now; summary.json keeps the finished trials\n", s.Name())
	if sv != nil {
		if tmp := sv.abandon(ForcedExitWait); len(tmp) > 0 {
			fmt.Fprintf(errw, "rtload: removed unfinished %v\n", tmp)
		}
	}
	exitNow(errw, s.Code())
}

// exitNow exits with code without an orderly close, removing this
// process's namespaces (and the tap devices in them) first so nothing is
// left behind.
func exitNow(errw io.Writer, code int) {
	if removed, err := netns.RemoveOwned(os.Getpid()); err != nil {
		fmt.Fprintf(errw, "rtload: %v (rtload cleanup removes it later)\n", err)
	} else if len(removed) > 0 {
		fmt.Fprintf(errw, "rtload: removed %v\n", removed)
	}
	os.Exit(code)
}

// maxStackDump bounds the goroutine stacks printed after a SIGQUIT.
const maxStackDump = 4 << 20

// DumpGoroutines prints every goroutine's stack, as the Go runtime does
// for SIGQUIT, but after the run has stopped and written its results: by
// then no real-time reader is running, so stopping the world to take the
// stacks waits for nothing.
func DumpGoroutines(w io.Writer) {
	buf := make([]byte, maxStackDump)
	n := runtime.Stack(buf, true)
	fmt.Fprintf(w, "rtload: SIGQUIT: goroutine stacks at exit:\n\n%s\n", buf[:n])
}
