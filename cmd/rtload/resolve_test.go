package main

import (
	"os"
	"strings"
	"testing"
)

// TestReadSpecDirectory: a directory in the working directory named like a
// built-in scenario does not shadow it (it once made `rtload run
// laight-450` fail with "is a directory"); a regular file of that name
// wins; a directory that is no built-in is refused as a usage error.
// TestRepeatRange: --repeat 0 and -1 were accepted silently (0 ran the
// scenario's own rounds); they are usage errors naming the allowed range,
// refused before anything runs.
func TestRepeatRange(t *testing.T) {
	for _, arg := range []string{"--repeat=0", "--repeat=-1", "--repeat=1001"} {
		out := t.TempDir()
		r := rtload(t, nil, "run", "timer-only", "--duration", "100ms", "--out", out, arg)
		n := strings.TrimPrefix(arg, "--repeat=")
		if want := "--repeat " + n + " out of range (allowed: 1–1000)"; r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s%s", arg, r.code, want, r.stdout, r.stderr)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("%s: the refused run wrote %d files", arg, len(ents))
		}
	}
}
