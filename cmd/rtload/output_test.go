package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/session"
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

// TestFormatEverywhere: every command takes --format json and prints one
// valid JSON document (env's --json is its alias); a --format a command
// does not know is a usage error naming the flag.
func TestFormatEverywhere(t *testing.T) {
	base := writeGateDir(t, gateSummary(1000, 2))
	for _, args := range [][]string{
		{"env", "--format", "json"},
		{"env", "--json"},
		{"list", "--format", "json"},
		{"validate", "laight-450", "--format", "json"},
		{"cleanup", "--dry-run", "--format", "json"},
		{"report", base, "--format", "json"},
		{"compare", base, base, "--format", "json"},
		{"explain", base, "--format", "json"},
	} {
		r := rtload(t, nil, args...)
		var doc map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
			t.Errorf("rtload %s: exit %d, not one JSON document (%v):\n%s\n%s", strings.Join(args, " "), r.code, err, r.stdout, r.stderr)
		}
	}
	for _, args := range [][]string{{"env", "--format", "yaml"}, {"list", "--format", "csv"}, {"env", "--json", "--format", "text"}} {
		if r := rtload(t, nil, args...); r.code != ExitUsage || !strings.Contains(r.stderr, "--") {
			t.Errorf("rtload %s: exit %d, want 2 naming the flag:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	// validate --format json lists every problem with its place, and
	// exits 2 as the text does.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("duration: 2\nrounds: 0\nreaders: [{priority: 120, bogus: 1}]\n"), 0o644)
	r := rtload(t, nil, "validate", bad, "--format", "json")
	var doc session.ValidateDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != ExitUsage || doc.OK || len(doc.Problems) != 4 || doc.ExitCode != ExitUsage {
		t.Errorf("validate --format json of 4 mistakes: exit %d, %v: %+v", r.code, err, doc)
	}
	for _, p := range doc.Problems {
		if p.Line == 0 || p.Path == "" || p.File != bad {
			t.Errorf("problem without its place: %+v", p)
		}
	}
}

// TestPlotNamesItsFile: plot names the image it wrote on stderr, and
// --format json describes it on stdout.
func TestPlotNamesItsFile(t *testing.T) {
	base := writeGateDir(t, gateSummary(1000, 2))
	out := filepath.Join(t.TempDir(), "p.svg")
	r := rtload(t, nil, "plot", base, "--out", out)
	if r.code != 0 || !strings.Contains(r.stderr, "plot: wrote "+out+" (svg, 1 column: base)") || r.stdout != "" {
		t.Errorf("plot: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
	out = filepath.Join(t.TempDir(), "p.png")
	r = rtload(t, nil, "plot", base, "--out", out, "--format", "json")
	var doc struct {
		Schema, File string
		Columns      []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Schema != SchemaPlot || doc.File != out || len(doc.Columns) != 1 {
		t.Errorf("plot --format json: %v %+v\n%s", err, doc, r.stdout)
	}
}

// TestCheckLeavesNoTempDir: a check without --out runs into a temporary
// directory and removes it once the verdict is printed, saying so; with
// --keep it stays.
func TestCheckLeavesNoTempDir(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	base := writeGateDir(t, gateSummary(1000, 2))
	for _, keep := range []bool{false, true} {
		tmp := t.TempDir()
		args := []string{"check", base, "timer-only", "--duration", "200ms", "--set", "warmup=0", "--budget", "1s", "-q"}
		if keep {
			args = append(args, "--keep")
		}
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var xe *exec.ExitError
		if err != nil && !errors.As(err, &xe) {
			t.Fatal(err)
		}
		left, _ := filepath.Glob(filepath.Join(tmp, "rtload-check-*"))
		switch {
		case !keep && (len(left) != 0 || !strings.Contains(e.String(), "check: removed the new run's results")):
			t.Errorf("check left %v in $TMPDIR:\n%s%s", left, o.String(), e.String())
		case keep && len(left) != 1:
			t.Errorf("check --keep left %v, want its results:\n%s%s", left, o.String(), e.String())
		}
		if last := lastLine(o.String()); !strings.HasPrefix(last, "check: ") || !strings.Contains(last, "exit ") {
			t.Errorf("check -q does not end on its verdict: %q", o.String())
		}
	}
}
