package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalid is matched by every *Error and ErrorList, so callers can branch
// with errors.Is(err, scenario.ErrInvalid) (exit code 2 in rtload).
var ErrInvalid = errors.New("invalid scenario")

// Error is one problem in a scenario, located by file, line and column
// (1-based; Line 0 when the value did not come from the file, e.g. --set).
type Error struct {
	// File is the scenario source name as given to Load.
	File string `json:"file"`
	// Line and Col locate the offending value; 0 when unknown.
	Line int `json:"line"`
	Col  int `json:"col"`
	// Path is the field path, e.g. "readers[0].priority", "--set duration"
	// or "--duration".
	Path string `json:"path"`
	// Msg says what is wrong, e.g. "120 out of range".
	Msg string `json:"msg"`
	// Allowed lists the accepted values, e.g. "1–99"; empty when not useful.
	Allowed string `json:"allowed,omitempty"`
}

// Error formats e compiler-style:
// "file:line:col: path: msg (allowed: …)". Parts that are unknown are left out.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
			if e.Col > 0 {
				fmt.Fprintf(&b, ":%d", e.Col)
			}
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Allowed != "" {
		fmt.Fprintf(&b, " (allowed: %s)", e.Allowed)
	}
	return b.String()
}

// Is reports whether target is ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// ErrorList is every problem found in one scenario, sorted by line.
type ErrorList []*Error

// Error prints a title line "scenario <file>: N problem(s)" followed by one
// problem per line, at most maxShown of them, then "… and N more". A list
// of maxProblems means Validate stopped collecting: the title says "at
// least".
func (l ErrorList) Error() string {
	file := ""
	for _, e := range l {
		if e.File != "" {
			file = " " + e.File
			break
		}
	}
	noun := "problems"
	if len(l) == 1 {
		noun = "problem"
	}
	count := thousands(len(l))
	if len(l) >= maxProblems {
		count = "at least " + count
	}
	var b strings.Builder
	fmt.Fprintf(&b, "scenario%s: %s %s", file, count, noun)
	for i, e := range l {
		if i == maxShown {
			fmt.Fprintf(&b, "\n… and %s more", thousands(len(l)-maxShown))
			break
		}
		b.WriteString("\n")
		b.WriteString(e.Error())
	}
	return b.String()
}

// thousands formats n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Is reports whether target is ErrInvalid.
func (l ErrorList) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the problems, so errors.As(err, &e) finds the first *Error.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// sort orders the list by line, then column, keeping insertion order otherwise.
func (l ErrorList) sort() {
	slices.SortStableFunc(l, func(a, b *Error) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
}

// err returns l without repeats (see collector), sorted, as an error, or
// nil when l is empty (never a typed nil).
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	var c collector
	for _, e := range l {
		c.add(e)
	}
	c.list.sort()
	return c.list
}

// collector gathers problems once each: a problem at a known place is
// the same problem when its place, message and allowed values match
// (aliases and variants repeat them under other paths); one without a
// place when its path matches too. It keeps at most maxProblems.
type collector struct {
	list ErrorList
	seen map[string]bool
}

func (c *collector) add(e *Error) {
	key := fmt.Sprintf("%s\x00%d\x00%d\x00%s\x00%s", e.File, e.Line, e.Col, e.Msg, e.Allowed)
	if e.Line == 0 {
		key += "\x00" + e.Path
	}
	if c.seen[key] || c.full() {
		return
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[key] = true
	c.list = append(c.list, e)
}

func (c *collector) full() bool { return len(c.list) >= maxProblems }
