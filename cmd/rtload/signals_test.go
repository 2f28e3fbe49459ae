package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/session"
)

var (
	signalMoments = flag.Int("signal-moments", 2, "TestSignalsAtRandomMoments: random moments per signal and scenario (issue 22's full test: 10)")
	signalSeed    = flag.Uint64("signal-seed", 0, "TestSignalsAtRandomMoments: seed of the moments (0: from the clock; the seed is printed)")
)

// signalScenarios are TestSignalsAtRandomMoments' runs: a normal one
// (loopback sockets, a sender, a reader, noise) and a tap one (a private
// namespace with a tap device), each two short trials.
var signalScenarios = []struct {
	name string
	args []string
	tap  bool
}{
	{"normal", []string{"run", "laight-450", "--duration", "500ms", "--set", "warmup=100ms", "--set", "rounds=1", "--set", "noise[0].threads=1"}, false},
	{"tap", []string{"run", "laight-450-tap", "--duration", "500ms", "--set", "warmup=100ms", "--set", "noise[0].threads=1"}, true},
}

// TestSignalsAtRandomMoments sends SIGHUP and SIGQUIT to real runs at
// random moments (seeded, the seed printed; -signal-moments per signal
// and scenario) from the plan's first line (rtload's handlers are
// installed before it) to a little past the run's measured length. Every
// run must stop cleanly: exit 129 or 131 with the signal named (0 when
// the signal came after the run ended), every trial that started in
// summary.json (complete, or up to the stop, marked stopped), nothing
// measured and no results directory left when it came before the first
// trial, no temporary file, no namespace of the run left, and after
// SIGQUIT the goroutine stacks.
func TestSignalsAtRandomMoments(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	seed := *signalSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (again: go test ./cmd/rtload -run TestSignalsAtRandomMoments -args -signal-seed=%d -signal-moments=%d)", seed, seed, *signalMoments)
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, sc := range signalScenarios {
		t.Run(sc.name, func(t *testing.T) {
			if sc.tap {
				testutil.Requires(t, testutil.DevNetTun)
			}
			base := runSignalled(t, sc.args, 0, -1)
			if base.code != 0 || base.trials == 0 {
				t.Fatalf("unsignalled run: exit %d, %d trials\n%s", base.code, base.trials, base.stderr)
			}
			span := base.span
			t.Logf("unsignalled: %v from the plan to the exit, %d trials", span.Round(time.Millisecond), base.trials)
			for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
				for range *signalMoments {
					at := time.Duration(rng.Float64() * 1.1 * float64(span))
					checkSignalled(t, sig, at, runSignalled(t, sc.args, sig, at), base.trials)
				}
			}
		})
	}
}

// signalled is what one run signalled at a moment left.
type signalled struct {
	code           int
	killed         bool          // ended by a signal's default action
	span           time.Duration // from the plan's first line to the exit
	stderr, stdout string
	trials         int // "trial i/N" lines: trials started
	out            string
	pid            int
}

// runSignalled runs rtload with args into a new --out and, at >= 0 after
// the first line of its plan, sends sig.
func runSignalled(t *testing.T, args []string, sig syscall.Signal, at time.Duration) signalled {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(binary, append(append([]string{}, args...), "--out", out)...)
	var e bytes.Buffer
	cmd.Stderr = &e
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var o bytes.Buffer
	first := make(chan time.Time, 1)
	var copied sync.WaitGroup
	copied.Add(1)
	go func() {
		defer copied.Done()
		br := bufio.NewReader(pipe)
		line, err := br.ReadString('\n')
		first <- time.Now()
		o.WriteString(line)
		if err == nil {
			io.Copy(&o, br)
		}
	}()
	var t0 time.Time
	select {
	case t0 = <-first:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("rtload %v: no plan within 30 s", args)
	}
	if at >= 0 {
		timer := time.AfterFunc(at, func() { cmd.Process.Signal(sig) })
		defer timer.Stop()
	}
	copied.Wait() // stdout closed: the process is exiting
	code := waitExit(t, cmd)
	r := signalled{code: code, span: time.Since(t0), stderr: e.String(), stdout: o.String(), out: out, pid: cmd.Process.Pid}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.killed = true
	}
	r.trials = trialsStarted(r.stderr)
	return r
}

// trialLine is a progress line of the plan: "trial 3/4: …" for one
// trial, "trials 1–2/2: …" for interleaved variants run as one.
var trialLine = regexp.MustCompile(`(?m)^trials? (\d+)(?:–(\d+))?/\d+: `)

// trialsStarted counts the trials the progress lines in stderr started.
func trialsStarted(stderr string) int {
	n := 0
	for _, m := range trialLine.FindAllStringSubmatch(stderr, -1) {
		first, _ := strconv.Atoi(m[1])
		last := first
		if m[2] != "" {
			last, _ = strconv.Atoi(m[2])
		}
		n += last - first + 1
	}
	return n
}

