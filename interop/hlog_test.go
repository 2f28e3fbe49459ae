package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
)

// hlogTestHist returns a 3-digit histogram (record.HDR's shape) of n
// values spread from base over a long tail by a fixed LCG.
func hlogTestHist(n int, base int64, seed uint64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(0, 10_000_000_000, 3)
	x := seed
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
		v := base + int64(x>>40)%50_000
		if x>>60 == 0 { // one in 16: tail up to ~5 ms
			v += int64(x>>33) % 5_000_000
		}
		_ = h.RecordValue(v)
	}
	return h
}

// writeHlogAt writes f as path through a results directory of its own.
func writeHlogAt(t *testing.T, path string, f *HlogFile) error {
	t.Helper()
	return WriteHlog(testutil.ResultsDir(t, filepath.Dir(path)).Dir, filepath.Base(path), f)
}

func TestHlogRoundTrip(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 250_000_000, time.UTC)
	in := &HlogFile{
		Start:    start,
		Comments: []string{"rtload: wakeup latency, values in ns"},
		Intervals: []HlogInterval{
			{Tag: "fifo/r0/reader0", StartSec: 0, LengthSec: 20, Hist: hlogTestHist(5000, 2_000, 1), MaxValueDivisor: 1e3},
			{Tag: "other policy/r1/reader,1", StartSec: 20, LengthSec: 20.5, Hist: hlogTestHist(3000, 9_000, 2), MaxValueDivisor: 1e3},
			{StartSec: 40.5, LengthSec: 1, Hist: hlogTestHist(10, 100, 3), MaxValueDivisor: 1},
		},
	}
	path := filepath.Join(t.TempDir(), "x.hlog")
	if err := writeHlogAt(t, path, in); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	wantHead := []string{
		"#[rtload: wakeup latency, values in ns]",
		"#[Histogram log format version 1.3]",
		"#[StartTime: 1772366400.250 (seconds since epoch), Sun Mar 01 12:00:00 UTC 2026]",
		"#[BaseTime: 1772366400.250 (seconds since epoch)]",
		`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`,
	}
	if diff := cmp.Diff(wantHead, lines[:5]); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(lines[5], "Tag=fifo/r0/reader0,0.000,20.000,") || !strings.Contains(lines[5], ",HISTFAAA") {
		t.Errorf("first interval line %.80q, want Tag=fifo/r0/reader0,0.000,20.000,<max>,HISTFAAA…", lines[5])
	}

	got, err := ReadHlogFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Start.Equal(start) {
		t.Errorf("Start %v, want %v", got.Start, start)
	}
	if diff := cmp.Diff(in.Comments, got.Comments); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
	if len(got.Intervals) != len(in.Intervals) {
		t.Fatalf("%d intervals, want %d", len(got.Intervals), len(in.Intervals))
	}
	wantTags := []string{"fifo/r0/reader0", "other_policy/r1/reader_1", ""}
	for i, w := range in.Intervals {
		g := got.Intervals[i]
		if g.Tag != wantTags[i] || g.StartSec != w.StartSec || g.LengthSec != w.LengthSec || g.MaxValueDivisor != w.MaxValueDivisor {
			t.Errorf("interval %d: tag %q start %v length %v divisor %v, want %q %v %v %v",
				i, g.Tag, g.StartSec, g.LengthSec, g.MaxValueDivisor, wantTags[i], w.StartSec, w.LengthSec, w.MaxValueDivisor)
		}
		if g.Hist.TotalCount() != w.Hist.TotalCount() {
			t.Errorf("interval %d: count %d, want %d", i, g.Hist.TotalCount(), w.Hist.TotalCount())
		}
		for _, q := range []float64{0, 50, 90, 99, 99.9, 100} {
			a, b := w.Hist.ValueAtQuantile(q), g.Hist.ValueAtQuantile(q)
			if !w.Hist.ValuesAreEquivalent(a, b) {
				t.Errorf("interval %d: p%v = %d, want %d (within HDR precision)", i, q, b, a)
			}
		}
		if !w.Hist.Equals(g.Hist) {
			t.Errorf("interval %d: histogram differs after the round trip", i)
		}
	}

	// The briefer pair reads and writes the same intervals.
	ivs, err := ReadHlog(path)
	if err != nil || len(ivs) != 3 {
		t.Fatalf("ReadHlog: %d intervals, %v", len(ivs), err)
	}
	bare := filepath.Join(t.TempDir(), "bare.hlog")
	if err := writeHlogAt(t, bare, &HlogFile{Intervals: ivs}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(bare); !strings.HasPrefix(string(b), "#[Histogram log format version 1.3]\n\"StartTimestamp\"") {
		t.Errorf("WriteHlog without start: got %.120q", b)
	}
}

