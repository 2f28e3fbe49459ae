package session

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/compare/view"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/verdict"
)

// WriteRun prints a run's results at level, ending on its closing block:
// the brief report (report.Brief) or, verbose, the whole of it with the
// interleaved changes and the sizing; then view.RunClosing. saveErr,
// when the summary was not saved in full, says so in the closing block.
// run and report both print with it.
func WriteRun(w io.Writer, s *results.Summary, dir, saveErr string, level report.Level) error {
	w = termsafe.Writer(w)
	res, cerr := facts.Compare([]compare.Run{{Label: "run", Summary: s}})
	switch level {
	case report.Verbose:
		if err := report.Report(w, s); err != nil {
			return err
		}
		if err := view.WriteInterleaved(w, s); err != nil {
			return err
		}
		printSizing(w, res)
	case report.Normal:
		if err := report.Brief(w, s); err != nil {
			return err
		}
		if s.ProcessCount() > 1 {
			printSizing(w, res) // a baseline's sizing: what run --processes is for
		}
	}
	var c report.Closing
	if cerr != nil {
		c.AddText("no comparison: " + cerr.Error())
		c.Add(view.MarksLine(view.RunMarks(s), len(s.Trials)))
		c.Add("results: " + dir)
	} else {
		c = view.RunClosing(res, s, dir, saveErr)
	}
	if d := verdict.RunDropped(s); d != nil && s.ProcessCount() > 1 {
		// Before the last line (the results directory or why not saved).
		c.Lines = slices.Insert(c.Lines, max(len(c.Lines)-1, 0), d.RunLine())
	}
	return c.Write(w, level == report.Quiet)
}

// WriteOutcome prints a run's outcome o, as JSON (format "json") or as
// text at level, and returns the error run exits with: the run's and the
// save's first, then StrictExit's. A run that left no summary prints
// nothing and returns its error.
func WriteOutcome(w io.Writer, o Outcome, format string, level report.Level, strict bool) error {
	if o.Sum == nil {
		return o.RunErr
	}
	if format == "json" {
		if err := WriteRunJSON(w, o); err != nil {
			return errors.Join(o.RunErr, o.SaveErr, err)
		}
		return errors.Join(o.RunErr, o.SaveErr, StrictExit(strict, o.Sum))
	}
	saveErr := ""
	if o.SaveErr != nil {
		saveErr = o.SaveErr.Error() + "; " + o.Kept
	}
	if err := WriteRun(w, o.Sum, o.Path, saveErr, level); err != nil {
		return errors.Join(o.RunErr, o.SaveErr, err)
	}
	if o.SaveErr != nil {
		return errors.Join(o.RunErr, o.SaveErr)
	}
	if o.RunErr != nil {
		return o.RunErr
	}
	return StrictExit(strict, o.Sum)
}

// StrictExit is the error a run exits with under --strict when s is not
// the run asked for (exit ExitNotAsAsked): degraded, a trial invalid, a
// reader starved, traffic not as specified (view.RunMarks); nil
// otherwise, and always without strict. A stopped or incomplete run has
// its own code.
func StrictExit(strict bool, s *results.Summary) error {
	if !strict || s == nil {
		return nil
	}
	var kinds []string
	for _, m := range view.RunMarks(s) {
		if m.Kind != results.MarkStopped.Phrase() && m.Kind != results.MarkIncomplete.Phrase() {
			kinds = append(kinds, m.Kind)
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	return ExitError{Code: ExitNotAsAsked, Msg: fmt.Sprintf("--strict: not the run asked for (%s): exit %d", strings.Join(kinds, ", "), ExitNotAsAsked)}
}

// RunDoc is the document run and report print with --format json
// (schema rtload-report): the run read back (compare.RunReport), with,
// for a run of several processes, what a default check against it can
// see (Sizing: verdict.SizeRun) and its processes the machine disturbed,
// which a check leaves out (Replaced: verdict.RunDropped). Its figures
// are over every process, those included, as the text's.
type RunDoc struct {
	*compare.RunReport
	Sizing   *verdict.Detectable `json:"sizing,omitempty"`
	Replaced *verdict.Dropped    `json:"replaced,omitempty"`
}

// newRunDoc is r's RunDoc.
func newRunDoc(r compare.Run) (*RunDoc, error) {
	doc, err := compare.NewRunReport(r)
	if err != nil {
		return nil, err
	}
	out := &RunDoc{RunReport: doc}
	if n := r.Summary.ProcessCount(); n > 1 {
		out.Replaced = verdict.RunDropped(r.Summary)
		clean := n
		if out.Replaced != nil {
			clean -= len(out.Replaced.Disturbed)
		}
		out.Sizing = verdict.SizeRun(r, clean, verdict.PerProcess(r.Summary), verdict.Options{})
	}
	return out, nil
}

// ReadRunReport is report --format json's document: the results
// directory dir read back as a RunDoc, as run prints it; a directory
// that is not a results directory is bad input (UsageError).
func ReadRunReport(dir string) (*RunDoc, error) {
	runs, err := load.Runs([]string{dir}, nil)
	if err != nil {
		return nil, UsageError{Err: err}
	}
	return newRunDoc(runs[0])
}

// WriteRunJSON prints the run as a RunDoc: read back from its results
// directory when saved (with its wakeup logs), else from memory.
func WriteRunJSON(w io.Writer, o Outcome) error {
	r := compare.Run{Label: filepath.Base(o.Path), Dir: o.Path, Summary: o.Sum}
	if o.SaveErr == nil {
		if runs, err := load.Runs([]string{o.Path}, nil); err == nil {
			r = runs[0]
		}
	}
	doc, err := newRunDoc(r)
	if err != nil {
		return err
	}
	if o.SaveErr != nil {
		doc.Saved, doc.SaveError = false, o.SaveErr.Error()+"; "+o.Kept
	}
	if o.RunErr != nil {
		doc.Error = o.RunErr.Error()
	}
	return compare.WriteJSON(w, doc)
}

// printSizing says how many processes a baseline like this run needs for
// a check to detect a 5% or a 10% change (verdict.Sizing), from the
// run's one-run Result (nil: nothing to say).
func printSizing(w io.Writer, res *compare.Result) {
	if res == nil {
		return
	}
	lines := verdict.Sizing(res, compare.DefaultThreshold, verdict.DefaultLooks)
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
