package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
)

// Exit codes. One function maps errors to them; there is no registry.
const (
	// ExitOK: the run (or command) completed.
	ExitOK = 0
	// ExitFailed: the run failed (a syscall, a socket, a results file).
	ExitFailed = 1
	// ExitUsage: bad command line or invalid scenario.
	ExitUsage = 2
	// ExitPrivilege: a privilege is missing or the machine lacks a feature.
	ExitPrivilege = 3
	// ExitInterrupted: stopped by SIGINT/SIGTERM; results were still written.
	ExitInterrupted = 130
)

// usageError marks command-line mistakes.
type usageError struct{ error }

func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(os.Stderr, "rtload:", err)
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
