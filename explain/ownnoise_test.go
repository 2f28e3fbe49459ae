package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/wakelog"
)

// hogSpec is a scenario with laight-450's noise and a SCHED_FIFO 90
// spinner on the reader's CPU 1, on 3 ms every 30 ms (tail-hog.yaml).
const hogSpec = `{"name":"hog","noise":[
 {"kind":"spin","threads":5,"cpus":null,"policy":"other","priority":0,"duty":{"on":"0s","off":"0s"}},
 {"kind":"spin","threads":1,"cpus":[1],"policy":"fifo","priority":90,"duty":{"on":"3ms","off":"27ms"}}]}`

// hogRows is 300 wakeups every 10 ms, whose deadlines fall on three
// points of the hog's 30 ms cycle: the ones on the point its on phase
// covers (every third, from tick 0) wake 400–790 µs late, the others
// 20–29 µs; every drain takes 300 µs.
func hogRows() []record.Wakeup {
	var rows []record.Wakeup
	for k := range 300 {
		lat := int64(20000 + 1000*(k%10))
		if k%3 == 0 {
			lat = int64(400000 + 10000*(k%40))
		}
		rows = append(rows, record.Wakeup{Tick: uint64(k), DeadlineNs: 1e9 + int64(k)*1e7 + 1e6, LatencyNs: lat, DrainNs: 300000, VolCS: 1})
	}
	return rows
}

// hogReader is reader rt, SCHED_FIFO 80 on CPU 1, with its log written
// into d under trial index i.
func hogReader(t *testing.T, d *wakelog.Config, rows []record.Wakeup) results.Reader {
	t.Helper()
	l, err := wakelog.Create(*d)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		l.Write(&rows[i])
	}
	l.Close()
	r := laight().reader()
	r.Applied = results.Applied{Thread: results.Thread{Name: "rtl-rd/rt", Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}}
	r.WakeupLog = l.Stats().Files
	r.Counters = []results.Counter{{Name: "runqueue-wait", Value: 186_051_058}}
	return r
}

// TestDirOwnNoise: explain sets the spikes against the scenario's own
// duty-cycled FIFO noise on the reader's CPU (trial 1: they gather in
// one 3 ms window of its 30 ms cycle, far beyond chance, and are the
// workload's, not unexplained), and says who starved a reader marked
// starved: its own noise (trial 1), a foreign thread when a variant puts
// the noise below the reader's priority (trial 2), nothing recorded
// (trial 3). Before, it left every such spike unexplained and said
// nothing of the marks.
func TestDirOwnNoise(t *testing.T) {
	dir := t.TempDir()
	d := testutil.ResultsDir(t, dir)
	starved := results.Mark{Kind: results.MarkStarved, Reader: "rt", Text: "reader rt runnable but off CPU 1 for 186ms (2.3% of the 8s window; schedstat run-queue wait): RT throttling or a thread at or above SCHED_FIFO 80 there"}
	noise := []results.Noise{{Kind: "spin", Threads: 5, Duty: 0.9997}, {Kind: "spin", Threads: 1, Duty: 0.0958}}
	low := map[string]string{"noise[1].priority": "50"}
	python := results.Culprit{Reader: "rt", CPU: 1, Seen: 10, Scans: 10, ForeignThread: results.ForeignThread{Thread: results.Thread{TID: 8019, Name: "python3", Policy: "SCHED_FIFO", Priority: 90, CPUs: []int{1}}, PID: 8019, Comm: "python3"}}
	var trials []results.Trial
	for i, tr := range []results.Trial{
		{Variant: "recvfrom"},
		{Variant: "low", Overrides: low, Culprits: []results.Culprit{python}},
		{Variant: "low", Overrides: low},
	} {
		tr.Index, tr.DurationNs, tr.Noise, tr.Marks = i, 8e9, noise, []results.Mark{starved}
		var rd results.Reader
		if i == 0 {
			rd = hogReader(t, &wakelog.Config{Dir: d.Dir, Base: results.WakeupLogBase(i, tr.Variant, 0, "rt")}, hogRows())
		} else {
			rd = laight().reader()
			rd.Applied = results.Applied{Thread: results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}}
		}
		tr.Readers = []results.Reader{rd}
		trials = append(trials, tr)
	}
	testutil.WriteSummary(t, dir, &results.Summary{Scenario: "hog", Spec: results.Spec(hogSpec), Trials: trials})
	rs, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteBrief(&out, rs); err != nil {
		t.Fatal(err)
	}
	if err := Closing(rs).Write(&out, false); err != nil {
		t.Fatal(err)
	}
	out.WriteString("\n-v:\n")
	if err := Write(&out, rs[:1]); err != nil {
		t.Fatal(err)
	}
	golden(t, "ownnoise", out.Bytes())
	for _, want := range []string{
		"these 3 spikes coincide with the run's own noise[1]: the workload's doing, not the kernel's or the machine's",
		"by the run's own noise[1] spin (1 thread, SCHED_FIFO 90 on CPU 1, on 3.0 ms every 30.0 ms: duty 10.0%, observed 9.6%)",
		"by a foreign thread, process 8019 (python3) thread 8019 (python3) SCHED_FIFO 90 on CPUs 1",
		"by nothing the results name",
		"unexplained 0",
		"3 spikes in 1 of 3 reader trials coincide with the on phases of the run's own noise[1] spin",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%s", want, out.String())
		}
	}
}

