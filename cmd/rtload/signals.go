package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rtload/rtload/net/netns"
)

// signalWindow is how long after a first SIGINT or SIGTERM further ones
// count as the same: one Ctrl-C reaches every process of the terminal's
// foreground group, so rtload under a wrapper (timeout, sudo) gets it
// twice within microseconds, once from the terminal and once forwarded.
const signalWindow = 500 * time.Millisecond

// forcedExitWait bounds how long a second Ctrl-C waits for a summary.json
// write in flight before rtload exits.
const forcedExitWait = 3 * time.Second

// watchSignals stops the run on SIGINT or SIGTERM (cancel), and on another
// one after signalWindow exits at once: it waits (bounded) for a summary
// write in flight so that the finished trials stay saved, removes
// temporary files and rtload's namespaces, and exits ExitInterrupted. The
// returned func stops watching.
func watchSignals(errw io.Writer, cancel context.CancelCauseFunc, sv *saver) (stop func()) {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		first := time.Now()
		fmt.Fprintf(errw, "\nrtload: %v: stopping, writing results (again to force exit)\n", s)
		cancel(fmt.Errorf("signal %v", s))
		for s2 := range sigs {
			if time.Since(first) < signalWindow {
				continue // the same Ctrl-C, delivered to rtload and to a wrapper
			}
			forceExit(errw, s2, sv)
		}
	}()
	return func() { signal.Stop(sigs); close(sigs) }
}

// forceExit ends the process after a second signal, leaving the finished
// trials' summary.json and no temporary file.
func forceExit(errw io.Writer, s os.Signal, sv *saver) {
	fmt.Fprintf(errw, "rtload: %v again: exiting now; summary.json keeps the finished trials\n", s)
	if tmp := sv.abandon(forcedExitWait); len(tmp) > 0 {
		fmt.Fprintf(errw, "rtload: removed unfinished %v\n", tmp)
	}
	// No time for an orderly close: remove our namespaces (and the tap
	// devices in them) so nothing is left behind.
	if removed, err := netns.RemoveOwned(os.Getpid()); err != nil {
		fmt.Fprintf(errw, "rtload: %v (rtload cleanup removes it later)\n", err)
	} else if len(removed) > 0 {
		fmt.Fprintf(errw, "rtload: removed %v\n", removed)
	}
	os.Exit(ExitInterrupted)
}