// checkSignalled asserts that run r, signalled with sig at at, stopped
// cleanly (see TestSignalsAtRandomMoments); total is the trials of a
// whole run.
func checkSignalled(t *testing.T, sig syscall.Signal, at time.Duration, r signalled, total int) {
	t.Helper()
	name := session.StopSignal{Sig: sig}.Name()
	s, err := store.ReadSummary(r.out)
	lost := r.trials
	if err == nil {
		lost = r.trials - len(s.Trials)
	}
	t.Logf("%s at %v: exit %d, %d trial(s) started, %d in summary.json, %d lost", name, at.Round(time.Millisecond), r.code, r.trials, r.trials-lost, lost)
	fail := func(format string, a ...any) {
		t.Helper()
		t.Errorf("%s at %v: "+format+"\nstderr:\n%s", append(append([]any{name, at}, a...), r.stderr)...)
	}
	if r.killed {
		fail("killed by the signal's default action (no handler)")
		return
	}
	switch want := (session.StopSignal{Sig: sig}).Code(); {
	case r.code == 0:
		// The signal came after the run ended: complete results.
		if err != nil || s.Stopped || s.InProgress || len(s.Trials) != total {
			fail("exit 0, but summary.json %v: want every one of %d trials, not stopped", summaryState(s, err), total)
		}
	case r.code != want:
		fail("exit %d, want %d (or 0 after the run's end)", r.code, want)
	case !strings.Contains(r.stderr, "rtload: "+name):
		fail("exit %d without the signal's message", r.code)
	case r.trials == 0:
		// Before the first trial: nothing measured, nothing left.
		if _, serr := os.Stat(r.out); !errors.Is(serr, fs.ErrNotExist) {
			ents, _ := os.ReadDir(r.out)
			fail("no trial started, but the results directory is left (%d entries)", len(ents))
		}
	default:
		if err != nil || !s.Stopped || s.InProgress || len(s.Trials) != r.trials {
			fail("%d trial(s) started, summary.json %v: want all of them, marked stopped", r.trials, summaryState(s, err))
		}
	}
	if sig == syscall.SIGQUIT && r.code == ExitQuit && !strings.Contains(r.stderr, "goroutine stacks at exit") {
		fail("no goroutine stacks after SIGQUIT")
	}
	if _, serr := os.Stat(r.out); serr == nil {
		noTemps(t, r.out)
	}
	if left := ownedNamespaces(t, r.pid); len(left) != 0 {
		fail("namespaces left: %v", left)
	}
}

// summaryState says what a read summary.json holds, for a failure.
func summaryState(s *results.Summary, err error) string {
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return fmt.Sprintf("trials %d, stopped %v, in_progress %v", len(s.Trials), s.Stopped, s.InProgress)
}

// TestExitCodesDocumented: every exit code has a row in the exit code
// table (docs/output.md) and is named in rtload --help, the signal codes
// included.
func TestExitCodesDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	help := newRoot().Long
	for _, c := range []int{ExitOK, ExitFailed, ExitUsage, ExitPrivilege, ExitCannotJudge, ExitHangup, ExitInterrupted, ExitQuit} {
		if !strings.Contains(string(readme), fmt.Sprintf("\n| %d | ", c)) {
			t.Errorf("docs/output.md's exit code table has no row for %d", c)
		}
		if !regexp.MustCompile(fmt.Sprintf(`\b%d\b`, c)).MatchString(help) {
			t.Errorf("rtload --help does not name exit code %d", c)
		}
	}
	for _, s := range session.StopSignals() {
		if !strings.Contains(help, s.Name()) && s.Sig != syscall.SIGINT {
			t.Errorf("rtload --help does not name %s", s.Name())
		}
	}
}

