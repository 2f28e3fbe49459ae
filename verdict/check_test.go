package verdict

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
)

// Check's looks, stop rule and exit codes, driven by synthetic process
// summaries as engine.RunProcesses would hand them over (issue 30): no
// real run, no root.

// small and large are per-trial factors of a process's per-call cost:
// ±1% and ±10%, a fixed pattern so that every interval is the same on
// every run.
var (
	small = []float64{1.00, 1.01, 0.99, 1.005, 0.995, 1.0, 1.008, 0.992}
	// large changes from process to process (both rounds alike): the
	// noise between processes, which a check's intervals are made of.
	large = []float64{1.00, 1.00, 1.10, 1.10, 0.90, 0.90, 1.05, 1.05, 0.95, 0.95, 1.08, 1.08, 0.92, 0.92, 1.0, 1.0, 1.03, 1.03, 0.97, 0.97}
)

// procRun is a run of procs processes × 2 rounds of variant "v", reader
// "rt", whose every call of trial i costs cost × jitter[(i+shift) mod
// len] ns (100 calls a trial; clock monotonic): the merged summary a
// check sees after procs processes.
func procRun(procs int, cost float64, jitter []float64, shift int) *results.Summary {
	s := &results.Summary{Version: results.SummaryVersion, Scenario: "x", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
	for p := range procs {
		s.Processes = append(s.Processes, results.ProcessInfo{Process: p})
		for r := range 2 {
			i := len(s.Trials)
			h := record.NewLinear(1, 0, 100_000)
			c := uint64(cost * jitter[(i+shift)%len(jitter)])
			for range 100 {
				h.Record(c)
			}
			s.Trials = append(s.Trials, results.Trial{Index: i, Round: p*2 + r, Process: p, Variant: "v",
				Readers: []results.Reader{{Name: "rt", Calls: 100, PerCall: results.PerCall{Unit: "ns", All: h.Snapshot("ns")}}}})
		}
	}
	return s
}

// starved marks trial i of s: its reader kept off its CPU.
func starved(s *results.Summary, i int) *results.Summary {
	s.Trials[i].Marks = append(s.Trials[i].Marks, results.Mark{Kind: results.MarkStarved, Reader: "rt",
		Text: "reader rt runnable but off CPU 1 for 66ms (7.3% of the 900ms window; schedstat run-queue wait)"})
	return s
}

// selfStarved marks trial i of s starved by its reader's own work: the
// reader overran 50 of its 100 ticks (SelfOverrunShare).
func selfStarved(s *results.Summary, i int) *results.Summary {
	s.Trials[i].Readers[0].Wakeups, s.Trials[i].Readers[0].Overruns = 100, 50
	return starved(s, i)
}

// disturbed is a new run like procRun(n, cost, small, 5) whose processes
// procs (0-based) have their second round starved by the machine.
func disturbed(cost float64, procs ...int) func(n int) *results.Summary {
	return func(n int) *results.Summary {
		s := procRun(n, cost, small, 5)
		for _, p := range procs {
			if p < n {
				starved(s, 2*p+1)
			}
		}
		return s
	}
}

// drive runs check c as engine.RunProcesses does: a new process after
// another, the first taking first and each other per, After after each
// (false stops), at most maxProcs; then End on the last summary.
// newRun(n) is the merged summary after n processes.
func drive(c *Check, newRun func(n int) *results.Summary, first, per time.Duration, maxProcs int) {
	var sum *results.Summary
	for n := 1; n <= maxProcs; n++ {
		sum = newRun(n)
		if !c.After(sum, first+time.Duration(n-1)*per) {
			break
		}
	}
	c.End(sum)
}

func checkOf(t *testing.T, base *results.Summary, budget time.Duration, looks int) *Check {
	t.Helper()
	return NewCheck(compare.Run{Label: "baseline", Dir: "/srv/base", Summary: base},
		CheckOptions{Labels: [2]string{"baseline", "new"}, Budget: budget, Looks: looks})
}

func TestCheckLooks(t *testing.T) {
	base := procRun(10, 1000, small, 0)
	for _, tc := range []struct {
		name     string
		newRun   func(n int) *results.Summary
		first    time.Duration // the first new process's time (the plan's)
		per      time.Duration // each other's
		budget   time.Duration
		looks    int
		maxProcs int
		verdict  Verdict
		exit     int
		stop     string
		looked   int // looks made
		procs    int // new processes judged
		reason   string
		replaced int // new processes left out and replaced
	}{
		// +30% per call: the first planned look (5 processes) decides.
		{"slower", func(n int) *results.Summary { return procRun(n, 1300, small, 3) }, 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			Slower, ExitSlower, StopDecided, 1, 5, "", 0},
		// The same cost, ±1%: its interval lies below +3% at the first look.
		{"same", func(n int) *results.Summary { return procRun(n, 1000, small, 5) }, 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			NotSlower, ExitNotSlower, StopDecided, 1, 5, "", 0},
		// ±10% noise between processes, the same cost: undecided at both
		// planned looks (5, 10: the budget allows 10 processes of 2 s, the
		// first's time; the others take 1 s, so the last look comes before
		// the budget is spent).
		{"noisy, undecided at the last look", func(n int) *results.Summary { return procRun(n, 1000, large, 2) }, 2 * time.Second, time.Second, 20 * time.Second, 2, MaxProcesses,
			Undecided, ExitCannotJudge, StopLastLook, 2, 10, "", 0},
		// 100 s a process against a 5-minute budget: the third would end
		// past it, before the first planned look (5): one look at 3, at
		// the end, undecided.
		{"over budget", func(n int) *results.Summary { return procRun(n, 1000, large, 2) }, 100 * time.Second, 100 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			Undecided, ExitCannotJudge, StopBudget, 1, 3, "", 0},
		// The run ended (its processes ran out) before the first look.
		{"the run's end", func(n int) *results.Summary { return procRun(n, 1300, small, 3) }, 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, 2,
			Slower, ExitSlower, StopRunEnd, 1, 2, "", 0},
		// A reader starved by its own overruns in the first process: the
		// workload's, which a fresh process would repeat: never replaced,
		// never a pass. Only slower can come of more processes, so it
		// samples on at the planned looks; nothing is proven slower by
		// the last (15 processes, the budget's): cannot judge.
		{"starved by its own work", func(n int) *results.Summary { return selfStarved(procRun(n, 1000, small, 5), 0) }, 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			CannotJudge, ExitCannotJudge, StopCannotJudge, 5, 15, "new: trial 1 (v, round 1): reader rt runnable but off CPU 1 for 66ms", 0},
		// The same, its reader measuring nothing in that trial (as
		// TestCheckStarvedReader's, starved the whole window): no look
		// can prove anything slower from it and a fresh process would
		// repeat it: it stops at once, as before sampling on.
		{"starved by its own work, measured nothing", func(n int) *results.Summary {
			s := selfStarved(procRun(n, 1000, small, 5), 0)
			s.Trials[0].Marks = append(s.Trials[0].Marks, results.Mark{Kind: results.MarkEmpty, Reader: "rt", Text: "reader rt measured nothing"})
			return s
		}, 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			CannotJudge, ExitCannotJudge, StopCannotJudge, 1, 1, "new: trial 1 (v, round 1)", 0},
		// The first process starved by the machine: left out, a fresh one
		// in its place; the first look (5 judged, 6 run) decides.
		{"the first process disturbed", disturbed(1000, 0), 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			NotSlower, ExitNotSlower, StopDecided, 1, 5, "", 1},
		// One process of six disturbed (the third): replaced, decided.
		{"one process disturbed", disturbed(1000, 2), 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			NotSlower, ExitNotSlower, StopDecided, 1, 5, "", 1},
		// +30% with one process disturbed: slower all the same.
		{"one process disturbed, slower", disturbed(1300, 1), 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			Slower, ExitSlower, StopDecided, 1, 5, "", 1},
		// The second and fourth disturbed: 2 of 4 run, more than a third:
		// the machine chose which processes count: cannot judge, counted.
		{"too many disturbed", disturbed(1000, 1, 3), 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			CannotJudge, ExitCannotJudge, StopCannotJudge, 1, 2, "new: 2 of 4 processes disturbed by the machine: reader rt runnable but off CPU 1 for 66ms (starved); at most 1 of 4", 2},
		// A degraded run (--allow-degraded without the privileges) whose
		// processes the machine disturbed too: its own reason comes first
		// (no fresh process mends it), the machine's after it.
		{"degraded and disturbed", func(n int) *results.Summary {
			s := disturbed(1000, 0, 1)(n)
			s.Degraded, s.DegradedReasons = true, []string{"ran at SCHED_OTHER"}
			return s
		}, 20 * time.Second, 20 * time.Second, DefaultBudget, DefaultLooks, MaxProcesses,
			CannotJudge, ExitCannotJudge, StopCannotJudge, 1, 0, "new: degraded: ", 2},
		// A budget for 5 processes of 20 s, the second disturbed: the
		// budget is spent at 4 judged, before the first planned look (5);
		// the last look at the end decides on those 4.
		{"budget spent while replacing", disturbed(1000, 1), 20 * time.Second, 20 * time.Second, 100 * time.Second, DefaultLooks, MaxProcesses,
			NotSlower, ExitNotSlower, StopBudget, 1, 4, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := checkOf(t, base, tc.budget, tc.looks)
			if c.Done() {
				t.Fatalf("a clean baseline is judged before the run: %+v", c.Report)
			}
			drive(c, tc.newRun, tc.first, tc.per, tc.maxProcs)
			q := c.Sequential
			if c.Verdict != tc.verdict || c.ExitCode != tc.exit || q == nil || q.Stop != tc.stop || q.Looks != tc.looked || q.Processes != tc.procs {
				t.Fatalf("verdict %q exit %d, sequential %+v; want %q exit %d, stop %q after %d looks at %d processes\ngate %+v",
					c.Verdict, c.ExitCode, q, tc.verdict, tc.exit, tc.stop, tc.looked, tc.procs, c.Gate)
			}
			if c.Gate.Verdict != c.Verdict || c.ExitCode != c.Verdict.ExitCode() {
				t.Errorf("gate %q, report %q exit %d: the exit code is not the verdict's", c.Gate.Verdict, c.Verdict, c.ExitCode)
			}
			if tc.reason != "" && (len(c.Gate.Reasons) == 0 || !strings.HasPrefix(c.Gate.Reasons[0], tc.reason)) {
				t.Errorf("reasons %q, want the first starting %q", c.Gate.Reasons, tc.reason)
			}
			if c.Compare == nil || c.Compare.Gate == nil || c.Compare.Gate.Verdict != c.Verdict {
				t.Errorf("no comparison with the gate to print: %+v", c.Compare)
			}
			replaced := 0
			if c.Replaced != nil {
				replaced = len(c.Replaced.Disturbed)
			}
			if replaced != tc.replaced || q.Ran != q.Processes+replaced && tc.reason == "" {
				t.Errorf("replaced %d (%+v), ran %d judged %d: want %d replaced, ran = judged + replaced", replaced, c.Replaced, q.Ran, q.Processes, tc.replaced)
			}
			if tc.reason == "" && strings.Contains(c.Gate.Line("check", c.ExitCode), "CANNOT") {
				t.Errorf("line %q", c.Gate.Line("check", c.ExitCode))
			}
			if q.BaselineProcesses != 10 || q.Metrics != 1 || q.Level < 0.95 {
				t.Errorf("baseline %d processes, %d metrics at %v: want 10, 1, at least 95%% (Pocock over the looks planned)", q.BaselineProcesses, q.Metrics, q.Level)
			}
		})
	}
}

