package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
)

// Exit codes. One function maps errors to them; there is no registry.
// `rtload check` and `rtload compare --fail-on` are gates: they exit
// ExitOK when no headline metric is slower beyond the threshold,
// ExitSlower when one is and ExitCannotJudge when the runs cannot be
// judged, so that `git bisect run` marks a commit good, bad or skipped.
const (
	// ExitOK: the run (or command) completed; a gate passed.
	ExitOK = 0
	// ExitFailed: the run failed (a syscall, a socket, a results file).
	// rtload check never exits with it for a failed run (that is
	// ExitCannotJudge): from a gate, 1 always means ExitSlower.
	ExitFailed = 1
	// ExitSlower: a gate found a headline metric slower than the baseline
	// beyond --threshold, its whole 95% CI beyond it (git bisect: bad).
	ExitSlower = 1
	// ExitUsage: bad command line or invalid scenario, or a baseline that
	// is not a results directory. (git bisect run counts it as bad: try a
	// bisect script once by hand.)
	ExitUsage = 2
	// ExitPrivilege: a privilege is missing or the machine lacks a feature.
	// rtload check exits ExitCannotJudge instead.
	ExitPrivilege = 3
	// ExitCannotJudge: a gate cannot judge: a degraded, stopped or
	// incomplete run, a missing privilege or requirement, a failed run, no
	// metric with a confidence interval (git bisect: skip this commit).
	ExitCannotJudge = 125
	// ExitInterrupted: stopped by SIGINT/SIGTERM; results were still written.
	// (git bisect run stops on it.)
	ExitInterrupted = 130
)

// usageError marks command-line mistakes.
type usageError struct{ error }

// exitError carries a gate's exit code; its message (if any) was printed
// already by the command.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var xe exitError
	if errors.As(err, &xe) {
		if xe.msg != "" {
			fmt.Fprintln(os.Stderr, "rtload:", termsafe.Lines(xe.msg))
		}
		return xe.code
	}
	// An error may name files and values read from results other people
	// wrote: nothing in it reaches the terminal raw.
	fmt.Fprintln(os.Stderr, "rtload:", termsafe.Lines(err.Error()))
	return exitCodeOf(err)
}

// exitCodeOf is the code rtload exits with for err, printing nothing.
func exitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var xe exitError
	if errors.As(err, &xe) {
		return xe.code
	}
	var ue usageError
	switch {
	case errors.Is(err, engine.ErrStopped):
		return ExitInterrupted
	case errors.Is(err, scenario.ErrInvalid), errors.As(err, &ue):
		return ExitUsage
	case errors.Is(err, rt.ErrNoPrivilege), errors.Is(err, rt.ErrNotSupported):
		return ExitPrivilege
	}
	return ExitFailed
}
