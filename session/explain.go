package session

import (
	"fmt"
	"io"

	"github.com/rtload/rtload/explain"
	"github.com/rtload/rtload/report"
)

// Explain is rtload explain's document of the results directory dir
// (explain.Dir: every reader of every trial); a directory it cannot read
// is bad input (UsageError).
func Explain(dir string) (explain.Doc, error) {
	rs, err := explain.Dir(dir)
	if err != nil {
		return explain.Doc{}, UsageError{Err: err}
	}
	if rs == nil {
		rs = []explain.Reader{}
	}
	return explain.Doc{Schema: explain.Schema, Version: explain.SchemaVersion, Dir: dir, Readers: rs}, nil
}

// WriteExplain prints d as text at level: its sentences (every one with
// -v, a few per reader and trial by default), where in the kernel a
// profiled run's time goes, and last its closing block.
func WriteExplain(w io.Writer, d explain.Doc, level report.Level) error {
	switch level {
	case report.Verbose:
		if err := explain.Write(w, d.Readers); err != nil {
			return err
		}
	case report.Normal:
		if err := explain.WriteBrief(w, d.Readers); err != nil {
			return err
		}
	}
	if level != report.Quiet {
		if err := writeKernelProfile(w, d.Dir); err != nil {
			return err
		}
	}
	return explain.Closing(d.Readers).Write(w, level == report.Quiet)
}

// writeKernelProfile prints where in the kernel a profiled run's time goes
// (nothing for a run without profiles).
func writeKernelProfile(w io.Writer, dir string) error {
	k, err := explain.KernelDir(dir)
	if err != nil || k == nil {
		return err
	}
	fmt.Fprintln(w)
	return explain.WriteKernel(w, k)
}