// TestCheckLooksAtPlannedProcesses: the looks fall where the plan says,
// and no look happens between them.
func TestCheckLooksAtPlannedProcesses(t *testing.T) {
	base := procRun(10, 1000, small, 0)
	c := checkOf(t, base, 20*time.Second, 2)
	var log bytes.Buffer
	c.opt.Log = &log
	drive(c, func(n int) *results.Summary { return procRun(n, 1000, large, 2) }, 2*time.Second, time.Second, 20)
	want := "check: look 1 of 2 at 5 candidate processes: undecided\ncheck: look 2 of 2 at 10 candidate processes: undecided\n"
	if diff := cmp.Diff(want, log.String()); diff != "" {
		t.Errorf("looks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{5, 10}, c.Sequential.LookProcesses); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

// TestPlan: the looks fall at ⌈k·n/K⌉ processes of the n the budget
// allows after the first process, none before MinLookProcesses.
func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name       string
		budget     time.Duration
		perProcess time.Duration
		looks      int
		want       []int
	}{
		{"the default: 15 processes of 20 s", DefaultBudget, 20 * time.Second, DefaultLooks, []int{5, 6, 9, 12, 15}},
		{"a budget for 3: one look at 5", DefaultBudget, 100 * time.Second, DefaultLooks, []int{5}},
		{"one look", time.Minute, time.Second, 1, []int{60}},
		{"not timed: MaxProcesses", time.Minute, 0, 4, []int{50, 100, 150, 200}},
		{"more than MaxProcesses fit", time.Hour, time.Second, 2, []int{100, 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := Sequential{BudgetNs: int64(tc.budget)}
			q.plan(tc.looks, tc.perProcess)
			if diff := cmp.Diff(tc.want, q.LookProcesses); diff != "" || q.MaxLooks != len(tc.want) {
				t.Errorf("looks at (-want +got):\n%s (max looks %d)", diff, q.MaxLooks)
			}
		})
	}
}

// TestCheckBaselineDisturbed: a baseline the machine disturbed is judged
// on its clean processes, if enough remain.
func TestCheckBaselineDisturbed(t *testing.T) {
	base := starved(starved(procRun(10, 1000, small, 0), 3), 8) // processes 2 and 5 (1-based)
	c := checkOf(t, base, DefaultBudget, DefaultLooks)
	if c.Done() || c.BaselineProcesses() != 8 || c.BaselineDropped == nil || len(c.BaselineDropped.Disturbed) != 2 || c.BaselineDropped.MaxDropped != 3 {
		t.Fatalf("report %+v, dropped %+v: want the check to run against the 8 clean processes", c.Report, c.BaselineDropped)
	}
	drive(c, func(n int) *results.Summary { return procRun(n, 1300, small, 3) }, 20*time.Second, 20*time.Second, MaxProcesses)
	if c.Verdict != Slower || c.Sequential.BaselineProcesses != 8 {
		t.Fatalf("verdict %q against %d baseline processes, want slower against 8", c.Verdict, c.Sequential.BaselineProcesses)
	}
	var b bytes.Buffer
	if err := c.Report.Write(&b, "text", report.Quiet); err != nil {
		t.Fatal(err)
	}
	want := "baseline: judged on 8 of 10 processes: left out 2 disturbed by the machine: reader rt runnable but off CPU 1 for 66ms (starved)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("closing block lacks %q:\n%s", want, b.String())
	}
	// 4 of 10 disturbed: more than a third: cannot judge before anything
	// runs, with the count.
	for _, i := range []int{12, 16} {
		starved(base, i)
	}
	c = checkOf(t, base, DefaultBudget, DefaultLooks)
	if !c.Done() || c.Verdict != CannotJudge || len(c.Gate.Reasons) != 1 ||
		!strings.HasPrefix(c.Gate.Reasons[0], "baseline: 4 of 10 processes disturbed by the machine: reader rt runnable but off CPU 1 for 66ms (starved); at most 3 of 10 may be left out") {
		t.Fatalf("report %+v", c.Report)
	}
}

