package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/explain"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/session"
	"github.com/rtload/rtload/verdict"
)

// decode parses a command's JSON output into v, failing t with the output.
func decode(t *testing.T, r result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
}

// TestCheckGate is issues 17 and 24's acceptance on this machine (root):
// a check against a baseline of 3 processes made seconds earlier is never
// proven slower (exit 0 or 125: not slower, or undecided within its
// budget), and says n as processes × rounds with the variance split; the
// same check with 9000-byte messages instead of 64 is proven slower (exit
// 1); a degraded run cannot be judged (exit 125), nor can a run missing a
// privilege.
func TestCheckGate(t *testing.T) {
	testutil.Requires(t, testutil.System, testutil.Root, testutil.CPUs(2))
	// Directories nobody can read (and own, for its results).
	top, err := testutil.MkdirTemp("rtload-check-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	os.Chmod(top, 0o755)
	base := filepath.Join(top, "base")

	r := rtload(t, nil, "run", "testdata/gate-size.yaml", "--processes", "3", "--out", base, "-q", "--format", "json")
	if r.code != 0 {
		t.Fatalf("baseline: exit %d\n%s", r.code, r.stderr)
	}
	var run session.RunDoc
	decode(t, r, &run)
	// 3 processes, and a fresh one in the place of one the machine
	// disturbed (at most a third: verdict.Replacer), 5 trials each.
	procs := 3
	if run.Replaced != nil && len(run.Replaced.Disturbed) > 0 {
		procs++
	}
	if run.RunReport == nil || run.Summary == nil {
		t.Fatalf("run --format json: no report or no summary:\n%s", r.stdout)
	}
	if run.Schema != compare.SchemaReport || run.Version != compare.SchemaVersion || !run.Saved || run.Dir != base ||
		len(run.Summary.Trials) != 5*procs || len(run.Summary.Processes) != procs || len(run.Metrics) == 0 || run.Metrics[0].Name != "mean per-call cost" {
		t.Fatalf("run --format json: %d processes, %d trials (want %d and %d: %+v replaced): %+v", len(run.Summary.Processes), len(run.Summary.Trials), procs, 5*procs, run.Replaced, run.RunReport)
	}
	// Three fresh processes: their trials say so, and their files too.
	for i, tr := range run.Summary.Trials {
		if tr.Process != i/5 || len(tr.Readers) == 0 || len(tr.Readers[0].WakeupLog) == 0 ||
			!strings.HasPrefix(tr.Readers[0].WakeupLog[0], fmt.Sprintf("wakeups-p%02d-%02d-", i/5, i)) {
			t.Errorf("trial %d: process %d, logs %v", i, tr.Process, tr.Readers[0].WakeupLog)
		}
	}
	if !strings.Contains(r.stderr, "5 trial(s) of 600ms") || !strings.Contains(r.stderr, "3 processes, one after the other") {
		t.Errorf("the plan is not on stderr: %q", r.stderr)
	}
	os.Chmod(base, 0o755)
	// Usage is checked before the baseline is judged: this needs no
	// judgeable baseline.
	t.Run("an unknown metric is refused before anything runs", func(t *testing.T) {
		out := filepath.Join(top, "nosuch")
		r := rtload(t, nil, "check", base, "-q", "--metric", "nosuch", "--out", out)
		if r.code != ExitUsage || !strings.Contains(r.stderr, `--metric: gate: no headline metric "nosuch" (have: mean per-call cost`) {
			t.Fatalf("exit %d, want 2 naming the metrics:\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %v; want nothing run, nothing written", out, err)
		}
	})
	if reasons := verdict.Unjudgeable("baseline", run.Summary); len(reasons) > 0 {
		// The checks below judge reruns against it: none can be judged.
		t.Skipf("the machine marked the baseline, so no check can be judged against it: %s", strings.Join(reasons, "; "))
	}

	t.Run("same scenario passes", func(t *testing.T) {
		// The gate judges the machine as well as the code: a rerun a few
		// seconds after the baseline, while other jobs take CPU 1 for a
		// while, can really be slower, and the gate may say so (a fresh
		// user saw exit 1 in 2 of 7 runs while a benchmark ran beside it,
		// wakeup p99 +80% with its CI beyond 3%). That verdict is the
		// machine's, measured: the test skips naming the gate's words on
		// what was slower. Proven not slower at ±3% needs more processes
		// than 40 s give: undecided (125) is the usual answer, and an
		// honest one. -v: the assertions below read the full text.
		r := rtload(t, nil, "check", base, "--trust-baseline", "-v", "--budget", "40s", "--out", filepath.Join(top, "same"))
		if r.code == ExitSlower {
			var gate []string
			for _, l := range strings.Split(r.stdout, "\n") {
				if strings.Contains(l, "gate:") || strings.Contains(l, "slower") {
					gate = append(gate, strings.TrimSpace(l))
				}
			}
			t.Skipf("the machine made the rerun of the same scenario slower than its baseline: %s", strings.Join(gate, "; "))
		}
		if (r.code != ExitOK && r.code != ExitCannotJudge) || !strings.Contains(r.stdout, "gate: NOT SLOWER") && !strings.Contains(r.stdout, "gate: UNDECIDED") &&
			!strings.Contains(r.stdout, "gate: CANNOT JUDGE") {
			t.Fatalf("exit %d, want 0 or 125:\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{"n = A 3 processes × 5 rounds", "processes × 5 rounds", "variance split", "between processes", "smallest detectable change",
			"check: n = ", "candidate processes against 3 baseline processes", "Pocock"} {
			if r.code != ExitCannotJudge && !strings.Contains(r.stdout, want) {
				t.Errorf("the check's output lacks %q:\n%s", want, r.stdout)
			}
		}
		// The closing block is last, its verdict line naming the exit code.
		if last := lastLine(r.stdout); !strings.HasPrefix(last, "check: ") || !strings.HasSuffix(last, fmt.Sprintf("exit %d (git bisect: %s)", r.code, map[int]string{0: "good", 1: "bad", 125: "skip"}[r.code])) {
			t.Errorf("the check does not end on its verdict and exit code: %q", last)
		}
		// The check ran the baseline's own scenario: no spec warnings.
		if strings.Contains(r.stdout, "WARNING: runs differ in spec") {
			t.Errorf("the check ran another scenario:\n%s", r.stdout)
		}
	})
	t.Run("9000-byte messages are slower", func(t *testing.T) {
		// The 9000-byte sender (450 MB/s over loopback, the receive side
		// in its own context) is on time (send lag p99 30–60 µs). Once,
		// in a fresh-clone CI run, one trial's p99 was 21 ms: the runtime
		// parked the real-time sender at a preemption point, which its
		// loop no longer has. A stall the machine causes (the hypervisor's
		// steal, another run's real-time threads) marks the trial, with
		// its numbers, and the check rightly cannot judge: skipMarked.
		r := rtload(t, nil, "check", base, "--trust-baseline", "-q", "--budget", "40s", "--set", "traffic[0].size=9000",
			"--format", "json", "--out", filepath.Join(top, "big"))
		var doc verdict.Report
		decode(t, r, &doc)
		skipMarked(t, r, doc)
		if r.code != ExitSlower || doc.Verdict != verdict.Slower || doc.ExitCode != ExitSlower {
			t.Fatalf("exit %d verdict %q, want 1 slower:\n%s", r.code, doc.Verdict, r.stdout)
		}
		found := false
		for _, m := range doc.Gate.Metrics {
			if m.Name == "mean per-call cost" && m.Unit == "ns" {
				found = true
				if m.Judged != verdict.JudgedSlower || m.Interval == nil || m.Interval.LowPct == nil || *m.Interval.LowPct <= 3 {
					t.Errorf("mean per-call cost: %+v", m)
				}
			}
		}
		if !found || doc.Schema != verdict.Schema || doc.Compare == nil || doc.Baseline != base {
			t.Errorf("check JSON: %+v", doc)
		}
		if q := doc.Sequential; q == nil || q.Processes < 5 || q.BaselineProcesses != 3 || q.Stop != "decided" || q.Level <= 0.95 {
			t.Errorf("sequential: %+v", q)
		}
	})

	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	t.Run("a degraded run cannot be judged", func(t *testing.T) {
		out := filepath.Join(top, "degraded")
		os.Mkdir(out, 0o755)
		os.Chown(out, 65534, 65534)
		r := rtload(t, nobody, "check", base, "--trust-baseline", "-q", "--allow-degraded", "--duration", "300ms", "--out", out)
		if r.code != ExitCannotJudge || !strings.HasPrefix(lastLine(r.stdout), "check: CANNOT JUDGE: new: degraded: ") {
			t.Fatalf("exit %d, want 125:\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("a missing privilege cannot be judged", func(t *testing.T) {
		out := filepath.Join(top, "unprivileged")
		os.Mkdir(out, 0o755)
		os.Chown(out, 65534, 65534)
		r := rtload(t, nobody, "check", base, "--trust-baseline", "-q", "--out", out)
		if r.code != ExitCannotJudge || !strings.Contains(r.stdout, "cannot judge: a requirement is not met: ") || !strings.Contains(r.stdout, "CAP_SYS_NICE") ||
			!strings.HasSuffix(lastLine(r.stdout), "exit 125 (git bisect: skip)") {
			t.Fatalf("exit %d, want 125:\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	})
}

// lastLine is the last line of out.
func lastLine(out string) string {
	out = strings.TrimRight(out, "\n")
	return out[strings.LastIndexByte(out, '\n')+1:]
}

// skipMarked skips t when check r (doc its JSON) could not judge because
// the machine marked the new run's trials (Unjudgeable's per-trial
// reasons: the kernel changed them, traffic not as specified, a starved
// reader), naming every mark: those are measured, and the check was right.
// Any other reason to refuse (degraded, stopped, …) is left to fail.
func skipMarked(t *testing.T, r result, doc verdict.Report) {
	t.Helper()
	if r.code != ExitCannotJudge || len(doc.Gate.Reasons) == 0 {
		return
	}
	for _, why := range doc.Gate.Reasons {
		if !strings.HasPrefix(why, "new: trial ") {
			return
		}
	}
	t.Skipf("the machine marked the rerun, so the check could not judge it (exit 125): %s", strings.Join(doc.Gate.Reasons, "; "))
}

// gateSummary is a run of rounds rounds of one reader whose per-call cost
// is cost ticks (±2 across rounds), on clock monotonic.
func gateSummary(cost uint64, rounds int) *results.Summary {
	s := &results.Summary{Version: results.SummaryVersion, Scenario: "gate", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9},
		Spec: results.Spec(`{"name":"gate"}`), Env: results.Env{Kernel: "6.12.0"}}
	for i := range rounds {
		h := record.NewLinear(10, 0, 100_000)
		for range 1000 {
			h.Record(cost + uint64(2*i))
		}
		s.Trials = append(s.Trials, results.Trial{Index: i, Round: i, Variant: "base",
			Readers: []results.Reader{{Name: "rt", Sockets: 1, PerCall: results.PerCall{Unit: "ns", All: h.Snapshot("ns")}}}})
	}
	return s
}

func writeGateDir(t *testing.T, s *results.Summary) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "r")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.WriteSummary(t, d, s)
	return d
}

func TestCompareFailOn(t *testing.T) {
	base := writeGateDir(t, gateSummary(1000, 3))
	same := writeGateDir(t, gateSummary(1001, 3))
	slow := writeGateDir(t, gateSummary(1200, 3))
	degraded := gateSummary(1000, 3)
	degraded.Degraded, degraded.DegradedReasons = true, []string{"SCHED_OTHER"}
	deg := writeGateDir(t, degraded)
	invalid := gateSummary(1000, 3)
	invalid.Trials[0].Marks = append(invalid.Trials[0].Marks, results.Mark{Kind: results.MarkInvalid, Text: "TSC marked unstable at 0.2 s"})
	inv := writeGateDir(t, invalid)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"no gate: exit 0 even when slower", []string{base, slow}, 0, "verdict: SLOWER at ±3%"},
		// 1001 against 1000 ticks, rounds ±2: the CI lies within ±3%.
		{"same: proven not slower", []string{base, same, "--fail-on", "slower"}, 0, "gate: NOT SLOWER: every judged metric proven not slower beyond +3% ("},
		{"20% slower: fail", []string{base, slow, "--fail-on", "slower"}, 1, "gate: SLOWER: "},
		{"20% slower, 30% tolerated", []string{base, slow, "--fail-on", "slower", "--threshold", "30%"}, 0, "gate: NOT SLOWER: every judged metric proven not slower beyond +30% ("},
		{"named metric", []string{base, slow, "--fail-on", "slower=mean per-call cost (ns)"}, 1, "base/b +20.0% per call ["},
		{"degraded: cannot judge", []string{base, deg, "--fail-on", "slower"}, 125, "gate: CANNOT JUDGE: b: degraded: SCHED_OTHER: exit 125"},
		{"an invalid trial: cannot judge, its verdicts undecided", []string{base, inv, "--fail-on", "slower"}, 125, "gate: CANNOT JUDGE: b: trial 1 (base, round 1): invalid: TSC marked unstable at 0.2 s: exit 125"},
		{"lkp layout with a gate", []string{base, slow, "--fail-on", "slower", "--format", "lkp"}, 1, "%stddev     %change         %stddev"},
		{"unknown gate", []string{base, slow, "--fail-on", "faster"}, 2, `--fail-on "faster": allowed: slower, or slower=METRIC,METRIC`},
		{"unknown metric", []string{base, slow, "--fail-on", "slower=speed"}, 2, `gate: no headline metric "speed"`},
		{"threshold without a gate sets the verdicts", []string{base, slow, "--threshold", "5%"}, 0, "verdict: SLOWER at ±5%"},
		{"bad threshold", []string{base, slow, "--fail-on", "slower", "--threshold", "x"}, 2, `--threshold "x": a percentage`},
		{"missing directory with a gate", []string{base, filepath.Join(t.TempDir(), "none"), "--fail-on", "slower"}, 2, "read summary"},
		{"missing directory without a gate", []string{base, filepath.Join(t.TempDir(), "none")}, 2, "read summary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rtload(t, nil, append([]string{"compare", "--label", "a,b"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.contains) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", r.code, tc.code, tc.contains, r.stdout, r.stderr)
			}
			// Text ends on the verdict, which names a gate's exit code.
			if last := lastLine(r.stdout); r.code != ExitUsage && !slices.Contains(tc.args, "--format") &&
				!strings.HasPrefix(last, "verdict: ") && !strings.HasSuffix(last, fmt.Sprintf("exit %d (git bisect: %s)", r.code, map[int]string{0: "good", 1: "bad", 125: "skip"}[r.code])) {
				t.Errorf("the output ends on %q, not the verdict", last)
			}
		})
	}
	// JSON carries the gate.
	r := rtload(t, nil, "compare", base, slow, "--label", "a,b", "--fail-on", "slower", "--format", "json")
	var res verdict.Compared
	decode(t, r, &res)
	if r.code != 1 || res.Result == nil || res.Schema != compare.SchemaCompare || res.Gate == nil || res.Gate.Verdict != verdict.Slower ||
		len(res.Gate.Slower) == 0 || res.Gate.ThresholdPct != 3 {
		t.Errorf("exit %d, gate %+v", r.code, res.Gate)
	}
}

