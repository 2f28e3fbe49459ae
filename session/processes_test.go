package session

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/results"
)

// exitFailed is cmd/rtload's ExitFailed: a run that failed.
const exitFailed = 1

// exitCode is the code cmd/rtload exits with for a child's error err
// (its exitCodeOf, for the errors childExit returns): a stopped run's
// signal's, else exitFailed.
func exitCode(err error) int {
	if errors.Is(err, engine.ErrStopped) {
		return InterruptedCode(err)
	}
	return exitFailed
}

// TestChildExit: how a child's end reads in the parent. A child killed
// by a signal is named with it, not "exit status -1 (its error is
// above)" with nothing above (issue 34 row 5); one that stopped on a
// signal with its summary written stops the run with that signal's code.
func TestChildExit(t *testing.T) {
	killed := exec.Command("/bin/sh", "-c", "kill -KILL $$")
	err := childExit(killed.Run(), nil)
	if err == nil || !strings.Contains(err.Error(), "killed by SIGKILL") || strings.Contains(err.Error(), "above") {
		t.Errorf("killed child: %v, want it named killed by SIGKILL", err)
	}
	stopped := &results.Summary{Stopped: true}
	for _, tc := range []struct {
		code int
		sum  *results.Summary
		want int // the exit code of the error (exitCode)
	}{
		{ExitHangup, stopped, ExitHangup},
		{ExitQuit, stopped, ExitQuit},
		{ExitInterrupted, stopped, ExitInterrupted},
		{ExitHangup, nil, exitFailed}, // no summary: it failed
		{ExitUsage, stopped, exitFailed},
	} {
		err := childExit(exec.Command("/bin/sh", "-c", "exit "+strconv.Itoa(tc.code)).Run(), tc.sum)
		if got := exitCode(err); got != tc.want {
			t.Errorf("child exit %d (summary %v): %v, code %d, want %d", tc.code, tc.sum != nil, err, got, tc.want)
		}
	}
}