// TestCheckBaselineUnjudgeable: a baseline marked by its own workload
// ends the check before anything runs.
func TestCheckBaselineUnjudgeable(t *testing.T) {
	c := checkOf(t, selfStarved(procRun(10, 1000, small, 0), 3), DefaultBudget, DefaultLooks)
	if !c.Done() || c.Verdict != CannotJudge || c.ExitCode != ExitCannotJudge || c.Sequential != nil ||
		len(c.Gate.Reasons) != 1 || !strings.HasPrefix(c.Gate.Reasons[0], "baseline: trial 4 (v, round 4): reader rt runnable") ||
		!strings.Contains(c.Gate.Reasons[0], "(the workload's own: reader rt overran 50 of its 100 ticks; a fresh process would repeat it") {
		t.Fatalf("report %+v", c.Report)
	}
	var b bytes.Buffer
	if err := c.Report.Write(&b, "text", report.Quiet); err != nil {
		t.Fatal(err)
	}
	if last := lastLine(b.String()); !strings.HasPrefix(last, "check: CANNOT JUDGE: baseline: trial 4") || !strings.HasSuffix(last, "exit 125 (git bisect: skip)") {
		t.Errorf("last line %q", last)
	}
}

// TestCheckFail: a run that gave nothing to judge cannot judge; an
// interrupted one keeps its signal's code.
func TestCheckFail(t *testing.T) {
	base := procRun(10, 1000, small, 0)
	c := checkOf(t, base, DefaultBudget, DefaultLooks)
	c.Fail(errors.New("sched_setattr(SCHED_FIFO 80): needs CAP_SYS_NICE"), true)
	if c.Verdict != CannotJudge || c.ExitCode != ExitCannotJudge || c.Error == "" ||
		!cmp.Equal(c.Gate.Reasons, []string{"a requirement is not met: sched_setattr(SCHED_FIFO 80): needs CAP_SYS_NICE"}) {
		t.Errorf("report %+v", c.Report)
	}
	c = checkOf(t, base, DefaultBudget, DefaultLooks)
	c.After(procRun(1, 1000, small, 0), time.Second)
	c.Fail(errors.New("process 2 of 200: stopped"), false)
	c.Interrupted(130)
	if c.Verdict != CannotJudge || c.ExitCode != 130 || c.Gate.Reasons[0] != "the run failed: process 2 of 200: stopped" {
		t.Errorf("report %+v", c.Report)
	}
}

