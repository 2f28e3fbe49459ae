package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/session"
	"github.com/rtload/rtload/verdict"
)

// Exit codes. One function maps errors to them; there is no registry.
// `rtload check` and `rtload compare --fail-on` are gates: they exit with
// their verdict's own code (verdict.Verdict.ExitCode): ExitOK when no
// headline metric is slower beyond the threshold, ExitSlower when one is
// and ExitCannotJudge when the runs cannot be judged, so that `git bisect
// run` marks a commit good, bad or skipped.
const (
	// ExitOK: the run (or command) completed; a gate passed.
	ExitOK = 0
	// ExitFailed: the run failed (a syscall, a socket, a results file).
	// rtload check never exits with it for a failed run (that is
	// ExitCannotJudge): from a gate, 1 always means ExitSlower.
	ExitFailed = 1
	// ExitSlower: a gate found a headline metric slower than the baseline
	// beyond --threshold, its whole 95% CI beyond it (git bisect: bad).
	ExitSlower = verdict.ExitSlower
	// ExitUsage: bad command line or invalid scenario, or a baseline that
	// is not a results directory. (git bisect run counts it as bad: try a
	// bisect script once by hand.)
	ExitUsage = session.ExitUsage
	// ExitPrivilege: a privilege is missing or the machine lacks a feature.
	// rtload check exits ExitCannotJudge instead.
	ExitPrivilege = 3
	// ExitCannotJudge: a gate cannot judge: a degraded, stopped or
	// incomplete run, a missing privilege or requirement, a failed run, no
	// metric with a confidence interval (git bisect: skip this commit).
	ExitCannotJudge = verdict.ExitCannotJudge
	// ExitInterrupted: stopped by SIGINT/SIGTERM; results were still written.
	// (git bisect run stops on it.)
	ExitInterrupted = session.ExitInterrupted
	// ExitHangup: stopped by SIGHUP (the terminal or ssh session closed);
	// results were still written, as for ExitInterrupted.
	ExitHangup = session.ExitHangup
	// ExitQuit: stopped by SIGQUIT (Ctrl-\); results were still written,
	// then the goroutine stacks were printed.
	ExitQuit = session.ExitQuit
	// ExitNotAsAsked: with --strict (run, report), the run completed and
	// its results are written, but it was not the run asked for: degraded,
	// or a trial invalid (the kernel changed what was measured, a reader
	// measured nothing), with a starved reader or with traffic not as
	// specified (view.RunMarks). Without --strict such a run exits 0,
	// its closing block saying so: a soak or an exploration is not a gate.
	ExitNotAsAsked = session.ExitNotAsAsked
)

// strictFlag adds --strict to cmd.
func strictFlag(cmd *cobra.Command, strict *bool) {
	cmd.Flags().BoolVar(strict, "strict", false, fmt.Sprintf("exit %d when the run was not the run asked for (degraded, a trial invalid, a reader starved, traffic not as specified); without it such a run exits 0 and its closing block says so", ExitNotAsAsked))
}

// usageError marks command-line mistakes (session.UsageError).
type usageError = session.UsageError

// exitError carries a gate's exit code (session.ExitError); its message
// (if any) was printed already by the command.
type exitError = session.ExitError

func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var xe exitError
	if errors.As(err, &xe) {
		if xe.Msg != "" {
			fmt.Fprintln(os.Stderr, "rtload:", termsafe.Lines(xe.Msg))
		}
		return xe.Code
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
		return xe.Code
	}
	var ue usageError
	switch {
	case errors.Is(err, engine.ErrStopped):
		return session.InterruptedCode(err)
	case errors.As(err, new(session.StopSignal)): // stopped before the run started
		return session.InterruptedCode(err)
	case errors.Is(err, scenario.ErrInvalid), errors.As(err, &ue):
		return ExitUsage
	case errors.Is(err, rt.ErrNoPrivilege), errors.Is(err, rt.ErrNotSupported):
		return ExitPrivilege
	}
	return ExitFailed
}
