package session

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultOutNames(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var clean []string // make clean's: rm -rf bin …
	for line := range strings.SplitSeq(string(mk), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "rm" && f[2] == "bin" {
			clean = f[3:]
		}
	}
	if !slices.Contains(clean, defaultResults) {
		t.Errorf("make clean removes %v, not %s", clean, defaultResults)
	}
	gi, err := os.ReadFile("../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(gi), "\n"), defaultResults+"/") {
		t.Errorf(".gitignore does not list %s/", defaultResults)
	}
	if strings.Contains(string(gi), "[0-9]") {
		t.Errorf(".gitignore still matches timestamps:\n%s", gi)
	}
	t.Chdir(t.TempDir())
	t.Setenv(resultsEnv, "")
	now := time.Date(2026, 12, 1, 12, 39, 40, 0, time.UTC)
	if err := os.MkdirAll("rtload-results/timer-only-20261201-123940-3", 0o755); err != nil {
		t.Fatal(err) // taken by someone else: skipped, never reused
	}
	want := []string{"rtload-results/timer-only-20261201-123940", "rtload-results/timer-only-20261201-123940-2", "rtload-results/timer-only-20261201-123940-4"}
	for _, w := range want {
		d, created, err := createOut("", "timer-only", now)
		if err != nil || !created {
			t.Fatalf("createOut: %v (created %v), want %s", err, created, w)
		}
		if d.Path() != w {
			t.Errorf("path %s, want %s", d.Path(), w)
		}
		d.Close()
	}
	t.Setenv(resultsEnv, "elsewhere")
	if got := defaultOut("timer-only", now); got != "elsewhere/timer-only-20261201-123940" {
		t.Errorf("with %s=elsewhere: %s", resultsEnv, got)
	}
	t.Setenv(resultsEnv, "")
	for i := 5; i <= maxDefaultSuffix; i++ {
		os.Mkdir(fmt.Sprintf("rtload-results/timer-only-20261201-123940-%d", i), 0o755)
	}
	if _, _, err := createOut("", "timer-only", now); err == nil || !strings.Contains(err.Error(), "give --out") {
		t.Errorf("all %d names taken: %v, want a bounded refusal", maxDefaultSuffix, err)
	}
}