// TestCheckReportJSON: the report round-trips, its exit code the
// verdict's, its comparison carrying the gate.
func TestCheckReportJSON(t *testing.T) {
	c := checkOf(t, procRun(10, 1000, small, 0), DefaultBudget, DefaultLooks)
	drive(c, func(n int) *results.Summary { return procRun(n, 1300, small, 3) }, 20*time.Second, 20*time.Second, MaxProcesses)
	var b bytes.Buffer
	if err := c.Report.Write(&b, "json", report.Normal); err != nil {
		t.Fatal(err)
	}
	var got Report
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Schema != Schema || got.Version != compare.SchemaVersion || got.Verdict != Slower || got.ExitCode != 1 || got.Baseline != "/srv/base" ||
		got.Compare == nil || got.Compare.Result == nil || got.Compare.Gate == nil || got.Compare.Gate.Verdict != Slower || got.Sequential.Stop != StopDecided {
		t.Errorf("report %s", b.String())
	}
	m := got.Gate.Metrics[0]
	if m.Judged != JudgedSlower || m.Interval == nil || m.Interval.LowPct == nil || *m.Interval.LowPct <= 3 || strings.Contains(b.String(), "ci_low_pct") {
		t.Errorf("gate metric %+v: want slower, its change only in interval", m)
	}
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return l[len(l)-1]
}

// TestCheckFailLines: an error of several lines (a requirement not met,
// "…:\n  - hardened_usercopy=off: …") is printed as lines, never with a
// literal "\n" (issue 32), at every level and in the gate's own text; a
// newline inside a string from results can only make an indented line.
func TestCheckFailLines(t *testing.T) {
	base := procRun(10, 1000, small, 0)
	c := checkOf(t, base, DefaultBudget, DefaultLooks)
	c.Fail(errors.New("scenario x: this machine does not meet 1 requirement (…):\n  - hardened_usercopy=off: this boot has it on\ncheck: FORGED"), true)
	for _, level := range []report.Level{report.Quiet, report.Normal, report.Verbose} {
		var b bytes.Buffer
		if err := c.Report.Write(&b, "text", level); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), `\n`) {
			t.Errorf("level %v: a literal \\n:\n%s", level, b.String())
		}
		if !strings.Contains(b.String(), "\n      - hardened_usercopy=off: this boot has it on\n") {
			t.Errorf("level %v: the requirement not on its own indented line:\n%s", level, b.String())
		}
		if strings.Contains(b.String(), "\ncheck: FORGED") {
			t.Errorf("level %v: a line forged at the start:\n%s", level, b.String())
		}
	}
	var b bytes.Buffer
	if err := c.Gate.Text(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `\n`) || !strings.Contains(b.String(), "\n      - hardened_usercopy=off") {
		t.Errorf("gate text:\n%s", b.String())
	}
	if l := c.Gate.Line("check", c.ExitCode); strings.Contains(l, "\n") || strings.Contains(l, `\n`) {
		t.Errorf("line %q", l)
	}
}

