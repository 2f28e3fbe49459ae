package interop

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// interopSummary is 2 variants × 1 round, two readers each; the second
// reader of the second trial has no HDR data (an old summary) and is
// skipped.
func interopSummary() *results.Summary {
	s := &results.Summary{
		Version: results.SummaryVersion, Scenario: "interop",
		Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Clock: results.ClockInfo{Kind: "tsc", Unit: "TSC ticks", Hz: 2_995_200_000},
	}
	for i, v := range []string{"recvfrom", "recvmsg"} {
		tr := results.Trial{Index: i, Round: 0, Variant: v, DurationNs: int64(1500 * time.Millisecond)}
		for j, name := range []string{"drain0", "drain1"} {
			r := results.Reader{Name: name,
				WakeupLatency: testutil.Latency(1000, 2_000+int64(1000*i+100*j), 37),
				PerCallTicks:  testutil.TickStats(5000, 1_200+uint64(i), 3),
			}
			if i == 1 && j == 1 {
				r.WakeupLatency.HDR, r.PerCallTicks.HDR = "", ""
			}
			tr.Readers = append(tr.Readers, r)
		}
		s.Trials = append(s.Trials, tr)
	}
	// A 2.5 ms wakeup stretches the cyclictest file to 3000 rows.
	s.Trials[1].Readers[0].WakeupLatency = testutil.Latency(3, 2_000, 1_249_000)
	return s
}

func TestWriteInterop(t *testing.T) {
	dir := t.TempDir()
	s := interopSummary()
	names, err := WriteInterop(testutil.ResultsDir(t, dir).Dir, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"wakeup.hlog", "per-call.hlog", "wakeup-cyclictest.txt"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	wantTags := []string{"recvfrom/r0/drain0", "recvfrom/r0/drain1", "recvmsg/r0/drain0"}
	src := []results.Reader{s.Trials[0].Readers[0], s.Trials[0].Readers[1], s.Trials[1].Readers[0]}

	for _, tc := range []struct {
		file, comment string
		divisor       float64
		quantity      func(results.Reader, results.Quantity) float64
	}{
		{WakeupHlogFile, "#[rtload: wakeup latency, values in ns]", WakeupMaxDivisor,
			func(r results.Reader, q results.Quantity) float64 { return r.WakeupLatency.Ns(q) }},
		{PerCallHlogFile, "#[rtload: per-call cost, values in TSC ticks at 2995200000 Hz]", PerCallMaxDivisor,
			func(r results.Reader, q results.Quantity) float64 { return r.PerCallTicks.Ticks(q) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(string(raw), "\n"); first != tc.comment {
				t.Errorf("first line %q, want %q", first, tc.comment)
			}
			f, err := ReadHlogFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !f.Start.Equal(s.Start) {
				t.Errorf("start %v, want %v", f.Start, s.Start)
			}
			if len(f.Intervals) != len(wantTags) {
				t.Fatalf("%d intervals, want %d", len(f.Intervals), len(wantTags))
			}
			wantStart := []float64{0, 0, 1.5}
			for i, iv := range f.Intervals {
				if iv.Tag != wantTags[i] || iv.StartSec != wantStart[i] || iv.LengthSec != 1.5 || iv.MaxValueDivisor != tc.divisor {
					t.Errorf("interval %d: %q at %v for %v, divisor %v; want %q at %v for 1.5, divisor %v",
						i, iv.Tag, iv.StartSec, iv.LengthSec, iv.MaxValueDivisor, wantTags[i], wantStart[i], tc.divisor)
				}
				// Every number reads back, the max exactly (Interval_Max), the
				// mean (of bucket midpoints in a histogram) to 1/1000.
				got := results.LatencyFromHistogram(iv.Hist, iv.Max)
				for _, q := range results.AllQuantities {
					if want := tc.quantity(src[i], q); got.Ns(q) != want && !(q == results.Mean && math.Abs(got.Ns(q)-want) <= want/1000) {
						t.Errorf("interval %d %s: %v in the hlog, %v in the summary", i, q, got.Ns(q), want)
					}
				}
			}
		})
	}

	t.Run(WakeupCyclictestFile, func(t *testing.T) {
		fd, err := os.Open(filepath.Join(dir, WakeupCyclictestFile))
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		cols, meta, err := ReadCyclictestHist(fd)
		if err != nil {
			t.Fatal(err)
		}
		if meta.Buckets != 3000 {
			t.Errorf("%d rows, want 3000 (max 2.5 ms rounded up)", meta.Buckets)
		}
		var got []string
		for _, c := range cols {
			got = append(got, c.Name)
		}
		if diff := cmp.Diff(wantTags, got); diff != "" {
			t.Errorf("columns (-want +got):\n%s", diff)
		}
		for i, c := range cols {
			// Max Latencies is the exact max truncated to µs, as cyclictest truncates.
			l := src[i].WakeupLatency
			if uint64(c.Hist.TotalCount()) != l.Count || meta.Min[i] != uint64(l.MinNs/1000) || meta.Max[i] != uint64(l.MaxNs/1000) {
				t.Errorf("column %d: count %d, min %d µs, max %d µs; want %d, %d, %d",
					i, c.Hist.TotalCount(), meta.Min[i], meta.Max[i], l.Count, l.MinNs/1000, l.MaxNs/1000)
			}
		}
	})
}

func TestWriteInteropEmptyAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	s := interopSummary()
	for i := range s.Trials {
		for j := range s.Trials[i].Readers {
			s.Trials[i].Readers[j].WakeupLatency.HDR = ""
		}
	}
	names, err := WriteInterop(testutil.ResultsDir(t, dir).Dir, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"per-call.hlog"}, names); diff != "" {
		t.Errorf("names without wakeup HDR (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, WakeupHlogFile)); !os.IsNotExist(err) {
		t.Errorf("wakeup.hlog written without data (stat: %v)", err)
	}

	s.Trials[1].Readers[0].PerCallTicks.HDR = "HISTnot-base64"
	_, err = WriteInterop(testutil.ResultsDir(t, t.TempDir()).Dir, s)
	if err == nil || !strings.Contains(err.Error(), "write interop: trial 1 reader drain0: per-call ticks: decode hdr:") {
		t.Errorf("corrupt HDR: err %v", err)
	}
}

