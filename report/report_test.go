package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

func TestTableSeed(t *testing.T) {
	// The seed's recvfrom columns, "group/sub" labels as the seed's header.
	cols := []Column{
		{Label: "recvfrom/unhard", Hist: testutil.SeedSnapshot(0, testutil.SeedAll, testutil.SeedWhole, true)},
		{Label: "recvfrom/hard", Hist: testutil.SeedSnapshot(1, testutil.SeedAll, testutil.SeedWhole, true)},
	}
	var b bytes.Buffer
	if err := Table(&b, cols, TableOptions{Title: "per-call cost, all calls (data + EAGAIN)", Unit: "cycles"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "table_seed", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"   1472:         29          1\n", // the seed's first row
		"   8128:       1264       1266\n", // last row before overflow
		"  8256+:      19252      19450\n",
		"  Total:    2847707    2863582\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks seed row %q", want)
		}
	}
}

func TestTableSeedFour(t *testing.T) {
	var cols []Column
	for i, l := range []string{"recvfrom/unhard", "recvfrom/hard", "recvmsg/unhard", "recvmsg/hard"} {
		cols = append(cols, Column{Label: l, Hist: testutil.SeedSnapshot(i, testutil.SeedAll, testutil.SeedWhole, true)})
	}
	var b bytes.Buffer
	if err := Table(&b, cols, TableOptions{Unit: "cycles"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "table_seed4", b.Bytes())
}

func TestTableShapes(t *testing.T) {
	lay := func() *record.Linear {
		return record.NewLinear(testutil.SeedWidth, testutil.SeedOrigin, testutil.SeedOverflow)
	}
	empty := lay().Snapshot("ticks")
	sparse := lay()
	sparse.Record(1500) // bucket 1472
	sparse.Record(3100) // bucket 3008; rows in between printed empty
	other := record.NewLinear(100, 0, 1000).Snapshot("ticks")
	for _, tc := range []struct {
		name    string
		cols    []Column
		want    []string // substrings of the output
		wantErr string
	}{
		{
			name: "all empty prints header and no samples",
			cols: []Column{{Label: "a", Hist: empty}, {Label: "b", Hist: record.Snapshot{}}},
			want: []string{"(no samples)\n"},
		},
		{
			name: "empty middle rows kept, trailing rows to the overflow edge",
			cols: []Column{{Label: "a", Hist: sparse.Snapshot("ticks")}, {Label: "b", Hist: empty}},
			want: []string{"   1472:          1          0\n   1600:          0          0\n", "   8128:          0          0\n  8256+:          0          0\n", "  Total:          2          0\n"},
		},
		{
			name:    "mismatched layouts",
			cols:    []Column{{Label: "a", Hist: empty}, {Label: "b", Hist: other}},
			wantErr: "table: column b: layout (width 100, origin 0, overflow 1000, 11 buckets) differs from (width 128, origin 64, overflow 8256, 65 buckets)",
		},
		{
			name:    "no columns",
			wantErr: "table: no columns",
		},
		{
			name: "wide labels widen columns",
			cols: []Column{{Label: "a-very-long-variant-label", Hist: sparse.Snapshot("ticks")}},
			want: []string{" ticks  |a-very-long-variant-label\n", "   1472:                          1\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Table(&b, tc.cols, TableOptions{Unit: "ticks"})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestReport(t *testing.T) {
	var b bytes.Buffer
	if err := Report(&b, testutil.SeedSummary()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"clock: tsc, 1 tick = 1/2.095 GHz (TSC ticks are not core cycles)",
		"(2 rounds merged)",
		"  Total:    2863582    2877088\n", // merged rounds = the seed's "hard" totals
		"gc during measured windows: 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	checkWidth(t, out, 100)
}

func TestReportReadersDegraded(t *testing.T) {
	s := testutil.SeedSummary()
	// Two variants, one round, two readers each (four columns); monotonic
	// clock; degraded, stopped early, and a GC in one measured window.
	s.Trials = s.Trials[:2]
	for i := range s.Trials {
		tr := &s.Trials[i]
		r2 := tr.Readers[0]
		r2.Name = "second"
		r2.Endpoint = "other"
		r2.Applied = results.Applied{Thread: results.Thread{TID: 99, Policy: "SCHED_OTHER", Nice: -5, CPUs: []int{2, 3, 0, 1, 6}}}
		tr.Readers = append(tr.Readers, r2)
	}
	s.Trials[1].GCAfter, s.Trials[1].GCDuring = 4, 1
	s.Clock = results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9, Fallbacks: []string{"tsc: not supported: no invariant TSC"}}
	s.Degraded = true
	s.DegradedReasons = []string{"sched_setattr(SCHED_FIFO 80): needs CAP_SYS_NICE"}
	s.Stopped = true
	at := s.Start.Add(30 * time.Second)
	s.StoppedAt = &at
	var b bytes.Buffer
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "report_readers", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"clock: monotonic, 1 tick = 1 ns",
		"*** DEGRADED",
		"*** STOPPED EARLY at 2026-03-01T12:00:30Z",
		"|      recvfrom       |       recvmsg\n", // variant over its readers
		"   drain |   second |",
		"OTHER nice -5",
		"0-3,6",
		"WARNING: 1 GC cycle during measured windows (want 0)",
		"trial 2 (recvmsg, round 2): 1", // counted from 1, as every other line counts trials
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	checkWidth(t, out, 100)
}

// checkWidth fails for any line wider than n runes.
func checkWidth(t *testing.T, out string, n int) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if w := Width(line); w > n {
			t.Errorf("line of %d runes > %d: %q", w, n, line)
		}
	}
}

func TestReportLayoutMismatch(t *testing.T) {
	s := testutil.SeedSummary()
	s.Trials[2].Readers[0].PerCall.All = record.NewLinear(100, 0, 1000).Snapshot("ticks")
	err := Report(&bytes.Buffer{}, s)
	if err == nil || !strings.Contains(err.Error(), "report: recvfrom round 2: per-call all histogram layout") {
		t.Fatalf("err = %v", err)
	}
}

// TestReportIncomplete: a checkpoint (a run killed, or one whose final
// summary could not be written) says INCOMPLETE, as compare does.
func TestReportIncomplete(t *testing.T) {
	s := testutil.SeedSummary()
	var b bytes.Buffer
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "INCOMPLETE") {
		t.Errorf("finished run says INCOMPLETE")
	}
	s.InProgress = true
	b.Reset()
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	if want := "*** INCOMPLETE: summary.json is a checkpoint written at 2026-03-01T12:01:25Z"; !strings.Contains(b.String(), want) {
		t.Errorf("report of a checkpoint lacks %q:\n%s", want, b.String()[:400])
	}
}

// TestReportLogDrops: the report's drop rows are summary.json's fields.
func TestReportLogDrops(t *testing.T) {
	s := testutil.SeedSummary()
	s.Trials = s.Trials[:1]
	r := &s.Trials[0].Readers[0]
	r.RingDropped, r.WakeupLogDropped, r.SpikesDropped = 3, 1696, 7
	var b bytes.Buffer
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"log rows dropped (ring full)", "log rows deleted (log_limit)", "spikes not logged (cap)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, row := range []struct{ name, value string }{{"(ring full)", "3"}, {"(log_limit)", "1696"}, {"(cap)", "7"}} {
		i := strings.Index(b.String(), row.name)
		line := b.String()[i:]
		line = line[:strings.IndexByte(line, '\n')]
		if f := strings.Fields(line); f[len(f)-1] != row.value {
			t.Errorf("row %q: %q, want %s", row.name, line, row.value)
		}
	}
}

