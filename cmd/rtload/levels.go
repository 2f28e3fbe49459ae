package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/report"
)

// Output levels of the commands that measure or judge (run, report,
// compare, check, explain): the default prints what a person reads, -v
// everything, -q only the closing block. The closing block is last at
// every level; summary.json and --format json hold everything at all of
// them.

// levelFlags adds -q/--quiet and -v/--verbose to cmd.
func levelFlags(cmd *cobra.Command, quiet, verbose *bool) {
	cmd.Flags().BoolVarP(quiet, "quiet", "q", false, "print only the closing block (the answer); no progress bar")
	cmd.Flags().BoolVarP(verbose, "verbose", "v", false, "print everything: every table, block and verdict line (what the default leaves out)")
}

// levelOf is the level -q and -v ask for.
func levelOf(quiet, verbose bool) (report.Level, error) {
	switch {
	case quiet && verbose:
		return 0, usageError{Err: errors.New("-q and -v: give one")}
	case quiet:
		return report.Quiet, nil
	case verbose:
		return report.Verbose, nil
	}
	return report.Normal, nil
}
