package session

import (
	"fmt"
	"time"
)

// Exit codes a session's own errors stand for (cmd/rtload's exit.go
// documents every code): a run stopped by a signal exits with its
// signal's, and a child of a multi-process run stopped by one exits with
// it too.
const (
	// ExitUsage: a bad command line or invalid scenario.
	ExitUsage = 2
	// ExitInterrupted: stopped by SIGINT/SIGTERM; results were still written.
	ExitInterrupted = 130
	// ExitHangup: stopped by SIGHUP (the terminal or ssh session closed).
	ExitHangup = 129
	// ExitQuit: stopped by SIGQUIT (Ctrl-\); then the goroutine stacks.
	ExitQuit = 131
	// ExitNotAsAsked: with --strict (run, report), the run completed but
	// was not the run asked for (StrictExit).
	ExitNotAsAsked = 4
)

// UsageError marks a refusal that is the user's to fix: a command-line
// mistake, or a scenario or directory the command will not run
// (ExitUsage). Its message is its error's; it does not unwrap, so that
// what it says decides the exit code, not what it wraps.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }

// ExitError carries an exit code whose message (if any) is Msg; Cause,
// when set, is the error the code stands for (a stopped run's, so that
// main still sees its signal).
type ExitError struct {
	Code  int
	Msg   string
	Cause error
}

func (e ExitError) Error() string { return e.Msg }

func (e ExitError) Unwrap() error { return e.Cause }

// BudgetSpent is the cause of a check's run stopped because its first
// process ran past the budget (Options.FirstProcessLimit): cannot judge
// (125), not interrupted.
type BudgetSpent struct{ Budget time.Duration }

func (b BudgetSpent) Error() string {
	return fmt.Sprintf("the --budget of %v ran out in the first process (its setup and trials take longer): give a larger --budget", b.Budget)
}