// TestCheckPriorSessions: check --append judges the baseline against the
// candidate's earlier sessions with the new run as one more (Prior): the
// unit is the session at every look, and the new session counts.
func TestCheckPriorSessions(t *testing.T) {
	base := procRun(10, 1000, large, 0)
	prior := load.AppendSession(compare.Run{Label: "new", Summary: procRun(4, 1000, large, 3)}, procRun(4, 1010, large, 7))
	if len(prior.Sessions) != 2 {
		t.Fatalf("prior: %d sessions", len(prior.Sessions))
	}
	c := NewCheck(compare.Run{Label: "baseline", Dir: "/srv/base", Summary: base},
		CheckOptions{Labels: [2]string{"baseline", "new"}, Budget: DefaultBudget, Looks: DefaultLooks, Prior: &prior})
	if c.PriorSessions() != 2 {
		t.Errorf("PriorSessions %d", c.PriorSessions())
	}
	drive(c, func(n int) *results.Summary { return procRun(n, 1005, large, 11) }, 10*time.Second, 10*time.Second, 12)
	if len(c.Gate.Metrics) == 0 || c.Gate.Metrics[0].Interval == nil {
		t.Fatalf("gate %+v", c.Gate)
	}
	iv := c.Gate.Metrics[0].Interval
	if iv.Unit != "session" || !strings.Contains(iv.N, "B 3 sessions × ") || !strings.HasPrefix(iv.N, "A 1 session × 10 processes") {
		t.Errorf("interval unit %q, n %q", iv.Unit, iv.N)
	}
}

// TestCheckReplacedReport: the processes replaced are counted in one
// line with why, on the log as they happen, and in the JSON report.
func TestCheckReplacedReport(t *testing.T) {
	c := checkOf(t, procRun(10, 1000, small, 0), DefaultBudget, DefaultLooks)
	var log bytes.Buffer
	c.opt.Log = &log
	drive(c, disturbed(1000, 2), 20*time.Second, 20*time.Second, MaxProcesses)
	if want := "check: process 3 disturbed by the machine (reader rt runnable but off CPU 1 for 66ms (starved)): left out, a fresh process runs in its place\n"; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
	var b bytes.Buffer
	if err := c.Report.Write(&b, "text", report.Quiet); err != nil {
		t.Fatal(err)
	}
	if want := "replaced 1 of 6 processes (at most 2: a third): reader rt runnable but off CPU 1 for 66ms (starved)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("closing block lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	if err := c.Report.Write(&b, "json", report.Normal); err != nil {
		t.Fatal(err)
	}
	var got Report
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := &Dropped{Processes: 6, MaxDropped: 2, Disturbed: []Disturbance{{Process: 2, Cause: CauseMachine, Why: "reader rt runnable but off CPU 1 for 66ms (starved)"}}}
	if diff := cmp.Diff(want, got.Replaced); diff != "" || got.Sequential.Ran != 6 || got.Sequential.Processes != 5 {
		t.Errorf("replaced (-want +got):\n%s\nsequential %+v", diff, got.Sequential)
	}
}