func TestCheckWithoutRunning(t *testing.T) {
	degraded := gateSummary(1000, 2)
	degraded.Degraded = true
	deg := writeGateDir(t, degraded)
	nospec := gateSummary(1000, 2)
	nospec.Spec = nil
	noSpec := writeGateDir(t, nospec)
	// Issue 14's markers: a baseline with an invalid trial, or one whose
	// traffic was not as specified, cannot be judged against.
	invalid := gateSummary(1000, 2)
	invalid.Trials[1].Marks = append(invalid.Trials[1].Marks, results.Mark{Kind: results.MarkInvalid, Text: "clocksource changed (tsc → kvm-clock at 1.0 s)"})
	inv := writeGateDir(t, invalid)
	starved := gateSummary(1000, 2)
	starved.Trials[0].Marks = append(starved.Trials[0].Marks, results.Mark{Kind: results.MarkTraffic, Endpoint: "socks", Text: "socks: send lag p99 7.2ms > max_send_lag 1ms"})
	tns := writeGateDir(t, starved)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"degraded baseline: cannot judge, nothing runs", []string{deg}, 125, "cannot judge: baseline: degraded: run without some privileges (--allow-degraded)"},
		// Its one process disturbed by the machine: none left to judge on.
		{"invalid trial in the baseline: cannot judge", []string{inv}, 125,
			"cannot judge: baseline: every process disturbed by the machine (1 of 1): clocksource changed (tsc → kvm-clock at 1.0 s) (invalid)\n"},
		{"traffic not as specified in the baseline: cannot judge", []string{tns}, 125,
			"cannot judge: baseline: trial 1 (base, round 1): traffic not as specified: socks: send lag p99 7.2ms > max_send_lag 1ms"},
		{"missing baseline", []string{filepath.Join(t.TempDir(), "none")}, 2, "baseline: read summary"},
		{"baseline without a scenario", []string{noSpec}, 2, "records no scenario: name one (rtload check DIR SCENARIO)"},
		{"bad threshold", []string{deg, "--threshold", "0"}, 2, `--threshold "0": a percentage above 0`},
		{"bad format", []string{deg, "--format", "xml"}, 2, `--format "xml": allowed text, json`},
		{"one label", []string{deg, "--label", "x"}, 2, "--label: compare: 1 labels for 2"},
		{"no baseline", nil, 2, "accepts between 1 and 2 arg(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rtload(t, nil, append([]string{"check"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.contains) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", r.code, tc.code, tc.contains, r.stdout, r.stderr)
			}
		})
	}
	r := rtload(t, nil, "check", deg, "--format", "json")
	var doc verdict.Report
	decode(t, r, &doc)
	if r.code != 125 || doc.Verdict != verdict.CannotJudge || doc.ExitCode != 125 || len(doc.Gate.Reasons) != 1 || doc.Results != "" {
		t.Errorf("exit %d: %+v", r.code, doc)
	}
}

// TestJSONFormats: report and explain --format json parse, and carry
// their schema and the numbers their text shows.
func TestJSONFormats(t *testing.T) {
	dir := writeGateDir(t, gateSummary(1000, 2))
	r := rtload(t, nil, "report", dir, "--format", "json")
	var rep compare.RunReport
	decode(t, r, &rep)
	if r.code != 0 || rep.Schema != compare.SchemaReport || rep.Version != compare.SchemaVersion || rep.Summary == nil || len(rep.Summary.Trials) != 2 || len(rep.Columns) != 1 {
		t.Fatalf("exit %d: %+v", r.code, rep)
	}
	// Rounds at 1000 and 1002 ns: the mean per-call cost is their mean.
	if m := rep.Metrics[0]; m.Name != "mean per-call cost" || m.Value != 1001 || len(m.Rounds) != 2 {
		t.Errorf("metric %+v, want mean per-call cost 1001 over 2 rounds", m)
	}
	r = rtload(t, nil, "explain", dir, "--format", "json")
	var ex explain.Doc
	decode(t, r, &ex)
	if r.code != 0 || ex.Schema != explain.Schema || ex.Version != 1 || ex.Dir != dir || len(ex.Readers) != 2 || ex.Readers[0].All.Count != 1000 {
		t.Errorf("exit %d: %+v", r.code, ex)
	}
	for _, args := range [][]string{{"report", dir, "--format", "csv"}, {"explain", dir, "--format", "yaml"}, {"run", "--format", "xml"}} {
		if r := rtload(t, nil, args...); r.code != 2 || !strings.Contains(r.stderr, "allowed text, json") {
			t.Errorf("%v: exit %d %s", args, r.code, r.stderr)
		}
	}
}

