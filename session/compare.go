package session

import (
	"io"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/compare/view"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/verdict"
)

// Compare is rtload compare's computation: the results directories dirs
// loaded (labels, when given, naming their columns), compared, and judged
// by gate when gating (--fail-on). A directory that is not a results
// directory, or a gate that cannot judge the runs, is the user's to fix
// (UsageError), gate or not.
func Compare(dirs, labels []string, gate verdict.Options, gating bool) (verdict.Compared, []compare.Run, error) {
	runs, err := load.Runs(dirs, labels)
	if err != nil { // not a results directory: bad input (2), gate or not
		return verdict.Compared{}, nil, UsageError{Err: err}
	}
	copt := compare.Options{Threshold: gate.Threshold}
	judged, left, more := runs, []verdict.LeftOut(nil), []string(nil)
	if gating {
		if err := verdict.ControlTimed(runs, gate.Control); err != nil {
			return verdict.Compared{}, nil, UsageError{Err: err}
		}
		copt = gate.CompareOptions() // the spike rates the tail guard judges too
		// As a check judges a baseline: the processes the machine
		// disturbed (those a run of --processes replaced) left out.
		judged, left, more = verdict.GateRuns(runs)
	}
	res, err := facts.CompareWith(judged, copt)
	if err != nil {
		return verdict.Compared{}, nil, err
	}
	c := verdict.Compared{Result: res}
	if gating {
		if c, err = verdict.JudgeRuns(judged, res, gate, more...); err != nil {
			return verdict.Compared{}, nil, UsageError{Err: err}
		}
		c.LeftOut = left
	}
	return c, runs, nil
}

// WriteCompare prints c as text at level, ending on its closing block:
// the gate's (verdict.Gate.Closing, with the code compare returns) when
// there is one, else the comparison's (view.Closing).
func WriteCompare(w io.Writer, c verdict.Compared, runs []compare.Run, level report.Level) error {
	switch level {
	case report.Verbose:
		if err := c.Write(w, "text"); err != nil {
			return err
		}
	case report.Normal:
		if err := view.Brief(w, c.Result); err != nil {
			return err
		}
	}
	closing := view.Closing(c.Result, runsMarked(runs))
	if g := c.Gate; g != nil {
		extra := view.MachineLines(c.Result)
		for _, l := range c.LeftOut {
			extra = append(extra, l.LineOf(l.Label))
		}
		closing = g.Closing("gate", runsMarked(runs), extra, g.ExitCode())
	}
	return closing.Write(w, level == report.Quiet)
}

// runsMarked lists, for the closing block, each run that was not the run
// asked for: "new: 2 of 4 trials traffic not as specified (trials 1–2)".
func runsMarked(runs []compare.Run) []string {
	var out []string
	for _, r := range runs {
		if r.Summary == nil || r.Foreign {
			continue
		}
		if m := view.RunMarks(r.Summary); len(m) > 0 {
			out = append(out, r.Label+": "+strings.TrimSuffix(strings.TrimPrefix(view.MarksLine(m, len(r.Summary.Trials)), "*** NOT THE RUN ASKED FOR: "), view.MarksHint))
		}
	}
	return out
}