// TestGateRuns (a fresh user's rehearsal, issue 32): compare --fail-on
// judged a run of --processes with its disturbed process still in (run
// had said "a check leaves it out", and ran a fresh one in its place),
// and its starved trial made the gate CANNOT JUDGE. The gate now leaves
// the machine's disturbed processes out as a check leaves out its
// baseline's: at most a third, said in the closing block.
func TestGateRuns(t *testing.T) {
	a := procRun(6, 1000, small, 0)
	b := starved(procRun(7, 1000, small, 5), 5) // process 2 of 7 starved: replaced by the run
	runs := []compare.Run{{Label: "unhard", Summary: a}, {Label: "hard", Summary: b}}
	judged, left, more := GateRuns(runs)
	if len(more) != 0 || len(left) != 1 || left[0].Label != "hard" || len(left[0].Disturbed) != 1 || left[0].Disturbed[0].Process != 2 {
		t.Fatalf("left %+v, reasons %q", left, more)
	}
	if len(judged[1].Summary.Trials) != 12 || len(b.Trials) != 14 || judged[0].Summary != a {
		t.Errorf("judged trials %d (want 12), the run's %d (want 14, unchanged)", len(judged[1].Summary.Trials), len(b.Trials))
	}
	res, err := facts.CompareWith(judged, compare.Options{Threshold: 0.03})
	if err != nil {
		t.Fatal(err)
	}
	c, err := JudgeRuns(judged, res, Options{Threshold: 0.03}, more...)
	if err != nil {
		t.Fatal(err)
	}
	if c.Gate.Verdict == CannotJudge || len(c.Gate.Reasons) != 0 {
		t.Errorf("gate %v, reasons %q", c.Gate.Verdict, c.Gate.Reasons)
	}
	if got, want := left[0].LineOf("hard"), "hard: judged on 6 of 7 processes: left out 1 disturbed by the machine: reader rt runnable but off CPU 1 for 66ms (starved)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	// Past a third: the run cannot be judged, and says why.
	for _, p := range []int{0, 1, 3} {
		starved(b, 2*p+1)
	}
	_, left, more = GateRuns(runs)
	if len(left) != 0 || len(more) != 1 || !strings.HasPrefix(more[0], "hard: 4 of 7 processes disturbed by the machine: ") {
		t.Errorf("left %+v, reasons %q", left, more)
	}
}

// TestCheckPriorDisturbed: check --append into sessions one of which
// had a process the machine disturbed (the run replaced it): that
// process is left out as a baseline's is, never blamed on the new
// session. Before, every later check --append stopped at its first look
// with "CANNOT JUDGE: new: trial 5 …".
func TestCheckPriorDisturbed(t *testing.T) {
	base := procRun(10, 1000, small, 0)
	prior := load.AppendSession(compare.Run{Label: "new", Summary: procRun(4, 1000, small, 3)}, starved(procRun(5, 1000, small, 7), 3))
	c := NewCheck(compare.Run{Label: "baseline", Dir: "/srv/base", Summary: base},
		CheckOptions{Labels: [2]string{"baseline", "new"}, Budget: DefaultBudget, Looks: DefaultLooks, Prior: &prior})
	if c.PriorDropped == nil || len(c.PriorDropped.Disturbed) != 1 || c.PriorDropped.Disturbed[0].Process != 5 {
		t.Fatalf("prior dropped %+v", c.PriorDropped)
	}
	drive(c, func(n int) *results.Summary { return procRun(n, 1000, small, 11) }, 10*time.Second, 10*time.Second, 12)
	if c.ExitCode == ExitCannotJudge || len(c.Gate.Reasons) != 0 {
		t.Fatalf("exit %d, reasons %q", c.ExitCode, c.Gate.Reasons)
	}
	var b bytes.Buffer
	if err := c.Report.Write(&b, "text", report.Quiet); err != nil {
		t.Fatal(err)
	}
	if want := "earlier sessions of the new run: judged on 8 of 9 processes: left out 1 disturbed by the machine: reader rt runnable but off CPU 1 for 66ms (starved)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("closing block lacks %q:\n%s", want, b.String())
	}
}
