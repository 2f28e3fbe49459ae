package ansible

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// packScript is the shell of fetch.yml's "Pack the results directory"
// task with out in place of its one Jinja expression.
func packScript(t *testing.T, out string) string {
	t.Helper()
	b, err := os.ReadFile("roles/rtload/tasks/fetch.yml")
	if err != nil {
		t.Fatal(err)
	}
	var tasks []map[string]any
	if err := yaml.Unmarshal(b, &tasks); err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if task["name"] != "Pack the results directory" {
			continue
		}
		sh, _ := task["ansible.builtin.shell"].(string)
		const expr = "{{ rtload_out | quote }}"
		if strings.Count(sh, "{{") != 1 || !strings.Contains(sh, expr) {
			t.Fatalf("Pack's shell holds other expressions than %s:\n%s", expr, sh)
		}
		return strings.Replace(sh, expr, shellQuote(out), 1)
	}
	t.Fatal("fetch.yml has no task named Pack the results directory")
	return ""
}

// TestPack: Pack writes its archive only where nothing is, never through a
// link or over a file, and packs only a real results directory.
func TestPack(t *testing.T) {
	requireTools(t, "sh", "tar", "gzip")
	t.Parallel()
	for _, tc := range []struct {
		name    string
		build   func(t *testing.T, dir, out, victim string) // makes the results directory out, and what is in its way
		wantOut string                                      // Pack's stdout
		wantErr string                                      // on stderr, with exit 1; "" = exit 0
	}{
		{"packs results", func(t *testing.T, dir, out, victim string) {}, "packed", ""},
		{"a link to a file where the archive goes", func(t *testing.T, dir, out, victim string) {
			symlink(t, victim, out+".tar.gz")
		}, "", "exists: refusing to write through it"},
		{"a dangling link where the archive goes", func(t *testing.T, dir, out, victim string) {
			symlink(t, filepath.Join(dir, "new-file"), out+".tar.gz")
		}, "", "exists: refusing to write through it"},
		{"a file where the archive goes", func(t *testing.T, dir, out, victim string) {
			writeFile(t, out+".tar.gz", "earlier\n", 0o644)
		}, "", "exists: refusing to write through it"},
		{"the results directory is a link", func(t *testing.T, dir, out, victim string) {
			if err := os.Rename(out, out+"-real"); err != nil {
				t.Fatal(err)
			}
			symlink(t, out+"-real", out)
		}, "no " + "OUT/summary.json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out := filepath.Join(dir, "timer-only-20261201T000000Z")
			writeFile(t, filepath.Join(out, "summary.json"), "{}\n", 0o644)
			victim := filepath.Join(dir, "victim")
			writeFile(t, victim, "precious\n", 0o600)
			tc.build(t, dir, out, victim)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-c", packScript(t, out))
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if got, want := strings.TrimSpace(stdout.String()), strings.ReplaceAll(tc.wantOut, "OUT", out); got != want {
				t.Errorf("stdout %q, want %q (stderr %q)", got, want, stderr.String())
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(stderr.String(), tc.wantErr)) {
				t.Errorf("exit %v, stderr %q; want %q", err, stderr.String(), tc.wantErr)
			}
			if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
				t.Errorf("the victim was written through a link: %q (%v)", b, err)
			}
			if tc.wantOut == "packed" {
				if out, err := exec.Command("tar", "-tzf", out+".tar.gz").CombinedOutput(); err != nil || !strings.Contains(string(out), "./summary.json") {
					t.Errorf("the archive does not hold ./summary.json: %v\n%s", err, out)
				}
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