// hog is noise[1] of hogSpec.
func hog() OwnNoise {
	return OwnNoise{Index: 1, Kind: "spin", Threads: 1, Policy: "fifo", Priority: 90, CPUs: []int{1}, OnNs: 3e6, OffNs: 27e6}
}

// TestPhaseCheckByChance: spikes spread over every point of the cycle
// are not the noise's, and stay unexplained; a reader the noise cannot
// preempt (above its priority, or on another CPU) is not set against it.
func TestPhaseCheckByChance(t *testing.T) {
	rows := hogRows()
	for k := range rows {
		rows[k].LatencyNs = 20000
		if k%25 == 0 { // 12 spikes, 4 on each of the cycle's three points
			rows[k].LatencyNs = 500000
		}
	}
	rd := results.Reader{Name: "rt", Applied: results.Applied{Thread: results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}}}
	w := analyzeWakeups(results.Trial{}, rd, rows, nil, []OwnNoise{hog()})
	x := w.OwnNoise
	if x == nil || x.Spikes != 12 || x.Coincide || x.Explained != 0 || w.Unexplained != 12 {
		t.Fatalf("own noise %+v, unexplained %d; want 12 spikes not singled out, all unexplained", x, w.Unexplained)
	}
	if x.WindowSpikes != 4 || x.Chance < 3.9 || x.Chance > 4.1 || x.P < 0.5 {
		t.Errorf("window %d spikes against %.2f by chance (p %.3f); want 4 against 4, p near 1", x.WindowSpikes, x.Chance, x.P)
	}
	for _, c := range []struct {
		name string
		r    results.Thread
	}{
		{"reader above the noise", results.Thread{Policy: "SCHED_FIFO", Priority: 95, CPUs: []int{1}}},
		{"reader on another CPU", results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{0}}},
	} {
		rd.Applied.Thread = c.r
		if w := analyzeWakeups(results.Trial{}, rd, rows, nil, []OwnNoise{hog()}); w.OwnNoise != nil {
			t.Errorf("%s: set against the noise: %+v", c.name, w.OwnNoise)
		}
	}
}

// TestPhaseCheckDrains: a noise whose on phase begins while the reader
// drains lengthens the drains of one point of its cycle, not the
// wakeups: the drains coincide, the spikes do not, and the starved mark
// says the wait is in the per-call times.
func TestPhaseCheckDrains(t *testing.T) {
	rows := hogRows()
	for k := range rows {
		rows[k].LatencyNs = int64(20000 + 1000*(k%10))
		if k%3 == 1 {
			rows[k].DrainNs = 2_000_000
		}
	}
	rd := results.Reader{Name: "rt", Applied: results.Applied{Thread: results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}},
		Drain: results.Latency{Count: 300, P90Ns: 2_000_000}}
	w := analyzeWakeups(results.Trial{}, rd, rows, nil, []OwnNoise{hog()})
	x := w.OwnNoise
	if x == nil || x.Coincide || x.Drains == nil || !x.Drains.Coincide || x.Drains.Ticks != 100 || x.Drains.LongIn != 100 {
		t.Fatalf("own noise %+v (drains %+v); want the drains of 100 ticks to coincide, not the spikes", x, x.Drains)
	}
	r := Reader{Wakeups: w}
	s := Starved{OwnNoise: []OwnNoise{hog()}}
	if got := starvedBound(r, s); !strings.Contains(got, "fell in the reader's drains, not its wakeups: a reader preempted mid-drain counts an involuntary context switch") {
		t.Errorf("starved bound %q; want the drains named", got)
	}
}

