package main

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestReadSpecDirectory: a directory in the working directory named like a
// built-in scenario does not shadow it (it once made `rtload run
// laight-450` fail with "is a directory"); a regular file of that name
// wins; a directory that is no built-in is refused as a usage error.
func TestReadSpecDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, d := range []string{"laight-450", "mydir"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile("timer-only", []byte("name: mine\nreaders: [{}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		arg, file, err string
	}{
		{"laight-450", "built-in:laight-450.yaml", ""},
		{"timer-only", "timer-only", ""},
		{"mydir", "", `mydir: a directory, not a scenario file, and no built-in scenario "mydir"`},
		{"nope", "", `nope: not a file, and no built-in scenario "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			spec, err := readSpec(tt.arg)
			if tt.err != "" {
				var ue usageError
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &ue) {
					t.Fatalf("readSpec(%q) = %v, want usage error %q", tt.arg, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.File != tt.file {
				t.Errorf("readSpec(%q) read %s, want %s", tt.arg, spec.File, tt.file)
			}
		})
	}
}

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
