package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
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
		t.Run(stopSignal{sig}.name(), func(t *testing.T) {
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
			s, err := results.ReadSummary(out)
			t.Logf("%s to the group: exit %d, summary %s", sig, code, summaryState(s, err))
			if want := (stopSignal{sig}).code(); code != want {
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

// TestChildExit: how a child's end reads in the parent. A child killed
// by a signal is named with it, not "exit status -1 (its error is
// above)" with nothing above (issue 34 row 5); one that stopped on a
// signal with its summary written stops the run with that signal's code.
func TestChildExit(t *testing.T) {
	killed := exec.Command("/bin/sh", "-c", "kill -KILL $$")
	err := childExit(killed.Run(), nil)
	if err == nil || !strings.Contains(err.Error(), "killed by SIGKILL") || strings.Contains(err.Error(), "above") {
		t.Errorf("killed child: %v, want it named killed by SIGKILL", err)
	}
	stopped := &results.Summary{Stopped: true}
	for _, tc := range []struct {
		code int
		sum  *results.Summary
		want int // exitCodeOf the error
	}{
		{ExitHangup, stopped, ExitHangup},
		{ExitQuit, stopped, ExitQuit},
		{ExitInterrupted, stopped, ExitInterrupted},
		{ExitHangup, nil, ExitFailed}, // no summary: it failed
		{ExitUsage, stopped, ExitFailed},
	} {
		err := childExit(exec.Command("/bin/sh", "-c", "exit "+strconv.Itoa(tc.code)).Run(), tc.sum)
		if got := exitCodeOf(err); got != tc.want {
			t.Errorf("child exit %d (summary %v): %v, code %d, want %d", tc.code, tc.sum != nil, err, got, tc.want)
		}
	}
}