// TestHlogInteropWithLibrary reads rtload's log with hdrhistogram-go's
// HistogramLogReader, and the library writer's log with ReadHlog.
func TestHlogInteropWithLibrary(t *testing.T) {
	h1, h2 := hlogTestHist(2000, 5_000, 7), hlogTestHist(500, 50_000, 8)
	path := filepath.Join(t.TempDir(), "x.hlog")
	err := writeHlogAt(t, path, &HlogFile{
		Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Intervals: []HlogInterval{
			{Tag: "a/r0/x", StartSec: 0, LengthSec: 2, Hist: h1, MaxValueDivisor: 1e3},
			{Tag: "a/r1/x", StartSec: 2, LengthSec: 2, Hist: h2, MaxValueDivisor: 1e3},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lr := hdrhistogram.NewHistogramLogReader(bytes.NewReader(data))
	var tags []string
	var counts []int64
	for range 10 {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		tags = append(tags, h.Tag())
		counts = append(counts, h.TotalCount())
		if h.Tag() == "a/r1/x" && h.StartTimeMs() != 1772366400_000+2000 {
			t.Errorf("library reader: a/r1/x starts at %d ms, want StartTime + 2 s", h.StartTimeMs())
		}
	}
	if diff := cmp.Diff([]string{"a/r0/x", "a/r1/x"}, tags); diff != "" {
		t.Errorf("library reader tags (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{2000, 500}, counts); diff != "" {
		t.Errorf("library reader counts (-want +got):\n%s", diff)
	}

	var b bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&b)
	_ = w.OutputLogFormatVersion()
	_ = w.OutputStartTime(1772366400_000)
	_ = w.OutputLegend()
	h1.SetTag("lib")
	h1.SetStartTimeMs(1000)
	h1.SetEndTimeMs(3500)
	if err := w.OutputIntervalHistogram(h1); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(t.TempDir(), "lib.hlog")
	if err := os.WriteFile(lib, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ivs, err := ReadHlog(lib)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 1 || ivs[0].Tag != "lib" || ivs[0].StartSec != 1 || ivs[0].LengthSec != 2.5 ||
		ivs[0].MaxValueDivisor != 1e6 || !ivs[0].Hist.Equals(h1) {
		t.Errorf("library log read as %+v, want tag lib, 1 s + 2.5 s, divisor 1e6, same histogram", ivs)
	}
}

func TestReadHlogErrors(t *testing.T) {
	enc, err := hlogTestHist(10, 1000, 1).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, text, want string
	}{
		// The whole file parses; the bad line is the third.
		{"tag without interval", "#[x]\n\"StartTimestamp\"\nTag=abc\n", "bad.hlog:3: tag without an interval"},
		{"three fields", "0.0,1.0,2.0\n", "bad.hlog:1: interval line has 3 fields"},
		{"bad start", "zero,1.0,2.0," + string(enc) + "\n", `bad.hlog:1: start: strconv.ParseFloat: parsing "zero"`},
		{"bad payload", "0.0,1.0,2.0,HISTnotbase64\n", "bad.hlog:1: histogram:"},
		{"bad start time", "#[StartTime: soon (seconds since epoch)]\n", "bad.hlog:1: StartTime:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.hlog")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadHlog(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestWriteHlogErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.hlog")
	err := writeHlogAt(t, path, &HlogFile{Intervals: []HlogInterval{{Tag: "a"}}})
	if err == nil || !strings.Contains(err.Error(), `interval 0 (tag "a"): nil histogram`) {
		t.Errorf("nil histogram: err %v", err)
	}
	err = writeHlogAt(t, path, &HlogFile{Comments: []string{"two\nlines"}})
	if err == nil || !strings.Contains(err.Error(), "line break") {
		t.Errorf("comment with newline: err %v", err)
	}
	if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
		t.Errorf("failed writes left %s behind", path)
	}
}
