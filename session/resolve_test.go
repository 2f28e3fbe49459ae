package session

import (
	"errors"
	"os"
	"strings"
	"testing"
)

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
			spec, err := ReadSpec(tt.arg)
			if tt.err != "" {
				var ue UsageError
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &ue) {
					t.Fatalf("ReadSpec(%q) = %v, want usage error %q", tt.arg, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.File != tt.file {
				t.Errorf("ReadSpec(%q) read %s, want %s", tt.arg, spec.File, tt.file)
			}
		})
	}
}
