package main

import (
	"bytes"
	"fmt"
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
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/session"
)

// victim is a root-only file a run must never touch.
func victim(t *testing.T) (path string, check func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "shadow")
	content := []byte("root:secret\n")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, content) {
			t.Errorf("the run touched %s: %q, %v", path, got, err)
		}
	}
}

// TestOutRefused: an --out owned by another user (the attack of issue 12:
// nobody plants intervals.jsonl → a root file in its own /tmp directory),
// one writable by others, and one holding a killed run's CSVs are refused
// before anything runs, with the reason; the planted links' target is
// untouched. So are a file, /dev/null, and a symlink to anything (a
// file, an empty directory, nowhere) or under a dangling one: exit 2
// naming --out, the path and what is wrong.
func TestOutRefused(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	target, check := victim(t)
	plant := func(dir string) {
		for _, n := range []string{results.IntervalsFile, results.SummaryFile, "wakeups-00-recvfrom-r0-rt.csv", results.SpikesFile} {
			if err := os.Symlink(target, filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	nobodys := t.TempDir()
	plant(nobodys)
	os.Chown(nobodys, 65534, 65534)
	open := t.TempDir()
	os.Chmod(open, 0o777)
	killed := t.TempDir()
	os.WriteFile(filepath.Join(killed, "wakeups-00-recvfrom-r0-rt.0003.csv"), []byte(wakelog.Header+"\n"), 0o644)
	planted := t.TempDir()
	plant(planted)
	ot := t.TempDir()
	afile, emptyDir := filepath.Join(ot, "afile"), filepath.Join(ot, "emptydir")
	os.WriteFile(afile, nil, 0o644)
	os.Mkdir(emptyDir, 0o700)
	os.Symlink(afile, filepath.Join(ot, "filelink"))
	os.Symlink(emptyDir, filepath.Join(ot, "dirlink"))
	os.Symlink(filepath.Join(ot, "nowhere"), filepath.Join(ot, "danglink"))
	for _, tc := range []struct{ name, out, want string }{
		{"a file", afile, afile + ": is a regular file, not a directory"},
		{"a link to a file", filepath.Join(ot, "filelink"), "filelink: is a symlink (to " + afile + "): refused because rtload runs as root and never follows a link"},
		{"a link to an empty directory", filepath.Join(ot, "dirlink"), "dirlink: is a symlink (to " + emptyDir + "): refused"},
		{"/dev/null", "/dev/null", "/dev/null: is a character device, not a directory"},
		{"a dangling link", filepath.Join(ot, "danglink"), "danglink: is a dangling symlink"},
		{"under a dangling link", filepath.Join(ot, "danglink", "sub"), "sub: parent " + filepath.Join(ot, "danglink") + " is a dangling symlink"},
		{"owned by nobody", nobodys, "owned by uid 65534, not by uid 0 running rtload"},
		{"world-writable", open, "writable by group or others without the sticky bit"},
		{"a killed run's files", killed, "is not empty (wakeups-00-recvfrom-r0-rt.0003.csv)"},
		{"planted links in our own", planted, "is not empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rtload(t, nil, "run", "laight-450", "--duration", "forever", "--interval", "1s", "--out", tc.out, "-q",
				"--set", "readers[0].threshold=1us")
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "--out") {
				t.Errorf("exit %d, want %d with %q:\n%s%s", r.code, ExitUsage, tc.want, r.stdout, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("printed before refusing:\n%s", r.stdout)
			}
		})
	}
	check()
}

// waitFor waits (at most timeout) until ok returns true, and fails t
// naming what it waited for when it does not.
func waitFor(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	if !testutil.Eventually(timeout, ok) {
		t.Fatalf("%s: not within %v", what, timeout)
	}
}

// measuring reports whether the run writing results into out has logged
// at least rows wakeups of a measured window (its wakeup logs' data rows).
// An interleaved trial writes its wakeup log when it ends: use ticked to
// signal inside its window.
func measuring(out string, rows int) func() bool {
	return func() bool {
		files, _ := filepath.Glob(filepath.Join(out, "wakeups-*.csv"))
		n := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err == nil {
				n += max(0, bytes.Count(b, []byte("\n"))-1) // less the header
			}
		}
		return n >= rows
	}
}

