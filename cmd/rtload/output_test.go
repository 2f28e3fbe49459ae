package main

import (
	"strings"
	"testing"
)

// TestFlagErrorsNameTheFlag: a bad value given through a flag is blamed on
// the flag the user typed, never on the --set it becomes.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--duration", "2"}, `--duration: invalid duration "2"`},
		{[]string{"run", "--interval", "x"}, `--interval: invalid duration "x"`},
		{[]string{"run", "--rounds", "x"}, `--rounds: expected an integer or auto, got "x"`},
		{[]string{"run", "--processes", "0"}, `--processes: 0 out of range`},
		{[]string{"validate", "laight-450", "--set", "duration=2"}, `--set duration: invalid duration "2"`},
		{[]string{"check", "/nonexistent", "--duration", "2"}, `baseline`}, // the baseline is read first
	} {
		r := rtload(t, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("rtload %s: exit %d, want 2 and %q:\n%s", strings.Join(tc.args, " "), r.code, tc.want, r.stderr)
		}
		if strings.HasPrefix(tc.want, "--") && !strings.HasPrefix(tc.want, "--set") && strings.Contains(r.stderr, "--set") {
			t.Errorf("rtload %s: names --set:\n%s", strings.Join(tc.args, " "), r.stderr)
		}
	}
}
