// Package procstat reads the fields of a /proc/PID/stat (or
// /proc/PID/task/TID/stat) line, as proc(5) numbers them, without
// allocating: sysinfo's per-thread counters and rt's survey of other
// processes' threads both read it.
package procstat

import (
	"errors"
	"fmt"
)

// Fields fills f with the fields after the command, f[0] being field 3
// (state), f[6] field 9 (flags), f[7] field 10 (minflt), …, and returns how
// many it found (at most len(f)). Field 2, the command in parentheses, may
// hold spaces and parentheses itself, so the fields are counted from its
// last ')'. Errors: no ')' in line, or fewer than want fields.
func Fields(line string, f []string, want int) (int, error) {
	i := len(line) - 1
	for i >= 0 && line[i] != ')' {
		i--
	}
	if i < 0 {
		return 0, errors.New("no ')' after the command")
	}
	n, rest := 0, line[i+1:]
	for n < len(f) {
		var w string
		if w, rest = next(rest); w == "" {
			break
		}
		f[n] = w
		n++
	}
	if n < want {
		return n, fmt.Errorf("%d fields after the command, want ≥ %d", n, want)
	}
	return n, nil
}

// next returns the first whitespace-separated field of s and the rest.
func next(s string) (f, rest string) {
	i := 0
	for i < len(s) && space(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !space(s[j]) {
		j++
	}
	return s[i:j], s[j:]
}

func space(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }
