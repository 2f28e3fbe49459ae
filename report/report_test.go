package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

func TestTableSeed(t *testing.T) {
	// The seed's recvfrom columns, "group/sub" labels as the seed's header.
	cols := []Column{
		{Label: "recvfrom/unhard", Hist: seedSnapshot(0, all, whole, true)},
		{Label: "recvfrom/hard", Hist: seedSnapshot(1, all, whole, true)},
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
		cols = append(cols, Column{Label: l, Hist: seedSnapshot(i, all, whole, true)})
	}
	var b bytes.Buffer
	if err := Table(&b, cols, TableOptions{Unit: "cycles"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "table_seed4", b.Bytes())
}

func TestTableShapes(t *testing.T) {
	lay := func() *record.Linear { return record.NewLinear(seedWidth, seedOrigin, seedOverflow) }
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
	if err := Report(&b, fixture()); err != nil {
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
	s := fixture()
	// Two variants, one round, two readers each (four columns); monotonic
	// clock; degraded, stopped early, and a GC in one measured window.
	s.Trials = s.Trials[:2]
	for i := range s.Trials {
		tr := &s.Trials[i]
		r2 := tr.Readers[0]
		r2.Name = "second"
		r2.Endpoint = "other"
		r2.Applied = results.Applied{TID: 99, Policy: "SCHED_OTHER", Nice: -5, CPUs: []int{2, 3, 0, 1, 6}}
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
		"trial 1 (recvmsg round 1): 1",
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
		if w := runeLen(line); w > n {
			t.Errorf("line of %d runes > %d: %q", w, n, line)
		}
	}
}

func TestReportLayoutMismatch(t *testing.T) {
	s := fixture()
	s.Trials[2].Readers[0].PerCall.All = record.NewLinear(100, 0, 1000).Snapshot("ticks")
	err := Report(&bytes.Buffer{}, s)
	if err == nil || !strings.Contains(err.Error(), "report: recvfrom round 2: per-call all histogram layout") {
		t.Fatalf("err = %v", err)
	}
}

func TestPercentile(t *testing.T) {
	h := record.NewLinear(seedWidth, seedOrigin, seedOverflow)
	for range 10 {
		h.Record(10) // bucket 0: [0,64)
	}
	for range 80 {
		h.Record(2000) // bucket 1984
	}
	for range 10 {
		h.Record(100000) // overflow
	}
	s := h.Snapshot("ticks")
	over := record.NewLinear(seedWidth, seedOrigin, seedOverflow)
	over.Record(9000)
	for _, tc := range []struct {
		name string
		s    record.Snapshot
		q    float64
		want uint64
	}{
		{"empty is 0", record.NewLinear(seedWidth, seedOrigin, seedOverflow).Snapshot(""), 0.5, 0},
		{"zero snapshot is 0", record.Snapshot{}, 0.99, 0},
		{"q 0 is the first populated bucket", s, 0, 0},
		{"negative clamps to 0", s, -1, 0},
		{"NaN counts as 0", s, math.NaN(), 0},
		{"last sample of bucket 0", s, 0.10, 0},
		{"first sample of the next bucket", s, 0.11, 1984},
		{"median", s, 0.5, 1984},
		{"last sample below overflow", s, 0.90, 1984},
		{"first overflow sample gives Overflow", s, 0.91, seedOverflow},
		{"q 1 is the last sample", s, 1, seedOverflow},
		{"q above 1 clamps", s, 7, seedOverflow},
		{"only overflow", over.Snapshot(""), 0.5, seedOverflow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := results.Percentile(tc.s, tc.q); got != tc.want {
				t.Errorf("Percentile(q=%v) = %d, want %d", tc.q, got, tc.want)
			}
		})
	}
}

func TestLatencyFromHDR(t *testing.T) {
	if got := results.LatencyFromHDR(nil); got != (results.Latency{}) {
		t.Errorf("nil: %+v", got)
	}
	if got := results.LatencyFromHDR(hdrhistogram.New(1, 1000, 3)); got != (results.Latency{}) {
		t.Errorf("empty: %+v", got)
	}
	h := hdrhistogram.New(1, 10_000_000, 3)
	for v := int64(1); v <= 1000; v++ {
		h.RecordValue(v) // exact below 2048 at 3 digits
	}
	got := results.LatencyFromHDR(h)
	want := results.Latency{Count: 1000, MinNs: 1, MeanNs: 500.5, P50Ns: 500, P90Ns: 900, P99Ns: 990, P999Ns: 999, MaxNs: 1000}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(results.Latency{}, "HDR")); diff != "" {
		t.Errorf("LatencyFromHDR (-want +got):\n%s", diff)
	}
	if got.HDR == "" {
		t.Error("HDR encoding empty")
	}
}

