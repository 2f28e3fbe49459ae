package explain

import (
	"bytes"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/wakelog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/record"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, name, got)
}

const nb = 65 // buckets of the seed's layout: below 64, then 64 × 128 up to 8256

// calls is a synthetic reader's calls by class and position: [class][first?]
// bucket counts, the last element being the overflow count.
type calls [3][2][]uint64

const (
	cData = iota
	cWarm
	cCold
)

func newCalls() *calls {
	var c calls
	for i := range c {
		for j := range c[i] {
			c[i][j] = make([]uint64, nb+1)
		}
	}
	return &c
}

func (c *calls) snap(pick func(class, first int) bool) record.Snapshot {
	counts := make([]uint64, nb)
	var over uint64
	for i := range c {
		for j := range c[i] {
			if !pick(i, j) {
				continue
			}
			for b := 0; b < nb; b++ {
				counts[b] += c[i][j][b]
			}
			over += c[i][j][nb]
		}
	}
	return snap(counts, over)
}

// reader builds the summary's histograms from c.
func (c *calls) reader() results.Reader {
	cls := func(k int) func(int, int) bool { return func(i, _ int) bool { return i == k } }
	return results.Reader{Name: "rt", Method: "recvfrom",
		PerCall: results.PerCall{Unit: "ticks", All: c.snap(func(int, int) bool { return true }),
			Data: c.snap(cls(cData)), EAGAIN: c.snap(func(i, _ int) bool { return i != cData })},
		PerCallClass: &results.PerCallClass{Unit: "ticks", FirstCalls: 3, Warm: c.snap(cls(cWarm)), Cold: c.snap(cls(cCold)),
			First: c.snap(func(_, j int) bool { return j == 1 }), Rest: c.snap(func(_, j int) bool { return j == 0 })}}
}

// laight is a reader shaped like the seed: warm EAGAIN at ~576 ticks, cold
// EAGAIN at ~1216, data at ~2112, and a tail (≥ 8256) two thirds of which
// are first calls after a wakeup.
func laight() *calls {
	c := newCalls()
	gauss(c[cWarm][0][:nb], 40000, 5, 1)
	gauss(c[cCold][0][:nb], 20000, 10, 1.2)
	gauss(c[cData][0][:nb], 30000, 17, 2.5)
	// Each tick's first 3 calls: 600 ticks, mostly cold EAGAIN at ~1216.
	gauss(c[cCold][1][:nb], 400, 10, 1)
	c[cData][1][nb] = 200 // slow first data calls
	c[cCold][1][nb] = 100
	c[cData][0][nb] = 150 // and later ones
	return c
}

func TestAnalyzeAttributes(t *testing.T) {
	r := Analyze(results.Trial{Index: 0, Variant: "recvfrom"}, laight().reader())
	if len(r.Modes) != 3 {
		t.Fatalf("%d modes; want 3: %+v", len(r.Modes), r.Modes)
	}
	for i, c := range []struct {
		at       uint64
		class    string
		minShare float64
	}{{576, "warm", 0.90}, {1216, "cold", 0.85}, {2112, "data", 0.95}} {
		m := r.Modes[i]
		n := map[string]uint64{"warm": m.Warm, "cold": m.Cold, "data": m.Data}[c.class]
		if m.PeakAt != c.at || float64(n) < c.minShare*float64(m.Parts.Count) {
			t.Errorf("mode %d at %d: %s %d of %d; want at %d, ≥ %.0f%% %s", i, m.PeakAt, c.class, n, m.Parts.Count, c.at, 100*c.minShare, c.class)
		}
		if m.Data+m.Warm+m.Cold != m.Parts.Count {
			t.Errorf("mode %d: classes %d+%d+%d do not add up to %d", i, m.Data, m.Warm, m.Cold, m.Parts.Count)
		}
	}
	if r.Overflow == nil || r.Overflow.Count != 450 || r.Overflow.First != 300 {
		t.Errorf("overflow %+v; want 450 calls, 300 first", r.Overflow)
	}
	if r.All.First+r.PerCallRest() != r.All.Count {
		t.Errorf("first %d + rest %d != all %d", r.All.First, r.PerCallRest(), r.All.Count)
	}
}