// TestCheckStarvedReader: a check whose rerun starves its reader for the
// whole trial (a SCHED_FIFO 90 reader that never sleeps on the same CPU,
// started after it) cannot be judged (exit 125), and says why: reader rt
// starved, with the kernel's run-queue wait, and (nearly always) the
// trial invalid because rt measured nothing. The baseline itself must be judgeable; when the machine
// marked it (another run's real-time threads on CPU 1, the hypervisor),
// the test skips with that mark.
func TestCheckStarvedReader(t *testing.T) {
	testutil.Requires(t, testutil.System, testutil.Root, testutil.CPUs(2))
	top := t.TempDir()
	base := filepath.Join(top, "base")
	if r := rtload(t, nil, "run", "testdata/starved.yaml", "--out", base, "-q"); r.code != 0 {
		t.Fatalf("baseline: exit %d\n%s", r.code, r.stderr)
	}
	s, err := store.ReadSummary(base)
	if err != nil {
		t.Fatal(err)
	}
	if reasons := verdict.Unjudgeable("baseline", s); len(reasons) > 0 {
		t.Skipf("the machine marked the baseline, so no check can be judged against it: %s", strings.Join(reasons, "; "))
	}
	// --budget bounds the run that keeps its first ticks (the hog's
	// thread late) and so samples on: a run starved by its own work never
	// passes and looks until the budget ends.
	r := rtload(t, nil, "check", base, "--trust-baseline", "-q", "--budget", "30s", "--format", "json", "--out", filepath.Join(top, "starved"),
		"--set", "readers[0].priority=80", "--set", "endpoints[1].count=2000", "--set", "readers[1].priority=90", "--set", "readers[1].period=250us")
	var doc verdict.Report
	decode(t, r, &doc)
	if r.code != ExitCannotJudge || doc.Verdict != verdict.CannotJudge {
		t.Fatalf("exit %d, verdict %q; want %d, %q\n%s", r.code, doc.Verdict, ExitCannotJudge, verdict.CannotJudge, r.stderr)
	}
	// The reader is starved, by its own run-queue wait, in any case; it
	// measured nothing at all (the trial invalid, with that cause) in 6 of
	// 6 runs by hand, but when the hog's thread itself starts late (its
	// setup's system calls on a loaded machine) rt gets its first few
	// ticks, and only the starved mark is left.
	starved := "new: trial 1 (base, round 1): reader rt runnable but off CPU 1 for "
	empty := "new: trial 1 (base, round 1): invalid: reader rt measured nothing: 0 wakeups and 0 recv calls over 50 sockets in the 1s window: starved: runnable but off CPU 1 for "
	var isStarved, isEmpty bool
	for _, why := range doc.Gate.Reasons {
		isStarved = isStarved || strings.HasPrefix(why, starved)
		isEmpty = isEmpty || strings.HasPrefix(why, empty)
	}
	if !isStarved {
		t.Errorf("reasons %q; want one starting %q", doc.Gate.Reasons, starved)
	}
	t.Logf("marked starved %v, invalid for measuring nothing %v: %q", isStarved, isEmpty, doc.Gate.Reasons)
}

