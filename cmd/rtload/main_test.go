package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/session"
)

var binary string

// TestMain builds the rtload binary once; every test runs it as a user would.
func TestMain(m *testing.M) {
	// The tests start rtload as a terminal or an ssh session does, with
	// every stop signal at its default action; the one nohup case sets
	// its own (TestSignalsInheritedIgnored). Under `nohup make test`
	// this binary starts with SIGHUP ignored, and an ignored signal stays
	// ignored across exec: rtload then rightly keeps running through a
	// hangup and TestProcessesGroupSignals/SIGHUP fails (exit 0, 4
	// trials). A handler here (dropping what it catches: ignored before)
	// makes exec reset it to the default for every child.
	if signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
	dir, err := testutil.MkdirTemp("rtload-cli-")
	if err != nil {
		panic(err)
	}
	// World-readable so a test can run it as an unprivileged user.
	_ = os.Chmod(dir, 0o755)
	binary = filepath.Join(dir, "rtload")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func rtload(t *testing.T, cred *syscall.Credential, args ...string) result {
	t.Helper()
	return runProgram(t, cred, binary, args...)
}

// rtloadVia runs prog (taskset, …) with args that start rtload.
func rtloadVia(t *testing.T, prog string, args ...string) result {
	t.Helper()
	return runProgram(t, nil, prog, args...)
}

// runProgram runs prog as cred (nil: as this user) for at most 3 minutes.
func runProgram(t *testing.T, cred *syscall.Credential, prog string, args ...string) result {
	t.Helper()
	cmd := exec.Command(prog, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code, o.String(), e.String()}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("rtload %v: no exit after 3 min", args)
	}
	return result{}
}

func TestValidate(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\nreaders:\n  - cpu: 0\n    priority: 120\n"), 0o644)
	// Issue 34 row 8: validated "ok", and run died after 32 s with the Go
	// runtime's "fatal error: thread exhaustion".
	threads := filepath.Join(t.TempDir(), "threads.yaml")
	os.WriteFile(threads, []byte("name: threads\nreaders: [{cpu: 0}]\nnoise:\n"+strings.Repeat("  - {kind: spin, threads: 1024}\n", 12)), 0o644)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"built-in ok", []string{"validate", "laight-450"}, 0, "ok"},
		{"file ok", []string{"validate", "../../configs/laight-450.yaml"}, 0, "ok"},
		{"priority out of range, with file:line:col", []string{"validate", bad}, 2, bad + ":4:15: readers[0].priority: 120 out of range (allowed: 1–99)"},
		{"more threads than the runtime can make", []string{"validate", threads}, 2, threads + ":7:27: noise[3].threads: a trial would run 12289 threads"},
		{"run refuses them before anything", []string{"run", threads, "--duration", "100ms"}, 2, "noise[3].threads: a trial would run 12289 threads"},
		// Issue 34 row 10: the variants set the method, so they ran, and
		// summary.json recorded recvmmsg.
		{"--set of a field the variants set", []string{"validate", "laight-450", "--set", "readers[0].method=recvmmsg"}, 2,
			`--set readers[0].method: variants "recvfrom" and "recvmsg" set it`},
		{"run refuses it before anything", []string{"run", "laight-450", "--set", "readers[0].method=recvmmsg", "--duration", "100ms"}, 2,
			`--set readers[0].method: variants "recvfrom" and "recvmsg" set it`},
		{"unknown scenario", []string{"validate", "nope"}, 2, `no built-in scenario "nope"`},
		{"bad --set path", []string{"validate", "laight-450", "--set", "readers[0].colour=red"}, 2, "colour"},
		{"missing argument", []string{"validate"}, 2, "accepts 1 arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rtload(t, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.contains) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", r.code, tc.code, tc.contains, r.stdout, r.stderr)
			}
		})
	}
}