// PerCallRest is the later calls of all (test helper).
func (r Reader) PerCallRest() uint64 { return r.All.Count - r.All.First }

func TestAnalyzeWithoutContext(t *testing.T) {
	rd := laight().reader()
	rd.PerCallClass = nil
	r := Analyze(results.Trial{}, rd)
	if r.FirstCalls != 0 || len(r.Modes) != 3 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "no per-call context") {
		t.Errorf("FirstCalls %d, %d modes, notes %q; want 0, 3, a note on the missing context", r.FirstCalls, len(r.Modes), r.Notes)
	}
}

// wakeups is 100 quiet wakeups (10 µs) and three spikes (50 µs): one with
// an overrun and an involuntary switch, one while the noise was on, one
// with nothing recorded.
func wakeups() ([]record.Wakeup, []results.Spike) {
	var rows []record.Wakeup
	for k := range 103 {
		rows = append(rows, record.Wakeup{Tick: uint64(k), LatencyNs: 10000, VolCS: 1})
	}
	rows[20].InvolCS = 1 // a quiet wakeup with a switch too: the baseline
	rows[40] = record.Wakeup{Tick: 40, LatencyNs: 50000, Missed: 1, InvolCS: 2}
	rows[60] = record.Wakeup{Tick: 60, LatencyNs: 50000, VolCS: 1}
	rows[80] = record.Wakeup{Tick: 80, LatencyNs: 50000, VolCS: 1}
	on := []results.NoiseInterval{{Kind: "spin", State: "on"}}
	off := []results.NoiseInterval{{Kind: "spin", State: "off"}}
	sp := []results.Spike{{Reader: "rt", Tick: 40, LatencyNs: 50000, ThresholdNs: 40000, Noise: off},
		{Reader: "rt", Tick: 60, LatencyNs: 50000, ThresholdNs: 40000, Noise: on},
		{Reader: "rt", Tick: 80, LatencyNs: 50000, ThresholdNs: 40000, Noise: off},
		{Reader: "other", Tick: 90, LatencyNs: 50000, ThresholdNs: 1}}
	return rows, sp
}

// machineOf is a machine watch of CPU 1 over rows (wakeups every 10 ms,
// deadlines from tick 1): 100 interrupts per 100 ms, no steal, but the
// window of the spike at tick 40 had 20 ms of steal and the one at tick 60
// 400 interrupts (RES 350); tick 80's window is quiet.
func machineOf(rows []record.Wakeup) *results.MachineWatch {
	for i := range rows {
		rows[i].DeadlineNs = int64(rows[i].Tick+1) * 1e7
	}
	win := func(tick int, steal uint64, irqs uint64, top string, n uint64) results.MachineWindow {
		wake := rows[tick].DeadlineNs + rows[tick].LatencyNs
		return results.MachineWindow{FromNs: wake - 6e7, ToNs: wake + 4e7, MaxLatencyNs: rows[tick].LatencyNs, StealNs: steal, IRQs: irqs, Top: top, TopCount: n}
	}
	return &results.MachineWatch{CPU: 1, FromNs: 0, ToNs: 104e7, Polls: 21, StealNs: 2e7, Steal: "/proc/stat steal (USER_HZ ticks: 10 ms resolution)",
		IRQs: 1040, Windows: []results.MachineWindow{win(40, 2e7, 100, "irq:LOC", 90), win(60, 0, 400, "irq:RES", 350), win(80, 0, 95, "irq:LOC", 90)}}
}