// TestNoiseOfTrial: a variant's overrides of a noise's policy, priority
// and duty apply; one explain cannot read is named in a note; the
// trial's observed duty is kept; odd paths are ignored.
func TestNoiseOfTrial(t *testing.T) {
	spec := ownNoiseOf(results.Spec(hogSpec))
	if len(spec) != 2 {
		t.Fatalf("spec noise %+v", spec)
	}
	if diff := cmp.Diff(hog(), spec[1]); diff != "" {
		t.Fatalf("spec noise[1] (-want +got):\n%s", diff)
	}
	tr := results.Trial{Variant: "v", Noise: []results.Noise{{Duty: 1}, {Duty: 0.09}}, Overrides: map[string]string{
		"noise[1].duty.on": "1ms", "noise[1].duty.off": "16ms", "noise[1].priority": "70", "noise[1].cpus": "[0]",
		"noise[7].priority": "1", "noise[x].priority": "1", "noise[-1].policy": "rr", "readers[0].method": "recvmsg"}}
	got, notes := noiseOfTrial(tr, spec)
	if n := got[1]; n.OnNs != 1e6 || n.OffNs != 16e6 || n.Priority != 70 || n.DutyObserved != 0.09 {
		t.Errorf("noise[1] as run %+v; want on 1ms off 16ms, priority 70, observed duty 0.09", n)
	}
	if spec[1].Priority != 90 {
		t.Error("noiseOfTrial changed the scenario's noise")
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "noise[1].cpus=[0]") {
		t.Errorf("notes %q; want one on noise[1].cpus", notes)
	}
	for _, odd := range []string{"", "null", "[]", `{"noise":7}`, `{"noise":[{"duty":{"on":"-3ms","off":"x"}}]}`, `{"noise":[{"duty":{"on":1e30,"off":-5}}]}`} {
		for _, n := range ownNoiseOf(results.Spec(odd)) {
			if n.OnNs < 0 || n.OffNs < 0 {
				t.Errorf("%s: negative duty %+v", odd, n)
			}
		}
	}
}

// FuzzPhaseCheck: any duty cycle and any deadlines and latencies, through
// the whole wakeup analysis and its text, never panic.
func FuzzPhaseCheck(f *testing.F) {
	f.Add(int64(3e6), int64(27e6), int64(1e9), int64(1e7), int64(500000), uint8(3))
	f.Add(int64(1), int64(1), int64(-1e9), int64(-7), int64(-1), uint8(1))
	f.Add(int64(1<<62), int64(1<<62), int64(1<<62), int64(1<<40), int64(1<<62), uint8(0))
	f.Add(int64(5), int64(1<<62), int64(0), int64(0), int64(0), uint8(255))
	f.Fuzz(func(t *testing.T, on, off, start, step, lat int64, every uint8) {
		n := hog()
		n.OnNs, n.OffNs = on, off
		var rows []record.Wakeup
		for k := range 64 {
			l := int64(1000)
			if every > 0 && k%int(every) == 0 {
				l = lat
			}
			rows = append(rows, record.Wakeup{Tick: uint64(k), DeadlineNs: start + int64(k)*step, LatencyNs: l, DrainNs: lat})
		}
		rd := results.Reader{Name: "rt", Applied: results.Applied{Thread: results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}},
			Drain: results.Latency{P90Ns: lat}}
		w := analyzeWakeups(results.Trial{}, rd, rows, nil, []OwnNoise{n})
		r := Reader{Wakeups: w, Starved: []Starved{{OwnNoise: []OwnNoise{n}, WindowNs: step}}}
		var b bytes.Buffer
		if err := Write(&b, []Reader{r}); err != nil {
			t.Fatal(err)
		}
		if err := WriteBrief(&b, []Reader{r}); err != nil {
			t.Fatal(err)
		}
	})
}