func TestUsageExitCode(t *testing.T) {
	r := rtload(t, nil, "run", "--no-such-flag")
	if r.code != 2 {
		t.Errorf("unknown flag: exit %d, want 2 (%s)", r.code, r.stderr)
	}
	// -v before the command is not the command's -v (verbose): it printed
	// the version and exited 0, which git bisect run reads as "good".
	if r := rtload(t, nil, "-v", "check", filepath.Join(t.TempDir(), "none")); r.code != 2 || !strings.Contains(r.stderr, "-v") {
		t.Errorf("rtload -v check: exit %d, want 2 naming -v (%s%s)", r.code, r.stdout, r.stderr)
	}
	if r := rtload(t, nil, "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "rtload version ") {
		t.Errorf("rtload --version: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}

func TestList(t *testing.T) {
	r := rtload(t, nil, "list")
	if r.code != 0 || !strings.Contains(r.stdout, "laight-450 (default)") || !strings.Contains(r.stdout, "timer-only") {
		t.Errorf("exit %d:\n%s", r.code, r.stdout)
	}
}

func TestEnvJSON(t *testing.T) {
	r := rtload(t, nil, "env", "--json")
	var f struct {
		Kernel string `json:"kernel"`
		CPUs   int    `json:"cpus"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &f); err != nil || f.Kernel == "" || f.CPUs < 1 {
		t.Fatalf("env --json: %v %+v\n%s", err, f, r.stdout)
	}
	if r := rtload(t, nil, "env"); !strings.Contains(r.stdout, "sched_rt_runtime_us") {
		t.Errorf("env text lacks sched_rt_runtime_us:\n%s", r.stdout)
	}
}

// TestRunDefault runs the default scenario shortened to 1 s trials and one
// round: the seed's table with both columns, wakeup latency, no loss, and a
// results directory that reads back.
func TestRunDefault(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	out := t.TempDir()
	r := rtload(t, nil, "run", "--duration", "1s", "--set", "rounds=1", "--set", "warmup=200ms", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"recvfrom", "recvmsg", "8256+:", "Total:", "wakeup latency", "TSC ticks are not core cycles", "results: " + out} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	s, err := store.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Trials) != 2 || s.Trials[0].Variant != "recvfrom" || s.Trials[1].Variant != "recvmsg" {
		t.Fatalf("trials %+v", s.Trials)
	}
	// The default interleaves its two variants in one trial: between them
	// they read every message its sender sent.
	if s.Trials[0].Interleave == nil || s.Trials[1].Interleave == nil || s.Trials[0].Interleave.Group != s.Trials[1].Interleave.Group {
		t.Fatalf("trials not interleaved in one group: %+v, %+v", s.Trials[0].Interleave, s.Trials[1].Interleave)
	}
	if got, sent := s.Trials[0].Readers[0].Messages+s.Trials[1].Readers[0].Messages, s.Trials[0].Traffic[0].Sent; got != sent {
		t.Errorf("the variants received %d of %d messages sent", got, sent)
	}
	if !strings.Contains(r.stdout, "recvmsg") || !strings.Contains(r.stdout, "ABBA block pairs") {
		t.Errorf("output lacks the interleaved line:\n%s", r.stdout)
	}
	runShape(t, r.stdout, out)
	// The answer's numbers are report --format json's (one number per
	// quantity): the metric's interval, by the verdicts' rule.
	rep := rtload(t, nil, "report", out, "--format", "json")
	var doc compare.RunReport
	if err := json.Unmarshal([]byte(rep.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range doc.Metrics {
		if iv := m.Interval; m.Name == "mean per-call cost" && m.Unit == "ns" && iv != nil && iv.PointPct != nil && iv.LowPct != nil && iv.HighPct != nil {
			found = true
			want := fmt.Sprintf("recvmsg %+.1f%% per call [%+.1f, %+.1f] vs recvfrom, n = %s: ", *iv.PointPct, *iv.LowPct, *iv.HighPct, iv.N)
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the answer is not report --format json's %q:\n%s", want, r.stdout)
			}
		}
	}
	if !found {
		t.Errorf("report --format json has no interval for recvmsg's mean per-call cost")
	}
	for _, tr := range s.Trials {
		rd := tr.Readers[0]
		if rd.Lost != 0 || rd.SocketsRead != 450 || tr.GCDuring != 0 {
			t.Errorf("%s: lost %d, sockets read %d, gc %d", tr.Variant, rd.Lost, rd.SocketsRead, tr.GCDuring)
		}
		if rd.Applied.Policy != "SCHED_FIFO" || s.Degraded {
			t.Errorf("%s: policy %s degraded %v", tr.Variant, rd.Applied.Policy, s.Degraded)
		}
		if len(rd.WakeupLog) == 0 {
			t.Errorf("%s: no wakeup log listed", tr.Variant)
		}
		for _, f := range rd.WakeupLog {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Error(err)
			}
		}
	}
}

// seedAnswer is the closing block's seed 000 answer: "recvmsg +8.3% per
// call [+5.1, +11.6] vs recvfrom, n = …".
var seedAnswer = regexp.MustCompile(`(?m)^recvmsg [+-]\d+\.\d% per call \[[+-]\d+\.\d, [+-]\d+\.\d\] vs recvfrom, n = \d+ `)

// runShape checks the default output of a run of the default scenario
// (what make run prints): at most 80 lines, the seed's table once, the
// closing block last, the recvmsg-vs-recvfrom answer with its percentage
// and interval in the last 12 lines, the results directory last.
func runShape(t *testing.T, stdout, dir string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) > 80 {
		t.Errorf("the default output has %d lines, want at most 80:\n%s", len(lines), stdout)
	}
	tail := strings.Join(lines[max(0, len(lines)-12):], "\n")
	if !seedAnswer.MatchString(tail) {
		t.Errorf("the last 12 lines lack the recvmsg-vs-recvfrom answer:\n%s", tail)
	}
	if last := lines[len(lines)-1]; last != "results: "+dir {
		t.Errorf("the last line is %q, want the results directory", last)
	}
	if n := strings.Count(stdout, "Total:"); n != 1 {
		t.Errorf("the seed's table %d times, want once", n)
	}
}

// firstRound is how many trials a run stopped inside its first round
// keeps: its one trial, or, with its variants interleaved (the default
// scenario), the trial of each variant.
func firstRound(s *results.Summary) int {
	if len(s.Trials) > 0 && s.Trials[0].Interleave != nil {
		return len(s.Trials[0].Interleave.Order) / 2
	}
	return 1
}

// TestRunInterrupted sends SIGINT and SIGTERM mid-run: exit 130, and a
// complete summary marked stopped.
func TestRunInterrupted(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(binary, "run", "--duration", "20s", "--set", "rounds=1", "--out", out, "-q")
			var o bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &o
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// 500 ms of warm-up (50 ticks), then at least 100 ticks
			// measured: inside the window (its wakeup log is written
			// when the trial ends).
			waitFor(t, time.Minute, "150 ticks of reader rt", ticked(cmd.Process.Pid, "rtl-rd/rt", 150))
			cmd.Process.Signal(sig)
			if c := waitExit(t, cmd); c != 130 {
				t.Errorf("exit %d, want 130\n%s", c, o.String())
			}
			s, err := store.ReadSummary(out)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Stopped || s.StoppedAt == nil || len(s.Trials) != firstRound(s) {
				t.Fatalf("summary stopped=%v (at %v) trials=%d, want the %d of the first round", s.Stopped, s.StoppedAt, len(s.Trials), firstRound(s))
			}
			// The signal came after 150 ticks of the reader: inside the
			// window, nearly always. Waits of the reader before its loop
			// count as ticks too, so on a busy machine it may still have
			// been warming up: then the trial measured nothing and must
			// say so.
			for _, tr := range s.Trials {
				w := tr.Readers[0].Wakeups
				if (w == 0) != tr.Marked(results.MarkEmpty) {
					t.Errorf("%s: %d wakeups, marks %+v: a stopped trial that measured nothing is marked empty, and only then", tr.Variant, w, tr.Marks)
				}
				t.Logf("%s: %d wakeups before the stop", tr.Variant, w)
			}
		})
	}
}

// TestRunUnprivileged runs as nobody: without --allow-degraded the run
// stops with the missing capability named (exit 3); with it, it runs at
// SCHED_OTHER and the results say degraded.
func TestRunUnprivileged(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	// The results directories are nobody's own: rtload refuses others'.
	out, err := testutil.MkdirTemp("rtload-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	os.Chmod(out, 0o755)
	os.Chown(out, 65534, 65534)
	first := filepath.Join(out, "first")
	r := rtload(t, nobody, "run", "--duration", "300ms", "--set", "rounds=1", "--set", "noise[0].threads=1", "--out", first, "-q")
	if r.code != 3 || !strings.Contains(r.stderr, "CAP_SYS_NICE") || !strings.Contains(r.stderr, "--allow-degraded") {
		t.Fatalf("exit %d, want 3 naming CAP_SYS_NICE and --allow-degraded:\n%s", r.code, r.stderr)
	}
	// The refusal leaves no empty results directory behind.
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("refused run left %s behind (%v)", first, err)
	}
	out2 := filepath.Join(out, "degraded")
	r = rtload(t, nobody, "run", "--duration", "300ms", "--set", "rounds=1", "--set", "noise[0].threads=1", "--out", out2, "-q", "--allow-degraded")
	if r.code != 0 {
		t.Fatalf("--allow-degraded: exit %d\n%s", r.code, r.stderr)
	}
	s, err := store.ReadSummary(out2)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Degraded || len(s.DegradedReasons) == 0 || s.Trials[0].Readers[0].Applied.Policy != "SCHED_OTHER" {
		t.Errorf("degraded %v reasons %v policy %s", s.Degraded, s.DegradedReasons, s.Trials[0].Readers[0].Applied.Policy)
	}
	if !strings.Contains(r.stdout, "DEGRADED") && !strings.Contains(r.stdout, "degraded") {
		t.Errorf("report does not say degraded:\n%s", r.stdout)
	}
}

// ownedNamespaces lists /run/netns entries created by pid.
func ownedNamespaces(t *testing.T, pid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var own []string
	prefix := "rtl" + strconv.Itoa(pid) + "-"
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			own = append(own, e.Name())
		}
	}
	return own
}

// TestTapNothingLeftBehind runs laight-450-tap and stops it three ways:
// SIGINT (orderly: exit 130, namespace gone), SIGINT twice (forced exit,
// namespace still removed) and SIGKILL (namespace left, then removed by
// rtload cleanup without touching a foreign-looking one).
func TestTapNothingLeftBehind(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skip("needs /dev/net/tun")
	}
	start := func(t *testing.T) (*exec.Cmd, *bytes.Buffer) {
		out := t.TempDir()
		cmd := exec.Command(binary, "run", "laight-450-tap", "--duration", "20s", "--set", "rounds=1", "--out", out, "-q")
		var o bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &o
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait (bounded) until its namespace exists and it measures.
		if !testutil.Eventually(30*time.Second, func() bool { return len(ownedNamespaces(t, cmd.Process.Pid)) == 1 }) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no namespace for pid %d after 30 s\n%s", cmd.Process.Pid, o.String())
		}
		waitFor(t, time.Minute, "150 ticks of reader rt", ticked(cmd.Process.Pid, "rtl-rd/rt", 150))
		return cmd, &o
	}
	t.Run("SIGINT", func(t *testing.T) {
		cmd, o := start(t)
		cmd.Process.Signal(syscall.SIGINT)
		if c := waitExit(t, cmd); c != 130 {
			t.Errorf("exit %d, want 130\n%s", c, o.String())
		}
		if left := ownedNamespaces(t, cmd.Process.Pid); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	})
	t.Run("SIGINT twice", func(t *testing.T) {
		cmd, o := start(t)
		cmd.Process.Signal(syscall.SIGINT)
		time.Sleep(session.SignalWindow + 100*time.Millisecond) // a second Ctrl-C, not the same one twice
		cmd.Process.Signal(syscall.SIGINT)
		if c := waitExit(t, cmd); c != 130 {
			t.Errorf("exit %d, want 130\n%s", c, o.String())
		}
		if left := ownedNamespaces(t, cmd.Process.Pid); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	})
	t.Run("SIGKILL then cleanup", func(t *testing.T) {
		cmd, _ := start(t)
		cmd.Process.Kill()
		waitExit(t, cmd)
		left := ownedNamespaces(t, cmd.Process.Pid)
		if len(left) != 1 {
			t.Fatalf("after SIGKILL: %v, want the run's namespace", left)
		}
		r := rtload(t, nil, "cleanup")
		if r.code != 0 || !strings.Contains(r.stdout, "removed namespace "+left[0]+": owner pid") {
			t.Errorf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if left := ownedNamespaces(t, cmd.Process.Pid); len(left) != 0 {
			t.Errorf("after cleanup: %v", left)
		}
	})
}

// TestSoakSignals runs a soak (--duration forever, 1 s intervals) and ends
// it three ways. SIGINT and SIGTERM: exit 130, a complete summary marked
// stopped, intervals and gzip-closed logs. SIGKILL: whatever survives —
// the checkpointed summary, intervals.jsonl, the wakeup log chunks — parses,
// and rtload compare and plot read the directory.
func TestSoakSignals(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	start := func(t *testing.T, out string) *exec.Cmd {
		cmd := exec.Command(binary, "run", "laight-450", "--duration", "forever", "--interval", "1s",
			"--set", "rounds=1", "--set", "noise[0].threads=1", "--set", "readers[0].threshold=2ms", "--out", out, "-q")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Three intervals written, and summary.json checkpointed.
		waitFor(t, time.Minute, "3 interval records and a checkpoint", func() bool {
			ivs, _, err := store.ReadJSONL[results.Interval](filepath.Join(out, results.IntervalsFile))
			return err == nil && len(ivs) >= 3 && summaryTrials(out) == 1
		})
		return cmd
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := t.TempDir()
			cmd := start(t, out)
			cmd.Process.Signal(sig)
			if c := waitExit(t, cmd); c != 130 {
				t.Errorf("exit %d, want 130", c)
			}
			s, err := store.ReadSummary(out)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Stopped || s.InProgress || len(s.Trials) != 1 || s.Trials[0].Readers[0].Intervals < 2 {
				t.Fatalf("summary stopped=%v in_progress=%v trials=%d", s.Stopped, s.InProgress, len(s.Trials))
			}
			ivs, torn, err := store.ReadJSONL[results.Interval](filepath.Join(out, results.IntervalsFile))
			if err != nil || torn != 0 || len(ivs) < 2 {
				t.Errorf("intervals: %d records, torn %d, %v", len(ivs), torn, err)
			}
			rows, st, err := wakelog.ReadLog(out, "wakeups-00-recvfrom-r0-rt")
			if err != nil || uint64(len(rows)) != s.Trials[0].Readers[0].Wakeups || st.TornRows != 0 {
				t.Errorf("wakeup log: %d rows of %d wakeups, %+v, %v", len(rows), s.Trials[0].Readers[0].Wakeups, st, err)
			}
		})
	}
	t.Run("SIGKILL", func(t *testing.T) {
		out := t.TempDir()
		cmd := start(t, out)
		cmd.Process.Kill()
		waitExit(t, cmd)
		s, err := store.ReadSummary(out)
		if err != nil {
			t.Fatalf("checkpointed summary: %v", err)
		}
		if !s.InProgress || len(s.Trials) != 1 || s.Trials[0].Readers[0].Wakeups == 0 {
			t.Errorf("checkpoint: in_progress=%v trials=%d", s.InProgress, len(s.Trials))
		}
		ivs, _, err := store.ReadJSONL[results.Interval](filepath.Join(out, results.IntervalsFile))
		if err != nil || len(ivs) < 2 {
			t.Errorf("intervals after SIGKILL: %d, %v", len(ivs), err)
		}
		if _, _, err := wakelog.ReadLog(out, "wakeups-00-recvfrom-r0-rt"); err != nil {
			t.Errorf("wakeup log after SIGKILL: %v", err)
		}
		if r := rtload(t, nil, "compare", out); r.code != 0 || !strings.Contains(r.stdout, "Total:") {
			t.Errorf("compare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		png := filepath.Join(t.TempDir(), "k.png")
		if r := rtload(t, nil, "plot", out, "--out", png); r.code != 0 {
			t.Errorf("plot: exit %d\n%s", r.code, r.stderr)
		}
		if st, err := os.Stat(png); err != nil || st.Size() < 10000 {
			t.Errorf("plot output: %v", err)
		}
	})
}

// TestCompareTwoRealRuns makes two results directories of laight-450 with
// one setting changed (the message size) and compares them: seed 000's
// four-column table, the percentile tables, verdicts, and the warning that
// names the difference. Then a repeat run prints seed 001's statistics.
func TestCompareTwoRealRuns(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	a, b := t.TempDir(), t.TempDir()
	for _, run := range []struct{ dir, size string }{{a, "64"}, {b, "512"}} {
		r := rtload(t, nil, "run", "laight-450", "--duration", "700ms", "--set", "warmup=200ms", "--set", "rounds=2",
			"--set", "traffic[0].size="+run.size, "--set", "noise[0].threads=1", "--out", run.dir, "-q")
		if r.code != 0 {
			t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
		}
	}
	r := rtload(t, nil, "compare", a, b, "--label", "unhard,hard", "-v")
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"recvfrom", "recvmsg", "unhard |     hard |   unhard |     hard", "Total:", "8256+:",
		"p99", "WARNING: runs differ in spec traffic[0].size", "Welch t on per-round logs", "n = 1 process × 2 rounds",
		"between-process noise was not measured", "variance split"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("compare output lacks %q", want)
		}
	}
	if !strings.Contains(r.stdout, "undecided") && !strings.Contains(r.stdout, "slower") && !strings.Contains(r.stdout, "same") {
		t.Errorf("no verdicts in compare output")
	}
	// The default: at most 60 lines, ending on the verdict, besides one
	// line per run for each kind of mark the machine gave its trials
	// (another rtload on CPU 1, a starved reader: the machine's, and at
	// most 4 kinds × 2 runs).
	def := rtload(t, nil, "compare", a, b, "--label", "unhard,hard")
	lines := strings.Split(strings.TrimSuffix(def.stdout, "\n"), "\n")
	marks := 0
	for _, l := range lines {
		for _, w := range []string{compare.WarnInvalid, compare.WarnTraffic, compare.WarnStarved, compare.WarnShared} {
			if strings.HasPrefix(l, "WARNING: "+w+" in ") {
				marks++
			}
		}
	}
	if def.code != 0 || len(lines)-marks > 60 || marks > 8 || !strings.HasPrefix(lines[len(lines)-1], "verdict: ") {
		t.Errorf("compare A B: exit %d, %d lines of which %d mark lines (want ≤ 60 besides at most 8), ending on %q, not its verdict:\n%s",
			def.code, len(lines), marks, lines[len(lines)-1], def.stdout)
	}
	if q := rtload(t, nil, "compare", a, b, "-q"); !strings.HasPrefix(q.stdout, "verdicts at ±3%") || lastLine(q.stdout) != lines[len(lines)-1] {
		t.Errorf("compare -q: not the closing block alone:\n%s", q.stdout)
	}
	for _, f := range []string{"json", "csv", "markdown"} {
		if r := rtload(t, nil, "compare", a, b, "--format", f); r.code != 0 || len(r.stdout) < 200 {
			t.Errorf("compare --format %s: exit %d, %d bytes", f, r.code, len(r.stdout))
		}
	}
	rep := rtload(t, nil, "run", "laight-450", "--duration", "300ms", "--set", "warmup=100ms", "--repeat", "5",
		"--set", "noise[0].threads=1", "--out", t.TempDir(), "-v")
	if rep.code != 0 {
		t.Fatalf("repeat run: exit %d\n%s", rep.code, rep.stderr)
	}
	for _, want := range []string{"per round (5 rounds", "Runs: ", "Min: ", "Max: ", "Mean: ", "Std Dev: ", "than recvfrom"} {
		if !strings.Contains(rep.stdout, want) {
			t.Errorf("repeat output lacks %q", want)
		}
	}
}

// TestExplain runs laight-450 briefly and explains it: the EAGAIN and data
// peaks are named with their class shares, the tail with the share of
// first-calls-after-wakeup, and the cycles clock is refused with its reason.
func TestExplain(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	out := t.TempDir()
	if r := rtload(t, nil, "run", "laight-450", "--duration", "1s", "--set", "rounds=1", "--set", "noise[0].threads=1", "--out", out, "-q"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	r := rtload(t, nil, "explain", out, "-v")
	if r.code != 0 {
		t.Fatalf("explain: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"peak at ~", "warm EAGAIN", "cold EAGAIN", "mostly data", "tail: calls ≥", "among the first 3 calls after a wakeup", "wakeup latency:", "reader CPU 1",
		// the machine around the spikes, each with its unit
		"with steal time on CPU 1 in their window", "with more interrupts than usual on CPU 1", "preemption model: ", "runqueue-wait ", " switches (", "per wakeup)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("explain -v output lacks %q", want)
		}
	}
	if strings.Contains(r.stdout, "nothing recorded explains") && !strings.Contains(r.stdout, "checked: overruns, involuntary context switches, steal time on CPU 1, interrupts on CPU 1") {
		t.Errorf("explain says nothing explains spikes without naming what it checked:\n%s", r.stdout)
	}
	// The default is a few lines per reader, ending on the closing block.
	def := rtload(t, nil, "explain", out)
	q := rtload(t, nil, "explain", out, "-q")
	if def.code != 0 || q.code != 0 || !strings.HasSuffix(def.stdout, q.stdout) || strings.Count(def.stdout, "\n") > 40 ||
		!strings.HasPrefix(q.stdout, "spikes ") || !strings.Contains(q.stdout, "per-call tail") {
		t.Errorf("explain: default (exit %d) not ending on the closing block (-q, exit %d):\n%s\n--\n%s", def.code, q.code, def.stdout, q.stdout)
	}
	if r := rtload(t, nil, "run", "timer-only", "--set", "clock=cycles", "--duration", "200ms", "--out", t.TempDir(), "-q"); r.code != 3 && r.code != 0 {
		t.Errorf("clock=cycles: exit %d, want 3 (refused with its reason) or 0 (PMU present)\n%s", r.code, r.stderr)
	} else if r.code == 3 && !strings.Contains(r.stderr, "cycles") {
		t.Errorf("clock=cycles refusal does not name the counter: %s", r.stderr)
	}
}

// waitExit waits (at most 20 s, then kills) for a started rtload to exit
// after a signal and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("no exit 20 s after the signal")
	}
	return cmd.ProcessState.ExitCode()
}