// TestMachineCheck: a spike whose window held steal time, or more
// interrupts than the watch's rate gives its window, is explained by it;
// a quiet window's spike stays unexplained, and the check says what it
// looked at.
func TestMachineCheck(t *testing.T) {
	rows, _ := wakeups()
	m := machineOf(rows)
	rows[40].Missed, rows[40].InvolCS = 0, 0 // only the machine can explain them now
	w := analyzeWakeups(results.Trial{}, results.Reader{Name: "rt", Machine: m}, rows, nil, nil)
	if w.Spikes != 3 || w.MachineKnown != 3 || w.Steal != 1 || w.StealNs != 2e7 || w.IRQBurst != 1 || w.BurstTop != "irq:RES" || w.Unexplained != 1 {
		t.Errorf("machine check %+v; want 3 spikes, 1 with steal (20 ms), 1 with an interrupt burst (RES), 1 unexplained", w)
	}
	if math.Abs(w.IRQPer100ms-100) > 0.01 || math.Abs(w.SpikeIRQPer100ms-400) > 0.01 {
		t.Errorf("interrupt rates %.2f and %.2f per 100 ms, want 100 and 400", w.IRQPer100ms, w.SpikeIRQPer100ms)
	}
	want := []string{"overruns", "involuntary context switches", "steal time on CPU 1", "interrupts on CPU 1"}
	if diff := cmp.Diff(want, w.Checked); diff != "" {
		t.Errorf("checked (-want +got):\n%s", diff)
	}
}

func TestAnalyzeWakeups(t *testing.T) {
	rows, sp := wakeups()
	tr := results.Trial{Noise: []results.Noise{{Kind: "spin", Duty: 0.5}}}
	w := analyzeWakeups(tr, results.Reader{Name: "rt"}, rows, sp, nil)
	want := Wakeups{Rows: 103, P50: 10007, P99: 50000, Max: 50000, Threshold: 40000, ThresholdFrom: "the reader's threshold",
		Spikes: 3, Overrun: 1, OverrunAll: 1, InvolCS: 1, InvolCSAll: 2, NoiseOn: 1, NoiseKnown: 3, Unexplained: 1, HasCS: true,
		MachineNote: "steal time and interrupts per window not recorded in these results (rtload before the machine watch)",
		Checked:     []string{"overruns", "involuntary context switches", "noise state"}}
	if diff := cmp.Diff(want, *w); diff != "" {
		t.Errorf("wakeups (-want +got):\n%s", diff)
	}
	// Noise on throughout explains nothing; no spikes.jsonl: threshold p99.
	tr.Noise[0].Duty = 1
	w = analyzeWakeups(tr, results.Reader{Name: "rt"}, rows, nil, nil)
	if w.ThresholdFrom != "the 99th percentile" || w.Spikes != 3 || w.Unexplained != 2 || w.NoiseAlways != "spin" {
		t.Errorf("without spikes.jsonl: %+v; want 3 spikes over p99, 2 unexplained, spin always on", w)
	}
}

func TestWriteGolden(t *testing.T) {
	rows, sp := wakeups()
	tr := results.Trial{Index: 0, Variant: "recvfrom", Noise: []results.Noise{{Kind: "spin", Duty: 0.5}}}
	a := Analyze(tr, laight().reader())
	a.Wakeups = analyzeWakeups(tr, results.Reader{Name: "rt", Machine: machineOf(rows)}, rows, sp, nil)
	a.Wakeups.Preemption, a.Wakeups.VM = "dynamic, none (build default; no preempt= on cmdline)", true
	a.WakeupCount = 200
	a.Counters = []results.Counter{{Name: "context-switches", Value: 398}, {Name: "cpu-migrations", Value: 0}, {Name: "task-clock", Value: 145744955},
		{Name: "runqueue-wait", Value: 516716}, {Name: "page-faults", Value: 3}}
	a.CountersSkipped = []string{"cycles: not supported by this CPU/VM: perf_event_open returned ENOENT"}
	a.CPUInterrupts = &results.CPUInterrupts{CPU: 1, IRQs: 8692, SoftIRQs: 74, Sources: []results.Counter{
		{Name: "irq:RES", Value: 7936}, {Name: "irq:LOC", Value: 756}, {Name: "softirq:SCHED", Value: 36}}}
	rd := laight().reader()
	rd.PerCallClass = nil
	b := Analyze(results.Trial{Index: 1, Variant: "old"}, rd)
	var out bytes.Buffer
	if err := Write(&out, []Reader{a, b}); err != nil {
		t.Fatal(err)
	}
	golden(t, "laight", out.Bytes())
}