// TestReportPerCallCounters: a reader's per-call hardware counters get a
// block of their own (mean and percentiles per class, rounds merged), and
// a run without them prints none.
func TestReportPerCallCounters(t *testing.T) {
	s := testutil.SeedSummary()
	var b bytes.Buffer
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "per recv call (hardware counter") {
		t.Fatalf("a run without counters prints a counter block")
	}
	h := record.NewHDR(record.EventMax)
	for i := range 100 {
		h.Record(uint64(2000 + i))
	}
	all := results.CountStatsOf(h, true)
	for i := range s.Trials {
		for j := range s.Trials[i].Readers {
			s.Trials[i].Readers[j].PerCallCounters = []results.PerCallCounter{{Event: "instructions", All: all, Data: all}}
		}
	}
	b.Reset()
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i := strings.Index(out, "instructions per recv call")
	if i < 0 {
		t.Fatalf("no counter block:\n%s", out)
	}
	block := out[i:]
	for _, row := range []struct{ name, want string }{{"mean, all calls", "2049.5"}, {"p50, all calls", "2049.0"}, {"p50, EAGAIN calls", "–"}} {
		j := strings.Index(block, row.name)
		if j < 0 {
			t.Fatalf("counter block lacks %q:\n%s", row.name, block)
		}
		line := block[j:]
		line = line[:strings.IndexByte(line, '\n')]
		if f := strings.Fields(line); f[len(f)-1] != row.want {
			t.Errorf("row %q: %q, want last cell %s", row.name, line, row.want)
		}
	}
}

