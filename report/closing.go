package report

import (
	"io"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
)

// Closing is the closing block of a command that measures or judges (run,
// report, compare, check, explain): 3 to 8 lines that answer the
// question the command was run for, the last thing it prints at every
// Level, so that the answer is where a person looks and what a bug report
// quotes. Its numbers are the ones the command's --format json and
// summary.json hold (the builders take them from there, never compute
// their own).
type Closing struct {
	Lines []string
}

// MaxClosingLines is the most lines a closing block holds; builders with
// more to say end on a line that says how much more, and where.
const MaxClosingLines = 8

// Add appends a line.
func (c *Closing) Add(line string) { c.Lines = append(c.Lines, line) }

// AddText appends text that may hold several lines of rtload's own (an
// error message: "…does not meet 1 requirement:\n  - …"), one line each
// (TextLines), instead of one line with its newlines escaped.
func (c *Closing) AddText(text string) { c.Lines = append(c.Lines, TextLines(text)...) }

// TextLines splits text into its lines for a block whose every line is
// escaped on its own: the first line as it is, each further one indented
// by four more spaces than the first, so that a newline inside a string
// read from results cannot put a line at the start of the block's own
// (a forged verdict line): it shows as an indented continuation.
func TextLines(text string) []string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	indent := "    " + strings.Repeat(" ", len(lines[0])-len(strings.TrimLeft(lines[0], " ")))
	for i := 1; i < len(lines); i++ {
		lines[i] = indent + strings.TrimLeft(lines[i], " ")
	}
	return lines
}

// Write prints the block, after a blank line unless first (nothing was
// printed before it), every line escaped for the terminal.
func (c Closing) Write(w io.Writer, first bool) error {
	var b strings.Builder
	if !first {
		b.WriteByte('\n')
	}
	for _, l := range c.Lines {
		b.WriteString(termsafe.Escape(l))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
