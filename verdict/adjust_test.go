package verdict

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/view"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
)

// The adjusted verdict on synthetic runs whose readers carry drift
// controls (issue 31): no real run, no root.

// drifts are per-trial factors of the machine's speed (a fixed pattern,
// ±6%), and wobble a small noise of the workload and of the user loop of
// their own, so that θ is estimated within each side.
var (
	drifts = []float64{1.00, 1.04, 0.97, 1.06, 0.95, 1.02, 0.99, 1.05, 0.96, 1.01, 0.98, 1.03}
	wobble = []float64{1.000, 1.003, 0.998, 1.002, 0.997, 1.001, 0.999}
)

// trialCost is what trial i of a run costs: its mean per-call cost and
// its null syscall's and user loop's means, all in ns.
type trialCost func(i int) (work, null, loop float64)

// ctlRun is a run of procs processes × 2 rounds of variant "v", reader
// "rt" (clock monotonic), each trial's 100 calls costing what cost says,
// and its reader's controls (64 a tick, as many calls as the reader's)
// averaging what it says.
func ctlRun(procs int, cost trialCost) *results.Summary {
	s := &results.Summary{Version: results.SummaryVersion, Scenario: "x", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
	for p := range procs {
		s.Processes = append(s.Processes, results.ProcessInfo{Process: p})
		for r := range 2 {
			i := len(s.Trials)
			work, null, loop := cost(i)
			h := record.NewLinear(1, 0, 100_000)
			for range 100 {
				h.Record(uint64(math.Round(work)))
			}
			ctl := &results.Controls{PerTick: 64, UserLoopIters: 180,
				NullSyscall: results.TickStats{Count: 6400, MeanTicks: null}, UserLoop: results.TickStats{Count: 6400, MeanTicks: loop}}
			s.Trials = append(s.Trials, results.Trial{Index: i, Round: p*2 + r, Process: p, Variant: "v",
				Readers: []results.Reader{{Name: "rt", Calls: 100, PerCall: results.PerCall{Unit: "ns", All: h.Snapshot("ns")}, Controls: ctl}}})
		}
	}
	return s
}

// machineRun is a run on a machine whose speed drifts from trial to
// trial (drifts, from shift) and is slower by step overall: the
// workload (1000 ns) takes on the drift by workShare (the per-call cost
// moves more than the null syscall under cache drift: θ about 1.2), the
// null syscall (600 ns) fully, the loop (570 ns) by loopShare; entry
// multiplies the null syscall alone and change the workload alone.
func machineRun(procs, shift int, step, workShare, loopShare, entry, change float64) *results.Summary {
	return ctlRun(procs, func(i int) (float64, float64, float64) {
		d := drifts[(i+shift)%len(drifts)] * step
		w := wobble[(i+shift)%len(wobble)]
		l := wobble[(i+shift+3)%len(wobble)]
		return 1000 * math.Pow(d, workShare) * w * change, 600 * d * entry, 570 * math.Pow(d, loopShare) * l
	})
}

// judgeRuns is the gate of compare --fail-on over two runs.
func judgeRuns(t *testing.T, base, news *results.Summary, opt Options) (Compared, []compare.Run) {
	t.Helper()
	runs := []compare.Run{{Label: "base", Summary: base}, {Label: "new", Summary: news}}
	res, err := facts.CompareWith(runs, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt.GrowBaseline = true
	c, err := JudgeRuns(runs, res, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c, runs
}

func TestAdjustedVerdict(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, new *results.Summary
		control   Control
		verdict   Verdict
		judged    string // the Adjustment's Judged ("": none)
		entry     bool   // the entry-change rule fired
		text      []string
	}{
		// The machine 10% slower in the new run: the workload and both
		// controls move together. Raw says slower; adjusted on the null
		// syscall the change is gone.
		{"machine drift", machineRun(10, 0, 1, 1.2, 1, 1, 1), machineRun(10, 5, 1.10, 1.2, 1, 1, 1), ControlNull,
			NotSlower, JudgedAdjusted, false, []string{"adjusted on the null syscall (θ 1.21, r 1.00; raw +11.9% [", "machine, new vs base: null syscall +9.8% ["}},
		// The same with --control none: the raw change is judged, and
		// slower.
		{"machine drift, --control none", machineRun(10, 0, 1, 1.2, 1, 1, 1), machineRun(10, 5, 1.10, 1.2, 1, 1, 1), ControlNone,
			Slower, "", false, []string{"machine, new vs base: null syscall +9.8% ["}},
		// A true +10% change with the machine steady: both say slower.
		{"true change, flat controls", machineRun(10, 0, 1, 1.2, 1, 1, 1), machineRun(10, 5, 1, 1.2, 1, 1, 1.10), ControlNull,
			Slower, JudgedAdjusted, false, []string{"adjusted on the null syscall (θ 1.21, r 1.00; raw +9.8% [", "+10.0% per call [+9.9, +10.1]"}},
		// An entry change: the null syscall +20%, the loop flat, the
		// workload +4%. Adjusting would call it faster; the rule fires
		// and the raw change is judged: never not slower (here slower,
		// not shown beyond the threshold).
		{"entry change", machineRun(10, 0, 1, 1.2, 1, 1, 1), machineRun(10, 5, 1, 1.2, 1, 1.20, 1.04), ControlNull,
			Undecided, JudgedRaw, true, []string{"the null syscall moved +19.8% [", "with the user loop flat (",
				"the system-call entry changed, not the machine; the raw change is judged: slower (CI excludes 0); beyond +3%: undecided"}},
		// Adjusted on the loop, the entry change does not bias the
		// verdict: the loop does not move with it.
		{"entry change, --control loop", machineRun(10, 0, 1, 1.2, 1, 1, 1), machineRun(10, 5, 1, 1.2, 1, 1.20, 1.04), ControlLoop,
			Slower, JudgedAdjusted, true, []string{"adjusted on the user loop", "the system-call entry changed"}},
		// seccomp's runtime-default, as bench/SECCOMP.md measured it:
		// getppid +22%, the loop flat, recvfrom +4.0%, on a machine whose
		// cache drift barely moves the loop (loopShare 0.15): raw, never
		// not slower.
		{"seccomp-like", machineRun(10, 0, 1, 1.2, 0.15, 1, 1), machineRun(10, 5, 1, 1.2, 0.15, 1.22, 1.04), ControlNull,
			Undecided, JudgedRaw, true, []string{"the null syscall moved +21.8% [", "slower (CI excludes 0)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, runs := judgeRuns(t, tc.base, tc.new, Options{Control: tc.control})
			g := c.Gate
			if g.Verdict != tc.verdict || len(g.Metrics) != 1 {
				t.Fatalf("verdict %q over %d metrics, want %q: %+v", g.Verdict, len(g.Metrics), tc.verdict, g.Metrics)
			}
			m := g.Metrics[0]
			adj := m.Adjustment
			switch {
			case tc.judged == "" && adj != nil:
				t.Errorf("adjustment %+v, want none", adj)
			case tc.judged != "" && (adj == nil || adj.Judged != tc.judged || adj.EntryChanged != tc.entry):
				t.Fatalf("adjustment %+v, want judged %q, entry changed %v", adj, tc.judged, tc.entry)
			}
			if tc.entry && m.Verdict == compare.VerdictNotSlower {
				t.Errorf("an entry change judged not slower: %+v", m)
			}
			if adj != nil && (adj.Raw == nil || adj.Raw.PointPct == nil || adj.NullChange == nil || adj.LoopChange == nil) {
				t.Errorf("the raw change and the controls' are not beside the judged one: %+v", adj)
			}
			out := gateText(t, c)
			for _, want := range tc.text {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "faster") {
				t.Errorf("output says faster:\n%s", out)
			}
			_ = runs
		})
	}
}

// TestCheckAdjusted: a check across a step of the machine decides not
// slower on the adjusted change where the raw one says slower, and its
// report says both and the machine's change.
func TestCheckAdjusted(t *testing.T) {
	base := machineRun(10, 0, 1, 1.2, 1, 1, 1)
	newRun := func(n int) *results.Summary { return machineRun(n, 5, 1.10, 1.2, 1, 1, 1) }
	for _, tc := range []struct {
		control Control
		verdict Verdict
	}{{ControlNull, NotSlower}, {ControlNone, Slower}} {
		t.Run(string(tc.control), func(t *testing.T) {
			c := NewCheck(compare.Run{Label: "baseline", Dir: "/srv/base", Summary: base},
				CheckOptions{Options: Options{Control: tc.control}, Labels: [2]string{"baseline", "new"}, Budget: DefaultBudget, Looks: DefaultLooks})
			drive(c, newRun, 20*time.Second, 20*time.Second, MaxProcesses)
			if c.Verdict != tc.verdict || c.ExitCode != tc.verdict.ExitCode() {
				t.Fatalf("verdict %q exit %d, want %q: %+v", c.Verdict, c.ExitCode, tc.verdict, c.Gate.Metrics)
			}
			var b bytes.Buffer
			if err := c.Report.Write(&b, "text", report.Quiet); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !strings.Contains(out, "machine, new vs baseline: null syscall +9.8% [") {
				t.Errorf("no machine line:\n%s", out)
			}
			if tc.control == ControlNull && !strings.Contains(out, "adjusted on the null syscall (θ ") {
				t.Errorf("no θ, r and raw change beside the adjusted one:\n%s", out)
			}
			b.Reset()
			if err := c.Report.Write(&b, "json", report.Quiet); err != nil {
				t.Fatal(err)
			}
			var got Report
			if err := json.Unmarshal(b.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Compare == nil || len(got.Compare.Machine) != 1 || got.Compare.Machine[0].NullSyscall == nil || got.Compare.Machine[0].NullSyscall.LowPct == nil {
				t.Errorf("the JSON lacks the machine's change: %s", b.String())
			}
			if a := got.Gate.Metrics[0].Adjustment; tc.control == ControlNull && (a == nil || a.Theta == nil || a.R == nil || a.Raw == nil || a.Judged != JudgedAdjusted) {
				t.Errorf("the JSON lacks the adjustment: %+v", a)
			}
		})
	}
}

// TestParseControl: --control takes null, loop, none, recv, and names them
// otherwise.
func TestParseControl(t *testing.T) {
	for in, want := range map[string]Control{"null": ControlNull, "Loop": ControlLoop, " none ": ControlNone, "recv": ControlRecv} {
		if got, err := ParseControl(in); err != nil || got != want {
			t.Errorf("ParseControl(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseControl("getppid"); err == nil || err.Error() != `--control "getppid": allowed: null, loop, none, recv` {
		t.Errorf("error %v", err)
	}
}

// recvRun is a run whose per-call cost (1000 ns) and recv control
// (265 ns) drift together from trial to trial (drifts, from shift) and by
// step overall, while the null syscall (600 ns) and the loop (570 ns)
// stay flat but for wobble: the recv path's own drift, which the null
// syscall does not see (bench/DRIFT.md run 5). change multiplies the
// workload alone, entry the null syscall and the recv control (both
// enter the kernel); recv false leaves the recv control out (results of
// an rtload before it).
func recvRun(procs, shift int, step, change, entry float64, recv bool) *results.Summary {
	s := ctlRun(procs, func(i int) (float64, float64, float64) {
		d := drifts[(i+shift)%len(drifts)] * step
		return 1000 * d * wobble[(i+shift)%len(wobble)] * change, 600 * wobble[(i+shift+3)%len(wobble)] * entry, 570 * wobble[(i+shift+5)%len(wobble)]
	})
	for i := range s.Trials {
		if recv {
			d := drifts[(i+shift)%len(drifts)] * step
			s.Trials[i].Readers[0].Controls.RecvData = &results.TickStats{Count: 1600, MeanTicks: 265 * d * entry}
		}
	}
	return s
}

// TestAdjustedOnRecv: --control recv adjusts on the recv control, which
// sees a drift of the recv path the null syscall does not; without it on
// both sides the raw change is judged and the output says why; an entry
// change (the null syscall and the recv control both moved, the loop
// flat) is judged raw, never not slower.
func TestAdjustedOnRecv(t *testing.T) {
	base := recvRun(10, 0, 1, 1, 1, true)
	for _, tc := range []struct {
		name    string
		new     *results.Summary
		control Control
		verdict Verdict
		judged  string
		text    []string
	}{
		// The recv path 10% slower with the null syscall flat: on the
		// null syscall nothing is taken out (raw, slower); on the recv
		// control the drift is gone.
		{"recv drift, null", recvRun(10, 5, 1.10, 1, 1, true), ControlNull, Slower, JudgedRaw, []string{"recv control +9.8% ["}},
		{"recv drift, recv", recvRun(10, 5, 1.10, 1, 1, true), ControlRecv, NotSlower, JudgedAdjusted, []string{"adjusted on the recv control (θ 1.01, r 1.00; raw +9.8% [", "recv control +9.8% ["}},
		// A true +10% change of the workload alone: slower adjusted too.
		{"true change, recv", recvRun(10, 5, 1, 1.10, 1, true), ControlRecv, Slower, JudgedAdjusted, []string{"adjusted on the recv control"}},
		// No recv control in the new run: raw, and why.
		{"no recv control", recvRun(10, 5, 1.10, 1, 1, false), ControlRecv, Slower, JudgedRaw, []string{"the recv control is not in both runs"}},
		// An entry change: the null syscall and the recv control +20%,
		// the loop flat, the workload +4%: raw, never not slower.
		{"entry change, recv", recvRun(10, 5, 1, 1.04, 1.20, true), ControlRecv, Undecided, JudgedRaw, []string{"the system-call entry changed, not the machine; the raw change is judged"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := judgeRuns(t, base, tc.new, Options{Control: tc.control})
			g := c.Gate
			if g.Verdict != tc.verdict || len(g.Metrics) != 1 {
				t.Fatalf("verdict %q over %d metrics, want %q: %+v", g.Verdict, len(g.Metrics), tc.verdict, g.Metrics)
			}
			if a := g.Metrics[0].Adjustment; a == nil || a.Judged != tc.judged {
				t.Fatalf("adjustment %+v, want judged %q", a, tc.judged)
			}
			out := gateText(t, c)
			for _, want := range tc.text {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// steppedRun is a run on a machine whose speed is steady within the run
// but step times the baseline's: the null syscall (600 ns) and the user
// loop (570 ns) take the step and barely vary (wobble), the per-call cost
// (1000 ns) takes it at slope 1.5, with ±6% noise of its own from trial
// to trial (drifts) and change on top. The controls then explain nothing
// within the sides (θ near 0), as in the A/A checks the machine guard was
// made for.
func steppedRun(procs int, step, change float64) *results.Summary {
	return ctlRun(procs, func(i int) (float64, float64, float64) {
		return 1000 * math.Pow(step, 1.5) * drifts[i%len(drifts)] * change, 600 * step * wobble[i%len(wobble)], 570 * step * wobble[(i+3)%len(wobble)]
	})
}

// TestMachineGuard: the machine 12% slower between the runs, seen by
// both controls, with nothing to estimate θ from within the sides. An
// A/A comparison is slower on the raw change, and the guard holds it
// undecided (net of the loop it is +5.8%); a true +30% change stays
// slower; with the machine steady the guard reads nothing.
func TestMachineGuard(t *testing.T) {
	base := steppedRun(10, 1, 1)
	for _, tc := range []struct {
		name    string
		new     *results.Summary
		verdict Verdict
		guard   bool
	}{
		{"A/A, machine +12%", steppedRun(10, 1.12, 1), Undecided, true},
		{"+30%, machine +12%", steppedRun(10, 1.12, 1.30), Slower, false},
		{"A/A, machine steady", steppedRun(10, 1, 1), NotSlower, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := judgeRuns(t, base, tc.new, Options{Control: ControlNull, Threshold: 0.05})
			g := c.Gate
			if g.Verdict != tc.verdict || len(g.Metrics) != 1 {
				t.Fatalf("verdict %q over %d metrics, want %q: %+v", g.Verdict, len(g.Metrics), tc.verdict, g.Metrics)
			}
			a := g.Metrics[0].Adjustment
			if a == nil || (a.MachineGuard != "") != tc.guard {
				t.Fatalf("adjustment %+v, want the guard %v", a, tc.guard)
			}
			if tc.guard && (a.NetOfLoop == nil || !strings.Contains(g.Metrics[0].Judged, "machine guard: the user loop (no system call: the machine's speed) moved +12.0% [")) {
				t.Errorf("judged %q, net of the loop %+v", g.Metrics[0].Judged, a.NetOfLoop)
			}
			if out := gateText(t, c); tc.guard && strings.Contains(out, "CI excludes 0") {
				t.Errorf("a verdict the guard held is read as slower with the CI excluding 0:\n%s", out)
			}
			_, err := ParseControl("none")
			if err != nil {
				t.Fatal(err)
			}
			// --control none judges the raw change: no guard.
			c, _ = judgeRuns(t, base, tc.new, Options{Control: ControlNone, Threshold: 0.05})
			if a := c.Gate.Metrics[0].Adjustment; a != nil {
				t.Errorf("--control none: adjustment %+v", a)
			}
		})
	}
}

// gateText is a gate's closing block (its machine lines included) and the
// comparison it judged, as text.
func gateText(t *testing.T, c Compared) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Gate.Closing("gate", nil, view.MachineLines(c.Result), c.Gate.ExitCode()).Write(&b, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMachineLoop: the guard reads the machine line of the metric's own
// run (its column "group/run" or "run"), and none where there is none.
func TestMachineLoop(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	machine := []compare.Machine{
		{Column: "other", Baseline: "base", UserLoop: &compare.Interval{Level: 0.95, PointPct: pct(1), LowPct: pct(-1), HighPct: pct(3)}},
		{Column: "new", Baseline: "base", UserLoop: &compare.Interval{Level: 0.95, PointPct: pct(14.9), LowPct: pct(7.7), HighPct: pct(22.7)}},
	}
	for col, want := range map[string]float64{"recvfrom/new": 0.149, "new": 0.149, "recvfrom/other": 0.01} {
		c := machineLoop(&compare.Metric{Column: col}, machine)
		if !c.Defined() || math.Abs(c.Point-want) > 1e-9 || c.Level != 0.95 {
			t.Errorf("%s: loop %+v, want point %v at 95%%", col, c, want)
		}
	}
	if c := machineLoop(&compare.Metric{Column: "recvfrom/renew"}, machine); c.Defined() {
		t.Errorf("a run with no machine line read %+v", c)
	}
}

// TestControlTimed: --control recv on a run without the recv control is a
// usage error naming the run and the other controls; with it, or with
// another control, nothing is refused.
func TestControlTimed(t *testing.T) {
	with, without := recvRun(2, 0, 1, 1, 1, true), recvRun(2, 0, 1, 1, 1, false)
	runs := []compare.Run{{Label: "base", Summary: with}, {Label: "old", Summary: without}}
	err := ControlTimed(runs, ControlRecv)
	if err == nil || err.Error() != "--control recv: old has no recv control (results of an rtload before it): allowed: null, loop, none" {
		t.Errorf("error %v", err)
	}
	if err := ControlTimed(runs[:1], ControlRecv); err != nil {
		t.Errorf("with the recv control: %v", err)
	}
	if err := ControlTimed(runs, ControlNull); err != nil {
		t.Errorf("--control null: %v", err)
	}
}