// TestReportMarks: the header names the kernel clocksource and RT
// throttling, where rtload's own threads ran, each trial marked invalid
// or with traffic not as specified, and the threads that could run on a
// reader's CPU; the traffic block gives each group's achieved and target
// rate and send lag next to the message accounting.
func TestReportMarks(t *testing.T) {
	s := testutil.SeedSummary()
	for i := range s.Trials {
		tr := &s.Trials[i]
		tf := &tr.Traffic[0]
		tf.Due = tf.Sent
		tf.Applied = &results.Applied{Thread: results.Thread{TID: 5000 + i, Policy: "SCHED_FIFO", Priority: 70, CPUs: []int{0, 1}}}
		tf.MaxSendLagNs = int64(20 * time.Millisecond)
		tr.Kernel = &results.KernelWatch{ClocksourceStart: "tsc", ClocksourceEnd: "tsc", Available: []string{"tsc", "kvm-clock"},
			RTThrottlingStart: results.RTThrottling{RuntimeUs: 950000, PeriodUs: 1000000}, KmsgWatched: true}
		tr.Housekeeping = &results.Housekeeping{CPUs: []int{0}, Threads: 9, Inherited: 2, Exempt: 7, Passes: 40}
	}
	s.Trials[0].ThreadWarnings = []string{
		"thread rtl-tx/lo450 (tid 5000, SCHED_FIFO) may run on reader CPU 1 (mask 0-1)",
		"thread rtl-nz/spin.0 (tid 5001, SCHED_OTHER) may run on reader CPU 1 (mask 0-1)",
	}
	s.Trials[1].ThreadWarnings = s.Trials[0].ThreadWarnings
	s.Trials[1].Kernel.ClocksourceEnd = "kvm-clock"
	s.Trials[1].Kernel.Events = []results.KernelEvent{{Kind: "clocksource_switch", At: 12300 * time.Millisecond, From: "tsc", To: "kvm-clock", Source: "kmsg",
		Msg: "clocksource: Switched to clocksource kvm-clock"}}
	s.Trials[1].Marks = append(s.Trials[1].Marks, results.Mark{Kind: results.MarkInvalid, Text: "clocksource changed (tsc → kvm-clock at 12.3 s)"})
	s.Trials[2].Kernel.ClocksourceStart = "kvm-clock"
	s.Trials[3].Kernel.ClocksourceStart = "kvm-clock"
	tf := &s.Trials[3].Traffic[0]
	tf.Due = tf.Sent + tf.Sent/50
	tf.RateErrorPct = (float64(tf.Sent) - float64(tf.Due)) / float64(tf.Due) * 100
	tf.SendLag = testutil.Latency(100, 1_000_000, 500_000) // p99 ≈ 50.5 ms
	s.Trials[3].Marks = append(s.Trials[3].Marks, results.Mark{Kind: results.MarkTraffic, Endpoint: "lo450", Text: "lo450: send lag p99 49.5ms > max_send_lag 20ms"})
	var b bytes.Buffer
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "report_marks", b.Bytes()) // the fixture's rounds count from 1: "round 2" is its first
	out := b.String()
	for _, want := range []string{
		"kernel clocksource: DIFFERS between trials: tsc (trials 1-2), kvm-clock (trials 3-4)\n  available: tsc, kvm-clock\n",
		"RT throttling: 950000 µs of every 1000000 µs (sched_rt_runtime_us, sched_rt_period_us)\n",
		"housekeeping: rtload's own threads confined to CPU 0 (9 moved, 2 born there; 7 exempt)\n",
		"*** INVALID: trial 2 (recvmsg, round 2): clocksource changed (tsc → kvm-clock at 12.3 s); its verdicts are undecided\n",
		"*** TRAFFIC NOT AS SPECIFIED: trial 4 (recvmsg, round 3): lo450: send lag p99 49.5ms > max_send_lag 20ms\n",
		"warning: 2 non-reader threads may run on a reader's CPU in trial 1 (recvfrom, round 2)\n  (and in 1 other trial):\n",
		"traffic to lo450 (msg/s; send lag = time sent − time due, µs)",
		"FIFO 70 cpus 0-1",
		"NO (1 of 2)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Within 100 columns but for the *** lines, which say why in full.
	var rest []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "***") {
			rest = append(rest, l)
		}
	}
	checkWidth(t, strings.Join(rest, "\n"), 100)
}

