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
