package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// TestTwoRunsOneCPU runs two laight-450 runs whose readers share CPU 1
// (issue 34 row 9: both said "marks: none"): the second starts once the
// first's reader thread runs, and ends inside the first's trial. Both are
// marked reader CPU shared, each naming the other (its pid, its reader
// thread rtl-rd/rt, SCHED_FIFO 80, CPU 1), both outputs say so, and the
// second's preflight warned about the first before running.
func TestTwoRunsOneCPU(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	dir := t.TempDir()
	type run struct {
		cmd            *exec.Cmd
		out            string
		stdout, stderr bytes.Buffer
	}
	start := func(name, duration string) *run {
		r := &run{out: filepath.Join(dir, name)}
		r.cmd = exec.Command(binary, "run", "laight-450", "--duration", duration, "--set", "rounds=1", "--set", "noise[0].threads=1", "--out", r.out)
		r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if r.cmd.ProcessState == nil {
				r.cmd.Process.Kill()
				r.cmd.Wait()
			}
		})
		return r
	}
	a := start("a", "3s")
	// The second starts once the first's reader thread exists (polled
	// every millisecond, at most 60 s: its setup on a busy machine).
	if !testutil.Eventually(60*time.Second, func() bool { return hasThread(a.cmd.Process.Pid, "rtl-rd/rt") }) {
		t.Fatalf("the first run's reader did not start within 60 s\n%s", a.stderr.String())
	}
	b := start("b", "1s")
	codeB := waitExitWithin(t, b.cmd, 3*time.Minute)
	codeA := waitExitWithin(t, a.cmd, 3*time.Minute)
	if codeA != 0 || codeB != 0 {
		t.Fatalf("exits %d and %d\n%s\n%s\n%s\n%s", codeA, codeB, a.stdout.String(), a.stderr.String(), b.stdout.String(), b.stderr.String())
	}
	pidA, pidB := a.cmd.Process.Pid, b.cmd.Process.Pid
	if want := "warning: reader rt (SCHED_FIFO 80 on CPU 1) will share its CPU with another rtload, process " + strconv.Itoa(pidA) + " "; !strings.Contains(b.stderr.String(), want) {
		t.Errorf("the second run's preflight does not name the first (pid %d):\n%s", pidA, b.stderr.String())
	}
	for _, c := range []struct {
		name  string
		r     *run
		other int
	}{{"first", a, pidB}, {"second", b, pidA}} {
		s, err := store.ReadSummary(c.r.out)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range s.Trials {
			named := false
			for _, cu := range tr.Culprits {
				named = named || cu.PID == c.other && cu.Rtload && cu.Name == "rtl-rd/rt" && cu.Policy == "SCHED_FIFO" && cu.Priority == 80 && cu.CPU == 1
			}
			mark := tr.MarkText(results.MarkShared)
			t.Logf("%s run, %s: %s", c.name, tr.Name(), mark)
			if !named || !strings.Contains(mark, "another rtload, process "+strconv.Itoa(c.other)+" (rtload) thread ") {
				t.Errorf("%s run, %s: culprits %+v, mark %q: want reader CPU shared, naming pid %d's reader", c.name, tr.Name(), tr.Culprits, mark, c.other)
			}
		}
		if out := c.r.stdout.String(); !strings.Contains(out, "reader CPU shared") || strings.Contains(out, "marks: none") {
			t.Errorf("the %s run's output does not say its reader's CPU was shared:\n%s", c.name, out)
		}
	}
}

// hasThread reports whether process pid has a thread named comm.
func hasThread(pid int, comm string) bool {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, e := range tasks {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + e.Name() + "/comm")
		if strings.TrimSpace(string(b)) == comm {
			return true
		}
	}
	return false
}

// waitExitWithin waits for cmd to exit, at most d (then kills it and fails
// t), and returns its exit code.
func waitExitWithin(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v: no exit within %v", cmd.Args, d)
	}
	return cmd.ProcessState.ExitCode()
}