// TestAddressSpaceLimit: under ulimit -v a run that would not fit is
// refused before anything exists (exit 3, the limit named with the
// ulimit -v to give; no namespace, no results directory), and one that
// fits runs: a cgo build (this test's binary: 8 MiB pthread stacks, malloc
// arenas) at 2 GiB, and a static build (make build's) of a soak at 1.5 GiB,
// whose heap may grow by the GC headroom; the static build's tap run fits
// 1.5 GiB and runs.
func TestAddressSpaceLimit(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	testutil.Requires(t, testutil.DevNetTun)
	static := filepath.Join(t.TempDir(), "rtload-static")
	build := exec.Command("go", "build", "-o", static, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	tap := []string{"run", "laight-450-tap", "--duration", "500ms", "--set", "warmup=100ms", "--set", "noise[0].threads=1"}
	for _, tc := range []struct {
		name   string
		bin    string
		kib    int
		args   []string
		refuse bool
	}{
		{"cgo build at 2 GiB", binary, 2 << 20, tap, true},
		{"static soak at 1.5 GiB", static, 1536 << 10, append(append([]string{}, tap...), "--duration", "forever"), true},
		{"static tap run at 1.5 GiB", static, 1536 << 10, tap, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -v "$0" && exec "$@"`, strconv.Itoa(tc.kib), tc.bin}, append(tc.args, "--out", out)...)...)
			var o bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &o
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			code := waitExit(t, cmd)
			if left := ownedNamespaces(t, cmd.Process.Pid); len(left) != 0 {
				t.Errorf("namespaces left: %v", left)
			}
			if !tc.refuse {
				if code != 0 {
					t.Errorf("exit %d, want 0 (the run fits)\n%s", code, o.String())
				}
				return
			}
			want := fmt.Sprintf("rtload: address space: RLIMIT_AS (ulimit -v) is %.2fGiB (%d KiB), and this run needs about ", float64(tc.kib)/(1<<20), tc.kib)
			if code != ExitPrivilege || !strings.Contains(o.String(), want) || !strings.Contains(o.String(), "or lift it (ulimit -v unlimited)") {
				t.Errorf("exit %d, want %d with %q\n%s", code, ExitPrivilege, want, o.String())
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("refused run left %s: %v", out, err)
			}
			t.Logf("%s", strings.TrimSpace(o.String()))
		})
	}
}

// TestSignalsInheritedIgnored (issue 34 row 11): a run started as a
// background job of a non-interactive shell (`rtload run … &`, which the
// shell starts with SIGINT and SIGQUIT ignored) still stops on `kill -INT`
// and `kill -QUIT` with complete results (exit 130, 131, summary.json
// marked stopped with every trial that started); one started under nohup
// (SIGHUP ignored) keeps SIGHUP ignored and runs to its end (exit 0, every
// trial, not stopped).
func TestSignalsInheritedIgnored(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	for _, tc := range []struct {
		name   string
		script string // sh -c script; $0 is rtload, "$@" its arguments
		sig    syscall.Signal
		code   int
	}{
		// The shell's own background job: SIGINT and SIGQUIT ignored.
		{"background job, SIGINT", `"$0" "$@" & echo $!; wait $!`, syscall.SIGINT, ExitInterrupted},
		{"background job, SIGQUIT", `"$0" "$@" & echo $!; wait $!`, syscall.SIGQUIT, ExitQuit},
		// nohup's convention: SIGHUP ignored stays ignored.
		{"nohup, SIGHUP", `trap '' HUP; "$0" "$@" & echo $!; wait $!`, syscall.SIGHUP, ExitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			duration := "20s"
			if tc.code == ExitOK {
				duration = "2s" // runs to its end
			}
			cmd := exec.Command("/bin/sh", "-c", tc.script+`; echo "exit $?"`, binary, "run", "--duration", duration, "--set", "rounds=1",
				"--set", "noise[0].threads=1", "--out", out, "-q")
			var e bytes.Buffer
			cmd.Stderr = &e
			pipe, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			br := bufio.NewReader(pipe)
			line, err := br.ReadString('\n')
			pid, perr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || perr != nil {
				t.Fatalf("no pid from the script: %q %v", line, err)
			}
			// Inside the window: 500 ms of warm-up (50 ticks), then at
			// least 100 measured (the interleaved trial's wakeup log is
			// written only when it ends).
			waitFor(t, time.Minute, "150 ticks of reader rt", ticked(pid, "rtl-rd/rt", 150))
			if err := syscall.Kill(pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(br)
			waitExit(t, cmd)
			var code int
			lines := strings.Split(strings.TrimSpace(string(rest)), "\n")
			if _, err := fmt.Sscanf(lines[len(lines)-1], "exit %d", &code); err != nil {
				t.Fatalf("no exit status from the script: %q\n%s", rest, e.String())
			}
			s, err := store.ReadSummary(out)
			t.Logf("%s: exit %d, summary %s", tc.sig, code, summaryState(s, err))
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, e.String())
			}
			switch {
			case err != nil:
				t.Errorf("summary.json: %v", err)
			case tc.code == ExitOK && (s.Stopped || s.InProgress || len(s.Trials) == 0):
				t.Errorf("%s ignored under nohup, yet summary.json %s: want the whole run, not stopped", tc.sig, summaryState(s, err))
			case tc.code != ExitOK && (!s.Stopped || s.InProgress || len(s.Trials) != firstRound(s)):
				t.Errorf("summary.json %s: want the trial that started, stopped", summaryState(s, err))
			}
			noTemps(t, out)
		})
	}
}
