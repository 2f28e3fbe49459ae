package view

import (
	"io"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/results"
)

// WriteInterleaved writes the paired changes of s's interleaved variants
// (InterleavedChanges) as compare's text does, after a blank line;
// nothing when s has none. run and report print it under their report.
func WriteInterleaved(w io.Writer, s *results.Summary) error {
	r := &compare.Result{Runs: []compare.RunInfo{{}}, Interleaved: compare.InterleavedChanges(s, "")}
	var b strings.Builder
	interleavedText(r, &b)
	_, err := io.WriteString(w, b.String())
	return err
}

// interleavedText writes the paired changes, one line each, under what
// their interval means.
func interleavedText(r *compare.Result, b *strings.Builder) {
	if len(r.Interleaved) == 0 {
		return
	}
	b.WriteByte('\n')
	b.WriteString(InterleavedTitle + "\n")
	for _, c := range r.Interleaved {
		prefix := "  "
		if len(r.Runs) > 1 {
			prefix += c.Run + ": "
		}
		b.WriteString(prefix + c.Line() + "\n")
		for _, n := range c.Notes {
			b.WriteString(prefix + "  " + n + "\n")
		}
	}
}

// InterleavedTitle heads the paired changes in every text output.
const InterleavedTitle = "interleaved variants, mean per-call cost, 95% CI from ABBA block pairs " +
	"(adjacent blocks of one reader thread on the same sockets: noise common to both cancels; noise a whole process or boot adds to one variant is not in it)"