// TestHeaderTrialShape: the header says what ran: variants × rounds when
// each variant ran each round, the soak's slices when the trials are
// slices (the spec as run: in memory, or read back from summary.json), and
// each variant's rounds when a run stopped inside a round.
func TestHeaderTrialShape(t *testing.T) {
	type spec struct {
		Duration string `json:"duration"`
		Slice    string `json:"slice,omitempty"`
	}
	for _, tc := range []struct {
		name     string
		spec     any
		variants []string // one trial each, in order
		want     string
	}{
		{"rounds", spec{Duration: "4s"}, []string{"a", "b", "a", "b"}, "4 trials: 2 variants × 2 rounds\n"},
		{"soak slices", spec{Duration: "0s", Slice: "1m0s"}, []string{"a", "b", "a"}, "3 trials: 2 variants in soak slices\n"},
		{"soak slices, even", map[string]any{"duration": "0s", "slice": "10s"}, []string{"a", "b", "a", "b"}, "4 trials: 2 variants in soak slices\n"},
		{"soak, one variant", spec{Duration: "0s", Slice: "1m0s"}, []string{"a"}, "1 trial: 1 variant × 1 round\n"},
		{"stopped inside a round", spec{Duration: "4s"}, []string{"a", "b", "a"}, "3 trials: 2 variants, 1–2 rounds each\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			s := &results.Summary{}
			if err := s.SetSpec(data); err != nil {
				t.Fatal(err)
			}
			for i, v := range tc.variants {
				s.Trials = append(s.Trials, results.Trial{Index: i, Round: i / 2, Variant: v})
			}
			var b strings.Builder
			writeHeader(&b, s)
			if !strings.Contains(b.String(), "\n"+tc.want) {
				t.Errorf("header:\n%s\nwant the line %q", b.String(), tc.want)
			}
		})
	}
}

// TestReportSeccomp: a reader that ran under a seccomp filter shows it,
// as read back, under its column's per-call stats and in the brief; a run
// without one prints no such row.
func TestReportSeccomp(t *testing.T) {
	s := testutil.SeedSummary()
	var b bytes.Buffer
	if err := Report(&b, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "seccomp") {
		t.Fatalf("a run without filters prints a seccomp row")
	}
	for i := range s.Trials {
		if s.Trials[i].Variant == "recvmsg" {
			s.Trials[i].Readers[0].Seccomp = &results.Seccomp{Profile: "allow-all", Instructions: 256, Mode: 2, Filters: 1}
		}
	}
	for name, render := range map[string]func(*bytes.Buffer) error{
		"report": func(b *bytes.Buffer) error { return Report(b, s) },
		"brief":  func(b *bytes.Buffer) error { return Brief(b, s) },
	} {
		b.Reset()
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		i := strings.Index(b.String(), "seccomp (read back)")
		if i < 0 {
			t.Fatalf("%s: no seccomp row:\n%s", name, b.String())
		}
		line := b.String()[i:]
		line = line[:strings.IndexByte(line, '\n')]
		if !strings.Contains(line, "none") || !strings.Contains(line, "allow-all, 256 instructions (thread: Seccomp 2, 1 filter)") {
			t.Errorf("%s: %q, want none beside the allow-all column", name, line)
		}
	}
}
