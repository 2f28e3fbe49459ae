// Package session is a run of rtload as a command sees it, one floor
// under the CLI: what cmd/rtload's run and check call once their flags
// are parsed. Like rtla's tool_ops, a session goes through named phases,
// each a method of its own:
//
//   - Plan: the scenario with the command's typed Overrides applied
//     (each under the flag that gave it, so that a bad value blames that
//     flag), validated for this machine and expanded into trials;
//   - preflight: the address space, cpu: auto and the requirements
//     (FitMachine), privileges, and what will disturb the readers;
//   - the out directory: created (or taken over), handed to a
//     container volume's owner, removed again when nothing was measured;
//   - processes: one in-process run, or fresh child processes
//     (the __process protocol: RunChild, the launcher);
//   - save: summary.json after every trial and at the end (the saver);
//   - interop: the same histograms in other tools' formats;
//   - closing: what the directory holds, said on stderr.
//
// Execute runs them in order and returns the Outcome (Run: as a session
// of a sessions directory, run --append); WriteOutcome prints it (WriteRun,
// WriteRunJSON) and returns what run exits with, StrictExit's --strict
// included. rtload check is OpenCheck (the
// baseline read, the verdict's check made) and CheckRun.Run (its plan,
// the consent a baseline's own scenario needs, the processes with the
// check looking after each, the verdict's end). Stop signals are watched
// here (Watch), and the errors a command maps to exit codes are typed
// here (UsageError, ExitError, StopSignal, BudgetSpent). No cobra: the
// command's flags arrive as typed Overrides and Options.
//
// The other commands are one call here each, and their views: Compare
// (WriteCompare), Explain (WriteExplain), Plot, List, Validate, Cleanup
// and ReadRunReport.
package session
