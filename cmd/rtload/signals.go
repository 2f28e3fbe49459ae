package main

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

// signalWindow is how long after a first stop signal further ones count
// as the same: one Ctrl-C reaches every process of the terminal's
// foreground group, so rtload under a wrapper (timeout, sudo) gets it
// twice within microseconds, once from the terminal and once forwarded.
const signalWindow = 500 * time.Millisecond

// forcedExitWait bounds how long a second Ctrl-C waits for a summary.json
// write in flight before rtload exits.
const forcedExitWait = 3 * time.Second

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

// stopSignal is the cause of a run stopped by a signal (the cancel cause
// of its context, wrapped in engine.ErrStopped's error): exitCode maps it
// to the signal's code.
type stopSignal struct{ sig syscall.Signal }

func (s stopSignal) Error() string {
	for _, e := range stopSignals {
		if e.sig == s.sig {
			return fmt.Sprintf("signal %s (%s)", e.name, e.why)
		}
	}
	return "signal " + s.sig.String()
}

// code is the exit code of a run s stopped.
func (s stopSignal) code() int {
	for _, e := range stopSignals {
		if e.sig == s.sig {
			return e.code
		}
	}
	return ExitInterrupted
}

// name is the signal's name ("SIGHUP").
func (s stopSignal) name() string {
	for _, e := range stopSignals {
		if e.sig == s.sig {
			return e.name
		}
	}
	return s.sig.String()
}

// signalOfCode is the stop signal whose exit code is code (SIGINT for
// ExitInterrupted, which SIGTERM shares), false when none has it.
func signalOfCode(code int) (stopSignal, bool) {
	for _, e := range stopSignals {
		if e.code == code {
			return stopSignal{e.sig}, true
		}
	}
	return stopSignal{}, false
}

// stoppedBy returns the signal that stopped the run err reports, if any.
func stoppedBy(err error) (stopSignal, bool) {
	var s stopSignal
	ok := errors.As(err, &s)
	return s, ok
}

// interruptedCode is the exit code of a stopped run: its signal's, else
// ExitInterrupted.
func interruptedCode(err error) int {
	if s, ok := stoppedBy(err); ok {
		return s.code()
	}
	return ExitInterrupted
}

// signalWatch turns stop signals into a cancelled context for one run.
// It watches from watchSignals to the process's exit (signal.Notify is
// never undone, so that a signal in the last microseconds, while the
// report is printed, cannot kill the process with its default action).
type signalWatch struct {
	errw   io.Writer
	sigs   chan os.Signal
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu sync.Mutex
	sv *saver // set once the results directory exists (attach)

	// child marks a child of a multi-process run (watchChildSignals).
	child bool
}

// watchSignals starts watching SIGINT, SIGTERM, SIGHUP and SIGQUIT: the
// first cancels the returned watch's context with a stopSignal (an
// orderly stop), and another one after signalWindow exits at once (a
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
func watchSignals(errw io.Writer) *signalWatch {
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
func watchChildSignals(errw io.Writer) *signalWatch {
	return startWatch(errw, true)
}

func startWatch(errw io.Writer, child bool) *signalWatch {
	ctx, cancel := context.WithCancelCause(context.Background())
	w := &signalWatch{errw: errw, sigs: make(chan os.Signal, 8), ctx: ctx, cancel: cancel, child: child}
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
func (w *signalWatch) context() context.Context { return w.ctx }

// stopped is the stop signal received so far (a stopSignal), nil if none.
func (w *signalWatch) stopped() error {
	if w.ctx.Err() == nil {
		return nil
	}
	return context.Cause(w.ctx)
}

// attach hands the watch the run's saver, for a forced exit to wait for
// a summary write in flight and to release the results directory.
func (w *signalWatch) attach(sv *saver) {
	w.mu.Lock()
	w.sv = sv
	w.mu.Unlock()
}

func (w *signalWatch) loop() {
	s := stopSignal{(<-w.sigs).(syscall.Signal)}
	first := time.Now()
	switch {
	case w.child:
	case s.sig == syscall.SIGHUP:
		fmt.Fprintf(w.errw, "\nrtload: %s (%s): stopping, writing results\n", s.name(), "hangup")
	case s.sig == syscall.SIGQUIT:
		fmt.Fprintf(w.errw, "\nrtload: %s: stopping, writing results; goroutine stacks follow at exit (again to force exit)\n", s.name())
	default:
		fmt.Fprintf(w.errw, "\nrtload: %s: stopping, writing results (again to force exit)\n", s.name())
	}
	w.cancel(s)
	for s2 := range w.sigs {
		if time.Since(first) < signalWindow || s2 == syscall.SIGHUP {
			continue // the same Ctrl-C, delivered to rtload and to a wrapper; or a hangup's echo
		}
		w.mu.Lock()
		sv := w.sv
		w.mu.Unlock()
		forceExit(w.errw, stopSignal{s2.(syscall.Signal)}, sv)
	}
}

// forceExit ends the process after a second signal, leaving the finished
// trials' summary.json and no temporary file, and exits with the second
// signal's code.
func forceExit(errw io.Writer, s stopSignal, sv *saver) {
	fmt.Fprintf(errw, "rtload: %s again: exiting now; summary.json keeps the finished trials\n", s.name())
	if sv != nil {
		if tmp := sv.abandon(forcedExitWait); len(tmp) > 0 {
			fmt.Fprintf(errw, "rtload: removed unfinished %v\n", tmp)
		}
	}
	exitNow(errw, s.code())
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

// dumpGoroutines prints every goroutine's stack, as the Go runtime does
// for SIGQUIT, but after the run has stopped and written its results: by
// then no real-time reader is running, so stopping the world to take the
// stacks waits for nothing.
func dumpGoroutines(w io.Writer) {
	buf := make([]byte, maxStackDump)
	n := runtime.Stack(buf, true)
	fmt.Fprintf(w, "rtload: SIGQUIT: goroutine stacks at exit:\n\n%s\n", buf[:n])
}