// ticked reports whether process pid has a thread named comm that has
// slept at least n times (voluntary_ctxt_switches in its
// /proc/PID/task/TID/status): a reader thread sleeps once a tick, so n
// ticks of it have run, warm-up first. It is how a test knows a run is
// inside its measured window without waiting for files the run writes
// only at the end of a trial (an interleaved trial's wakeup log).
func ticked(pid int, comm string, n int) func() bool {
	return func() bool {
		comms, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/comm", pid))
		for _, c := range comms {
			if b, err := os.ReadFile(c); err != nil || strings.TrimSpace(string(b)) != comm {
				continue
			}
			st, err := os.ReadFile(filepath.Join(filepath.Dir(c), "status"))
			if err != nil {
				continue
			}
			for line := range strings.Lines(string(st)) {
				if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
					if k, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && k >= n {
						return true
					}
				}
			}
		}
		return false
	}
}

// threadRunning reports whether process pid has a thread named comm.
func threadRunning(pid int, comm string) func() bool {
	return func() bool {
		comms, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/comm", pid))
		for _, c := range comms {
			if b, err := os.ReadFile(c); err == nil && strings.TrimSpace(string(b)) == comm {
				return true
			}
		}
		return false
	}
}

func summaryTrials(dir string) int {
	s, err := store.ReadSummary(dir)
	if err != nil {
		return 0
	}
	return len(s.Trials)
}

// TestFullDisk fills a small tmpfs while runs write into it. At the end (no
// per-wakeup log, so the final summary is the first write to fail) and
// mid-run (the second round cannot write its wakeup logs, and the run
// stops there): the report is printed, the exit is 1 with the cause,
// and summary.json keeps the finished first trial. A soak stops with a clear error once its writes fail, its
// intervals.jsonl whole. No temporary file is left.
func TestFullDisk(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// One trial per variant (interleave=off): the first one's checkpoint
		// comes before the end, and the final summary is the write that fails.
		{"at the end", []string{"run", "laight-450", "--duration", "2s", "--set", "rounds=1", "--set", "warmup=100ms",
			"--set", "noise[0].threads=1", "--set", "interleave=off", "--no-wakeup-log"}, "write summary"},
		{"mid-run", []string{"run", "laight-450", "--duration", "3s", "--set", "rounds=2", "--set", "warmup=100ms",
			"--set", "noise[0].threads=1"}, "wakeup log"},
		{"soak", []string{"run", "laight-450", "--duration", "forever", "--interval", "500ms", "--set", "rounds=1",
			"--set", "noise[0].threads=1"}, "no space left on device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disk := testutil.Tmpfs(t, 8<<20)
			out := filepath.Join(disk, "out")
			cmd := exec.Command(binary, append(tc.args, "--out", out, "-q")...)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.name == "soak" {
				waitFor(t, 30*time.Second, "first soak checkpoint", func() bool { return summaryTrials(out) == 1 })
			} else {
				waitFor(t, 60*time.Second, "first trial's summary", func() bool { return summaryTrials(out) >= 1 }) // 2 when interleaved
			}
			testutil.FillDisk(t, disk)
			code := waitExit(t, cmd)
			if code != ExitFailed || !strings.Contains(e.String(), tc.want) {
				t.Errorf("exit %d, want %d naming %q:\n%s", code, ExitFailed, tc.want, e.String())
			}
			if !strings.Contains(o.String(), "wakeup latency") || !strings.Contains(o.String(), "results NOT saved in full") {
				t.Errorf("report not printed, or the failed save not said:\n%s", o.String())
			}
			s, err := store.ReadSummary(out)
			if err != nil || len(s.Trials) < 1 || !s.InProgress {
				t.Fatalf("summary.json after the full disk: %v (want the checkpoint of the finished trial)", err)
			}
			if tc.name == "soak" {
				ivs, torn, err := store.ReadJSONL[results.Interval](filepath.Join(out, results.IntervalsFile))
				if err != nil || torn != 0 {
					t.Errorf("intervals.jsonl: %d records, %d torn, %v", len(ivs), torn, err)
				}
			} else if s.Trials[0].Variant != "recvfrom" || s.Trials[0].Readers[0].Wakeups == 0 {
				t.Errorf("checkpoint lost the first trial: %+v", s.Trials[0].Variant)
			}
			noTemps(t, out)
		})
	}
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestSignalsTwiceAtOnce: one Ctrl-C delivered to rtload and to a wrapper
// (two SIGINTs microseconds apart) is one: an orderly stop, the report,
// a complete summary marked stopped.
func TestSignalsTwiceAtOnce(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	out := t.TempDir()
	cmd := exec.Command(binary, "run", "--duration", "20s", "--set", "rounds=1", "--set", "noise[0].threads=1", "--out", out, "-q")
	var o bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &o
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// 500 ms of warm-up (50 ticks), then at least 100 ticks measured.
	waitFor(t, time.Minute, "150 ticks of reader rt", ticked(cmd.Process.Pid, "rtl-rd/rt", 150))
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Process.Signal(syscall.SIGINT)
	if c := waitExit(t, cmd); c != ExitInterrupted {
		t.Errorf("exit %d, want %d\n%s", c, ExitInterrupted, o.String())
	}
	s, err := store.ReadSummary(out)
	if err != nil || !s.Stopped || s.InProgress || len(s.Trials) != firstRound(s) {
		t.Fatalf("summary: %v", err)
	}
	if !strings.Contains(o.String(), "results: "+out) || strings.Contains(o.String(), "again: exiting now") {
		t.Errorf("not one orderly stop:\n%s", o.String())
	}
	noTemps(t, out)
}