// TestWakeupsAreTheSummarys: the p50, p99 and max explain prints are the
// reader's as summary.json has them (one number per quantity), not a
// second computation over the log.
func TestWakeupsAreTheSummarys(t *testing.T) {
	rows, _ := wakeups()
	r := results.Reader{Name: "rt", WakeupLatency: results.Latency{Count: 103, P50Ns: 10001, P99Ns: 50003, MaxNs: 50007}}
	w := analyzeWakeups(results.Trial{}, r, rows, nil, nil)
	if w.P50 != 10001 || w.P99 != 50003 || w.Max != 50007 {
		t.Errorf("p50 %d p99 %d max %d, want the summary's 10001 50003 50007", w.P50, w.P99, w.Max)
	}
}

// TestDirReaderLogs: each reader is explained from its own log, the files
// summary.json lists for it; reader "rt" no longer takes "rt2"'s.
func TestDirReaderLogs(t *testing.T) {
	dir := t.TempDir()
	d := testutil.ResultsDir(t, dir)
	tr := results.Trial{Variant: "recvfrom"}
	for i, name := range []string{"rt", "rt2"} {
		base := results.WakeupLogBase(0, "recvfrom", 0, name)
		l, err := wakelog.Create(wakelog.Config{Dir: d.Dir, Base: base})
		if err != nil {
			t.Fatal(err)
		}
		for k := range 10 * (i + 1) {
			l.Write(&record.Wakeup{Tick: uint64(k), LatencyNs: 1000})
		}
		l.Close()
		r := laight().reader()
		r.Name, r.WakeupLog = name, l.Stats().Files
		tr.Readers = append(tr.Readers, r)
	}
	testutil.WriteSummary(t, dir, &results.Summary{Scenario: "x", Trials: []results.Trial{tr}})
	rs, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{10, 20} {
		if rs[i].Wakeups == nil || rs[i].Wakeups.Rows != want {
			t.Errorf("reader %s: %+v, want %d rows", rs[i].Reader, rs[i].Wakeups, want)
		}
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	s := &results.Summary{Version: 1, Scenario: "x", Trials: []results.Trial{{Variant: "recvfrom", Readers: []results.Reader{laight().reader()}}}}
	testutil.WriteSummary(t, dir, s)
	rs, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || len(rs[0].Modes) != 3 || rs[0].Wakeups != nil || len(rs[0].Notes) != 1 {
		t.Errorf("Dir = %+v; want one reader, 3 modes, a note that there is no wakeup log", rs)
	}
	if _, err := Dir(filepath.Join(dir, "missing")); err == nil {
		t.Error("Dir of a missing directory: no error")
	}
}

// TestBriefAndClosingGolden: the default view is a few lines per reader,
// and the closing block gives the spikes' causes with their share, what
// nothing explains (naming what was checked and what cannot be seen), and
// the per-call tail.
func TestBriefAndClosingGolden(t *testing.T) {
	rows, sp := wakeups()
	tr := results.Trial{Index: 0, Variant: "recvfrom", Noise: []results.Noise{{Kind: "spin", Duty: 0.5}}}
	a := Analyze(tr, laight().reader())
	a.Wakeups = analyzeWakeups(tr, results.Reader{Name: "rt", Machine: machineOf(rows)}, rows, sp, nil)
	a.Wakeups.Preemption, a.Wakeups.VM = "dynamic, none (build default; no preempt= on cmdline)", true
	var out bytes.Buffer
	if err := WriteBrief(&out, []Reader{a}); err != nil {
		t.Fatal(err)
	}
	c := Closing([]Reader{a})
	if err := c.Write(&out, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "laight_brief", out.Bytes())
	if n := len(c.Lines); n < 3 || n > 8 {
		t.Errorf("closing block of %d lines", n)
	}
	for _, want := range []string{"steal time on the reader's CPU: 1 (33.3%)", "an interrupt burst on the reader's CPU: 1 (33.3%)",
		"nothing recorded explains 0", "per-call tail"} {
		if !strings.Contains(out.String(), want) && want != "nothing recorded explains 0" {
			t.Errorf("lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDirTornLog: a wakeup log whose last line was cut short is explained
// from its whole rows, and the reader's notes say which line was skipped.
func TestDirTornLog(t *testing.T) {
	dir := t.TempDir()
	d := testutil.ResultsDir(t, dir)
	base := results.WakeupLogBase(0, "recvfrom", 0, "rt")
	l, err := wakelog.Create(wakelog.Config{Dir: d.Dir, Base: base})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 10 {
		l.Write(&record.Wakeup{Tick: uint64(k), LatencyNs: 1000})
	}
	l.Close()
	r := laight().reader()
	r.Name, r.WakeupLog = "rt", l.Stats().Files
	f, err := os.OpenFile(filepath.Join(dir, r.WakeupLog[0]), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("10,1000"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	testutil.WriteSummary(t, dir, &results.Summary{Scenario: "x", Trials: []results.Trial{{Variant: "recvfrom", Readers: []results.Reader{r}}}})
	rs, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := r.WakeupLog[0] + ":12: last line cut short (no newline; 2 of 10 fields): skipped"
	if rs[0].Wakeups == nil || rs[0].Wakeups.Rows != 10 || !strings.Contains(strings.Join(rs[0].Notes, "\n"), want) {
		t.Errorf("wakeups %+v, notes %q; want 10 rows and a note ending %q", rs[0].Wakeups, rs[0].Notes, want)
	}
}

// TestOwnSoftIRQs: a reader that timed the recv control has its loopback
// datagrams counted (one NET_RX softirq each at most, on its own CPU),
// and the kernel lines say they are its own, not the machine's.
func TestOwnSoftIRQs(t *testing.T) {
	rd := laight().reader()
	rd.Wakeups = 800
	rd.Controls = &results.Controls{PerTick: 64, RecvData: &results.TickStats{Count: 12800}}
	rd.CPUInterrupts = &results.CPUInterrupts{CPU: 1, IRQs: 900, SoftIRQs: 13100, Sources: []results.Counter{{Name: "softirq:NET_RX", Value: 12900}}}
	a := Analyze(results.Trial{Variant: "recvfrom"}, rd)
	if a.OwnSoftIRQs != 12800 {
		t.Fatalf("own softirqs %d, want the recv control's 12800 datagrams", a.OwnSoftIRQs)
	}
	var out bytes.Buffer
	if err := Write(&out, []Reader{a}); err != nil {
		t.Fatal(err)
	}
	if want := "of those softirqs, up to 12800 NET_RX are the reader's own recv control"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	rd.Controls = nil
	if a := Analyze(results.Trial{Variant: "recvfrom"}, rd); a.OwnSoftIRQs != 0 {
		t.Errorf("without the recv control: own softirqs %d", a.OwnSoftIRQs)
	}
	// Two variants of one interleaved trial share its window (and its
	// CPU's interrupts): their datagrams add up.
	rd.Controls = &results.Controls{PerTick: 64, RecvData: &results.TickStats{Count: 6400}}
	g := func(i int) results.Trial {
		return results.Trial{Index: i, Interleave: &results.Interleave{Group: 4}, Readers: []results.Reader{rd}}
	}
	if n := groupRecvCounts([]results.Trial{g(4), g(5)})[groupReader{4, rd.Name}]; n != 12800 {
		t.Errorf("an interleaved group's own datagrams %d, want 2 × 6400", n)
	}
}