func TestCyclictestBuckets(t *testing.T) {
	for _, tc := range []struct {
		maxUs   uint64
		columns int
		want    int
	}{
		{0, 1, 1000},          // empty: the default
		{998, 1, 1000},        // fits
		{999, 1, 1000},        // last row
		{1000, 1, 2000},       // would overflow: next thousand
		{2500, 1, 3000},       //
		{99_999, 2, 100_000},  // the cap exactly
		{500_000, 2, 100_000}, // capped: the rest are overflows
		// Issue 34: 28 columns and a 100 ms wakeup wrote 100,000 rows
		// (19.5 MB); rows × columns now stay within CyclictestMaxCells.
		{100_000, 28, 9000},
		{5_000, 28, 6000},       // fits under the cell cap: as before
		{100_000, 10_000, 1000}, // never below the default
		{500_000, 0, 100_000},   // no columns: only the row cap
	} {
		if got := cyclictestBuckets(tc.maxUs, tc.columns); got != tc.want {
			t.Errorf("cyclictestBuckets(%d, %d columns) = %d, want %d", tc.maxUs, tc.columns, got, tc.want)
		}
	}
}

// TestWriteInteropBoundedCyclictest (issue 34 row 14): 14 rounds × 2
// variants with a 100 ms wakeup in one trial: wakeup-cyclictest.txt stays
// under 2 MB (main wrote 100,000 rows × 28 columns, 19.5 MB), the long
// wakeup counted as an overflow with its max still in "Max Latencies".
func TestWriteInteropBoundedCyclictest(t *testing.T) {
	s := &results.Summary{Version: results.SummaryVersion, Scenario: "interop", Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Clock: results.ClockInfo{Kind: "tsc", Unit: "TSC ticks", Hz: 2_995_200_000}}
	for i := range 28 {
		r := results.Reader{Name: "rt", WakeupLatency: testutil.Latency(1000, 20_000, 30), PerCallTicks: testutil.TickStats(5000, 1_200, 3)}
		if i == 5 {
			r.WakeupLatency = testutil.Latency(3, 20_000, 50_000_000) // the last 100.02 ms
		}
		s.Trials = append(s.Trials, results.Trial{Index: i, Round: i / 2, Variant: []string{"a", "b"}[i%2], DurationNs: int64(4 * time.Second), Readers: []results.Reader{r}})
	}
	dir := t.TempDir()
	if _, err := WriteInterop(testutil.ResultsDir(t, dir).Dir, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, WakeupCyclictestFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes", WakeupCyclictestFile, len(b))
	if len(b) > 2<<20 {
		t.Errorf("%s is %d bytes, want at most 2 MiB", WakeupCyclictestFile, len(b))
	}
	cols, meta, err := ReadCyclictestHist(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 28 || meta.Max[5] < 100_000 || meta.Overflows[5] == 0 {
		t.Errorf("%d columns, column 5: max %d µs, %d overflows; want 28, ≥ 100000 µs and the long wakeup an overflow", len(cols), meta.Max[5], meta.Overflows[5])
	}
}