// signalsTap is a short tap sweep, then one long enough (5 million
// frames, tens of seconds) to be interrupted twice: an orderly stop waits
// for a tap sweep to end.
const signalsTap = `name: signals-tap
description: "a short tap sweep, then one long enough to be interrupted twice"
duration: 100ms
network: {namespace: private}
endpoints: [{name: tap, kind: tap, count: 1, devices: 1, mtu: 1500, queues: 1}]
probes: [{name: send, kind: tap_send, endpoint: tap, packets: 2000, size: [64], cpu: 1, policy: other}]
variants:
  - {name: short}
  - {name: long, set: {"probes[0].packets": 5000000}}
`

// TestSignalsSecond: a second Ctrl-C, well after the first, while the
// orderly stop still waits for a long tap sweep: rtload exits at once
// (bounded), summary.json keeps the finished first trial, no temporary
// file and no namespace is left.
func TestSignalsSecond(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	testutil.Requires(t, testutil.DevNetTun)
	out := t.TempDir()
	scen := filepath.Join(t.TempDir(), "signals-tap.yaml")
	if err := os.WriteFile(scen, []byte(signalsTap), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "run", scen, "--out", out, "-q")
	var o bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &o
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the first trial's summary", func() bool { return summaryTrials(out) == 1 })
	waitFor(t, 60*time.Second, "the long sweep's probe thread", threadRunning(cmd.Process.Pid, "rtl-pr/send")) // into the long sweep
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(session.SignalWindow + 100*time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(session.ForcedExitWait + 5*time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("no exit %v after the second SIGINT\n%s", session.ForcedExitWait+5*time.Second, o.String())
	}
	if c := cmd.ProcessState.ExitCode(); c != ExitInterrupted || !strings.Contains(o.String(), "again: exiting now") {
		t.Errorf("exit %d, want %d after a forced exit:\n%s", c, ExitInterrupted, o.String())
	}
	s, err := store.ReadSummary(out)
	if err != nil || len(s.Trials) != 1 || s.Trials[0].Variant != "short" || len(s.Trials[0].Probes) != 1 {
		t.Fatalf("summary after a forced exit: %v", err)
	}
	noTemps(t, out)
	if left := ownedNamespaces(t, cmd.Process.Pid); len(left) != 0 {
		t.Errorf("namespaces left: %v", left)
	}
}

// TestReportCheckpoint: rtload report on a checkpoint says INCOMPLETE.
func TestReportCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := testutil.SeedSummary()
	s.InProgress = true
	testutil.WriteSummary(t, dir, s)
	r := rtload(t, nil, "report", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "*** INCOMPLETE") {
		t.Errorf("exit %d:\n%s%s", r.code, r.stdout[:min(len(r.stdout), 600)], r.stderr)
	}
}

// TestDefaultOutNames: default results directories go under
// rtload-results/ (or $RTLOAD_RESULTS), never into the source tree's
// results package; runs started in the same second get -2, -3, …, each
// newly made (an existing empty one is never reused); make clean removes
// them all and .gitignore ignores them, without matching timestamps.
