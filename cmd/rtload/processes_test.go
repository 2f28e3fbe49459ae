package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/session"
)

// TestProcessesGroupSignals (issue 34 row 5): a --processes tap run in a
// process group of its own (setsid, as a terminal or ssh session starts
// it) gets SIGHUP, SIGQUIT or SIGINT on the whole group while its first
// child measures. The children stop as the parent does: the run exits
// with the signal's code, summary.json holds the trial that started,
// marked stopped, and no namespace of the parent or a child is left. On
// main the children died of SIGHUP and SIGQUIT's default actions: exit 1,
// "exit status -1 (its error is above)", no summary.json, the namespace
// left.
func TestProcessesGroupSignals(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2), testutil.DevNetTun)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGINT} {
		t.Run(session.StopSignal{Sig: sig}.Name(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command(binary, "run", "laight-450-tap", "--processes", "2", "--duration", "5s", "--set", "warmup=100ms",
				"--set", "noise[0].threads=1", "--out", out, "-q")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			var e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &e, &e
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			waitFor(t, time.Minute, "100 wakeups logged", measuring(out, 100))
			children := childPIDs(cmd.Process.Pid)
			if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
				t.Fatal(err)
			}
			code := waitExit(t, cmd)
			s, err := store.ReadSummary(out)
			t.Logf("%s to the group: exit %d, summary %s", sig, code, summaryState(s, err))
			if want := (session.StopSignal{Sig: sig}).Code(); code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
			if err != nil || !s.Stopped || s.InProgress || len(s.Trials) != 1 {
				t.Errorf("summary.json %s: want the trial that started, stopped", summaryState(s, err))
			}
			if strings.Contains(e.String(), "its error is above") {
				t.Errorf("a child failed:\n%s", e.String())
			}
			for _, pid := range append(children, cmd.Process.Pid) {
				if left := ownedNamespaces(t, pid); len(left) != 0 {
					t.Errorf("namespaces of pid %d left: %v", pid, left)
					exec.Command(binary, "cleanup").Run()
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", e.String())
			}
			noTemps(t, out)
		})
	}
}

// childPIDs lists pid's child processes (/proc/PID/task/PID/children).
func childPIDs(pid int) []int {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// TestProcessesParentKilled (issue 34 row 6): kill -9 of a --processes
// tap run's parent while its first child measures. One second later no
// thread of the child runs (its parent-death signal, SIGKILL, ended it),
// and the next run into the same --out works: it takes over the killed
// run's lock, saying so, keeps that run's files in killed-run-<pid>, and
// removes the namespace the child left. On main the child ran its plan on as an
// orphan with SCHED_FIFO threads (3.4 s; 6.7 s with a tap namespace) and
// the stale .rtload.lock refused the next run.
func TestProcessesParentKilled(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2), testutil.DevNetTun)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(binary, "run", "laight-450-tap", "--processes", "2", "--duration", "5s", "--set", "warmup=100ms",
		"--set", "noise[0].threads=1", "--out", out, "-q")
	// A file, not a pipe: cmd.Wait would wait for an orphaned child
	// holding the pipe's write end.
	logf, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	output := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }
	waitFor(t, time.Minute, "100 wakeups logged", measuring(out, 100))
	children := childPIDs(cmd.Process.Pid)
	if len(children) != 1 {
		t.Fatalf("children of the run: %v, want 1", children)
	}
	child := children[0]
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitExit(t, cmd)
	gone := func() bool { s := procState(child); return s == "" || s == "Z" }
	if !testutil.Eventually(time.Until(killed.Add(time.Second)), gone) {
		threads, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", child))
		t.Errorf("1 s after kill -9 of the parent, its child %d still runs %d thread(s) (state %s)\n%s", child, len(threads), procState(child), output())
		syscall.Kill(child, syscall.SIGKILL)
	} else {
		t.Logf("the child exited within %v of the kill", time.Since(killed).Round(time.Millisecond))
	}
	left := ownedNamespaces(t, child)
	t.Logf("killed run's output:\n%s\nits child's namespaces left: %v", output(), left)

	r := rtload(t, nil, "run", "timer-only", "--duration", "300ms", "--set", "rounds=1", "--out", out, "-q")
	took := fmt.Sprintf("rtload: results directory %s: taken over from rtload pid %d (started ", out, cmd.Process.Pid)
	if r.code != 0 || !strings.Contains(r.stderr, took) {
		t.Fatalf("the next run into %s: exit %d, want 0 saying %q\n%s%s", out, r.code, took, r.stdout, r.stderr)
	}
	if s, err := store.ReadSummary(out); err != nil || len(s.Trials) != 1 {
		t.Errorf("the next run's summary.json: %v", err)
	}
	// The killed child's namespace (SIGKILL leaves it) is removed by the
	// run that takes the directory over.
	for _, ns := range left {
		if !strings.Contains(r.stderr, "rtload: removed namespace "+ns+" left by a dead run") {
			t.Errorf("the next run does not say it removed %s\n%s", ns, r.stderr)
		}
	}
	if again := ownedNamespaces(t, child); len(again) != 0 {
		t.Errorf("the killed child's namespaces left after the next run: %v", again)
		exec.Command(binary, "cleanup").Run()
	}
	kept, _ := filepath.Glob(filepath.Join(out, safeio.KilledRunDir+strconv.Itoa(cmd.Process.Pid), "wakeups-p00-*.csv"))
	if len(kept) == 0 {
		t.Errorf("the killed run's wakeup logs are not kept in %s%d", safeio.KilledRunDir, cmd.Process.Pid)
	}
}

// procState is the state letter of process pid ("" when gone).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	state, _, _ := strings.Cut(rest, " ")
	return state
}

// TestProcessesProgressLines (issue 34 row 14): each process of a
// --processes run counts its own trials in its progress lines ("trials
// 1–2/2"), never the run-wide index over its own count (main printed
// "trials 37–38/4").
func TestProcessesProgressLines(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	r := rtload(t, nil, "run", "laight-450", "--processes", "2", "--duration", "300ms", "--set", "warmup=100ms", "--set", "rounds=1",
		"--set", "noise[0].threads=1", "--out", filepath.Join(t.TempDir(), "out"))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := regexp.MustCompile(`(?m)^trials? (\d+)(?:–(\d+))?/(\d+): .*$`).FindAllStringSubmatch(r.stderr, -1)
	if len(lines) != 2 {
		t.Fatalf("%d progress lines, want one per process:\n%s", len(lines), r.stderr)
	}
	for _, m := range lines {
		last, n := m[1], m[3]
		if m[2] != "" {
			last = m[2]
		}
		if l, _ := strconv.Atoi(last); l > atoiOr(n) {
			t.Errorf("progress line past its count: %q", m[0])
		}
	}
	t.Logf("%s\n%s", lines[0][0], lines[1][0])
}

func atoiOr(s string) int { n, _ := strconv.Atoi(s); return n }
