package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
)

// TestOutRace: two real runs started at the same moment with one --out
// (an existing empty directory, or a new path): exactly one runs and
// saves its results there; the other is refused (exit 2) with a message
// naming the directory and the first run's pid. The lock is gone after
// the run.
func TestOutRace(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	for _, existing := range []bool{true, false} {
		name := "existing empty directory"
		if !existing {
			name = "new path"
		}
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if existing {
				if err := os.Mkdir(out, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var (
				cmds   [2]*exec.Cmd
				stdins [2]io.WriteCloser
				outs   [2]bytes.Buffer
			)
			for i := range cmds {
				// sh waits for one line on its stdin, then execs rtload
				// (same pid): the two lines below, written back to back,
				// start both runs within microseconds of each other.
				cmd := exec.Command("/bin/sh", "-c", `read go && exec "$0" "$@"`,
					binary, "run", "timer-only", "--duration", "1s", "--set", "rounds=1", "--out", out)
				cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
				w, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds[i], stdins[i] = cmd, w
			}
			for _, w := range stdins {
				w.Write([]byte("go\n"))
			}
			for _, w := range stdins {
				w.Close()
			}
			codes := [2]int{waitExit(t, cmds[0]), waitExit(t, cmds[1])}
			var winner, loser int
			switch {
			case codes[0] == 0 && codes[1] == ExitUsage:
				winner, loser = 0, 1
			case codes[1] == 0 && codes[0] == ExitUsage:
				winner, loser = 1, 0
			default:
				t.Fatalf("exits %v, want one 0 and one %d\nfirst:\n%s\nsecond:\n%s", codes, ExitUsage, outs[0].String(), outs[1].String())
			}
			pid := strconv.Itoa(cmds[winner].Process.Pid)
			refusal := outs[loser].String()
			if !strings.Contains(refusal, "results directory "+out+": ") || !strings.Contains(refusal, "(pid "+pid) {
				t.Errorf("refusal does not name %s and the running pid %s:\n%s", out, pid, refusal)
			}
			t.Logf("refused: %s", strings.TrimSpace(refusal))
			if !strings.Contains(outs[winner].String(), "results: "+out) {
				t.Errorf("the run that claimed %s does not say so:\n%s", out, outs[winner].String())
			}
			if s, err := store.ReadSummary(out); err != nil || len(s.Trials) != 1 || s.Stopped {
				t.Errorf("summary.json of the run: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(out, safeio.LockFile)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("lock left after the run: %v", err)
			}
		})
	}
}