// TestCheckBudgetBoundsFirstProcess (issue 34 row 14): --budget bounds
// the first process too. A plan whose one process cannot fit is refused
// before anything runs (exit 2, the least time named); one whose first
// process runs past the budget (setup on top of a plan that just fits)
// is stopped at the budget: undecided (125), saying so. On main the
// first process ran to its end whatever the budget.
func TestCheckBudgetBoundsFirstProcess(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	base := writeGateDir(t, gateSummary(1000, 2))
	// laight-450 at --duration 1s: 2 rounds of 2 interleaved trials of 1 s,
	// each round warmed up 500 ms once: 5 s at least per process.
	r := rtload(t, nil, "check", base, "laight-450", "--duration", "1s", "--budget", "2s", "--set", "noise[0].threads=1")
	if want := "--budget 2s: one process of this plan runs at least 5s (4 trials"; r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("a budget no process fits: exit %d, want %d with %q\n%s%s", r.code, ExitUsage, want, r.stdout, r.stderr)
	}
	// rounds=1, 100 ms, 100 ms warm-up: 300 ms of trials, and a process
	// takes far more than 1 ms on top (exec, 450 sockets, threads).
	out := filepath.Join(t.TempDir(), "out")
	r = rtload(t, nil, "check", base, "laight-450", "--duration", "100ms", "--set", "warmup=100ms", "--set", "rounds=1",
		"--set", "noise[0].threads=1", "--budget", "301ms", "--out", out)
	if want := "the --budget of 301ms ran out in the first process"; r.code != ExitCannotJudge || !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("a first process past the budget: exit %d, want %d with %q\n%s%s", r.code, ExitCannotJudge, want, r.stdout, r.stderr)
	}
	t.Logf("%s", strings.TrimSpace(r.stderr))
	if s, err := store.ReadSummary(out); err == nil && !s.Stopped {
		t.Errorf("the stopped first process's summary.json is not marked stopped")
	}
}
