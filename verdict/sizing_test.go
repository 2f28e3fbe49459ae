package verdict

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/stats"
)

// timed gives the processes of s their records, each per long, and each
// reader a null-syscall control that follows its per-call cost's process
// factor (large[i]) times ctl[i] of another pattern: the machine's drift,
// seen by both.
func timed(s *results.Summary, per time.Duration, ctl []float64) *results.Summary {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for p := range s.Processes {
		s.Processes[p].Start, s.Processes[p].End = t0.Add(time.Duration(p)*per), t0.Add(time.Duration(p+1)*per)
	}
	for i := range s.Trials {
		null := 200 * large[i%len(large)] * ctl[i%len(ctl)]
		s.Trials[i].Readers[0].Controls = &results.Controls{PerTick: 64,
			NullSyscall: results.TickStats{Count: 6400, MeanTicks: null}, UserLoop: results.TickStats{Count: 6400, MeanTicks: 500}}
	}
	return s
}

// TestCheckSizing: before anything runs, a check says what it can see
// from the baseline's noise and time per process, raw and adjusted on
// the null syscall.
func TestCheckSizing(t *testing.T) {
	ctl := []float64{1.00, 1.00, 1.02, 1.02, 0.99, 0.99, 1.01, 1.01, 0.98, 0.98, 1.0, 1.0, 1.03, 1.03}
	base := timed(procRun(10, 1000, large, 0), 20*time.Second, ctl)
	c := checkOf(t, base, DefaultBudget, DefaultLooks)
	d := c.Sizing
	if d == nil || len(d.Columns) != 1 {
		t.Fatalf("sizing %+v", d)
	}
	level := stats.Stop{Decide: true, MaxLooks: 5, Metrics: 1}.Level()
	if d.BaselineProcesses != 10 || d.NewProcesses != 15 || d.PerProcessNs != int64(20*time.Second) || d.Looks != 5 || d.Metrics != 1 || d.Level != level {
		t.Errorf("sizing %+v: want 10 against the 15 processes of 20 s the 5 minutes allow, 5 looks, 1 metric at %v", d, level)
	}
	// The baseline's process factors (large, both rounds alike): one
	// process's log-SD is theirs; Welch's SE over 10 and 15 processes.
	var logs []float64
	for p := range 10 {
		logs = append(logs, math.Log(large[2*p]))
	}
	m := mean(logs)
	var v float64
	for _, l := range logs {
		v += (l - m) * (l - m)
	}
	v /= 9
	sa, sb := v/10, v/15
	df := (sa + sb) * (sa + sb) / (sa*sa/9 + sb*sb/14)
	want := 100 * math.Expm1(math.Log1p(0.03)+(stats.TQuantile((1+level)/2, df)+stats.TQuantile(0.8, df))*math.Sqrt(sa+sb))
	x := d.Columns[0]
	if x.Column != "v" || x.Metric != "mean per-call cost (ns)" || x.SmallestPct == nil || math.Abs(*x.SmallestPct-want) > 1e-6 ||
		math.Abs(*x.ProcessLogSD-math.Sqrt(v)) > 1e-9 {
		t.Fatalf("column %+v (smallest %v), want v mean per-call cost (ns) %+.4f%%, log-SD %.4f", x, *x.SmallestPct, want, math.Sqrt(v))
	}
	a := x.Adjusted
	if a == nil || a.SmallestPct == nil || !(*a.SmallestPct < *x.SmallestPct) || !(a.R > 0.9 && a.R < 1) || !(a.Theta > 0.5) {
		t.Fatalf("adjusted %+v: want smaller than the raw %+.2f%%, r in (0.9, 1)", a, *x.SmallestPct)
	}
	line := d.Line("sizing")
	for _, w := range []string{"sizing: a baseline of 10 processes against up to 15 new processes (the 5m0s budget at 20s a process), from the baseline's 10 processes: the smallest slowdown a check finds is v +",
		"(adjusted on the null syscall +", "(mean per-call cost (ns); slower beyond +3% with 80% power, 98.42% per metric and look: 1 metric over 5 looks)"} {
		if !strings.Contains(line, w) {
			t.Errorf("line lacks %q:\n%s", w, line)
		}
	}
	t.Logf("%s", line)
}

// TestRunSizingFloor: after a run's first process, the rounds' noise
// only: a floor, said so.
func TestRunSizingFloor(t *testing.T) {
	s := procRun(1, 1000, small, 0)
	d := SizeRun(compare.Run{Label: "run", Summary: s}, 10, 20*time.Second, Options{})
	if d == nil || !d.Floor || d.BaselineProcesses != 10 || d.NewProcesses != 15 || len(d.Columns) != 1 || d.Columns[0].SmallestPct == nil {
		t.Fatalf("sizing %+v", d)
	}
	if l := d.Line("sizing after process 1 of 10"); !strings.Contains(l, "from process 1's 2 rounds only (the noise between processes is not measured yet: often most of a check's): the smallest slowdown a check finds is at best v +") {
		t.Errorf("line %s", l)
	}
}

// TestSizing: a run of 4 processes gets a sizing line per primary metric
// (how many processes find +5% and +10%); a run of one process gets none,
// only why.
func TestSizing(t *testing.T) {
	mk := func(procs int) *compare.Result {
		s := &results.Summary{Version: results.SummaryVersion, Scenario: "x", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
		i := 0
		for p := range procs {
			for r := range 3 {
				h := record.NewLinear(1, 0, 100_000)
				for range 10 {
					h.Record(uint64(1000 + 30*p + 20*r*(p%2)))
				}
				s.Trials = append(s.Trials, results.Trial{Index: i, Process: p, Round: r, Variant: "A",
					Readers: []results.Reader{{Name: "rt", Sockets: 1, PerCall: results.PerCall{All: h.Snapshot("ns")}}}})
				i++
			}
		}
		res, err := facts.Compare([]compare.Run{{Label: "run", Summary: s}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	lines := Sizing(mk(4), 0.03, 5)
	if len(lines) != 1 || !strings.Contains(lines[0], "to find +5%") || !strings.Contains(lines[0], "to find +10%") || !strings.Contains(lines[0], "between processes") {
		t.Errorf("4 processes: %q", lines)
	}
	lines = Sizing(mk(1), 0.03, 5)
	if len(lines) != 1 || !strings.Contains(lines[0], "1 process, so the noise between processes") {
		t.Errorf("1 process: %q", lines)
	}
}