func TestMergeLatency(t *testing.T) {
	a, b := latencyNs(100, 1000, 10), latencyNs(100, 5000, 10)
	both := record.NewHDR(10_000_000_000)
	for i := range 100 {
		both.Record(uint64(1000 + 10*i))
		both.Record(uint64(5000 + 10*i))
	}
	got, exact := results.MergeLatency(a, results.Latency{}, b)
	if !exact {
		t.Error("merge with HDR encodings not exact")
	}
	if diff := cmp.Diff(results.LatencyFromHDR(both.Histogram()), got); diff != "" {
		t.Errorf("exact merge (-want +got):\n%s", diff)
	}

	a.HDR, b.HDR = "", ""
	got, exact = results.MergeLatency(a, b)
	if exact {
		t.Error("merge without HDR claims exact")
	}
	want := results.Latency{
		Count: 200, MinNs: a.MinNs, MeanNs: (a.MeanNs + b.MeanNs) / 2,
		P50Ns: b.P50Ns, P90Ns: b.P90Ns, P99Ns: b.P99Ns, P999Ns: b.P999Ns, MaxNs: b.MaxNs,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("worst-round merge (-want +got):\n%s", diff)
	}
}

func TestSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := fixture()
	at := s.Start.Add(time.Minute)
	s.Stopped, s.StoppedAt = true, &at
	if err := results.WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Join(dir, results.SummaryFile)} {
		got, err := results.ReadSummary(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s, got); diff != "" {
			t.Errorf("ReadSummary(%s) (-want +got):\n%s", path, diff)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want only %s (temp file left?)", len(entries), results.SummaryFile)
	}
	// Overwrite keeps a single file; a zero version is written as current.
	s.Version = 0
	if err := results.WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	if s.Version != 0 {
		t.Error("WriteSummary modified its argument")
	}
	got, err := results.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != results.SummaryVersion {
		t.Errorf("version %d, want %d", got.Version, results.SummaryVersion)
	}
}

func TestWriteSummaryMissingDir(t *testing.T) {
	err := results.WriteSummary(filepath.Join(t.TempDir(), "nope"), fixture())
	if err == nil || !strings.Contains(err.Error(), "write summary:") {
		t.Fatalf("err = %v", err)
	}
}

func TestReadSummaryErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body, wantErr string
	}{
		{"syntax error names file line col", "{\n  \"version\": 1,\n  x\n}", "summary.json:3:3: invalid character 'x'"},
		{"type error", "{\n  \"version\": \"one\"\n}", "summary.json:2:"},
		{"truncated", "{\"version\": 1,", "summary.json:1:"},
		{"unknown version", "{\"version\": 9}", "summary version 9 not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, results.SummaryFile)
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := results.ReadSummary(dir)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want it to name %s and contain %q", err, path, tc.wantErr)
			}
		})
	}
	if _, err := results.ReadSummary(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestWakeupCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wakeups-A.csv")
	w, err := results.CreateWakeupCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []record.Wakeup{
		{Tick: 0, DeadlineNs: 1_000_000_000, LatencyNs: 2345, DrainNs: 712_000, Messages: 225, Calls: 675, EAGAIN: 450},
		{Tick: 1, DeadlineNs: 1_010_000_000, LatencyNs: -3, DrainNs: 0, Messages: 0, Calls: 450, EAGAIN: 450},
		{Tick: math.MaxUint64, DeadlineNs: math.MaxInt64, LatencyNs: math.MinInt64, DrainNs: 1, Messages: math.MaxUint32, Calls: math.MaxUint32, EAGAIN: 7, Missed: math.MaxUint32, VolCS: math.MaxUint32, InvolCS: 3},
	}
	for i := range want {
		if err := w.Write(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	r := want[0]
	allocs := testing.AllocsPerRun(1000, func() {
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Write allocs %v per row, want 0", allocs)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Write(&r); err == nil || !strings.Contains(err.Error(), "file already closed") {
		t.Errorf("Write after Close: %v", err)
	}
	got, err := results.ReadWakeupCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want)+1001 {
		t.Fatalf("read %d rows, want %d", len(got), len(want)+1001)
	}
	if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := results.WakeupCSVHeader + "\n0,1000000000,2345,712000,225,675,450,0,0,0\n1,1010000000,-3,0,0,450,450,0,0,0\n"
	if !strings.HasPrefix(string(raw), head) {
		t.Errorf("file starts %q, want %q", raw[:len(head)], head)
	}
}

// TestReadWakeupCSVV1 reads a log written before the context-switch
// columns: both readers take it, with VolCS and InvolCS 0.
func TestReadWakeupCSVV1(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.csv")
	if err := os.WriteFile(path, []byte(results.WakeupCSVHeaderV1+"\n7,1000,2345,712000,225,675,450,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []record.Wakeup{{Tick: 7, DeadlineNs: 1000, LatencyNs: 2345, DrainNs: 712000, Messages: 225, Calls: 675, EAGAIN: 450, Missed: 1}}
	got, err := results.ReadWakeupCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadWakeupCSV (-want +got):\n%s", diff)
	}
	got, _, err = results.ReadWakeupLog(dir, "w")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadWakeupLog (-want +got):\n%s", diff)
	}
}

func TestReadWakeupCSVErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, wantErr string }{
		{"empty", "", "empty, want header"},
		{"bad header", "a,b\n", ":1: header"},
		{"short row", results.WakeupCSVHeader + "\n1,2,3\n", ":2: 3 fields, want 10"},
		{"bad number", results.WakeupCSVHeader + "\n1,2,x,4,5,6,7,8,9,10\n", ":2: latency_ns:"},
		{"uint32 overflow", results.WakeupCSVHeader + "\n1,2,3,4,4294967296,6,7,8,9,10\n", ":2: messages:"},
		{"bad invol_cs", results.WakeupCSVHeader + "\n1,2,3,4,5,6,7,8,9,-1\n", ":2: invol_cs:"},
		{"v1 header, v2 row", results.WakeupCSVHeaderV1 + "\n1,2,3,4,5,6,7,8,9,10\n", ":2: 10 fields, want 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "w.csv")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := results.ReadWakeupCSV(path)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestSummaryGolden pins the summary.json format, the results contract.
// HDR encodings are blanked: their zlib bytes depend on compress/flate.
func TestSummaryGolden(t *testing.T) {
	s := fixture()
	for i := range s.Trials {
		tr := &s.Trials[i]
		tr.Readers = tr.Readers[:1]
		r := &tr.Readers[0]
		r.WakeupLatency.HDR, r.Drain.HDR, r.OneWayDelay.HDR = "", "", ""
		tr.Traffic[0].SendLag.HDR = ""
		// Keep the golden short: only the first round's per-call data.
		if i > 0 {
			r.PerCall = results.PerCall{}
		}
	}
	dir := t.TempDir()
	if err := results.WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.json", got)
}
