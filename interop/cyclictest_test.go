package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
)

// ctHist returns a 3-digit ns histogram (record.HDR's shape) of values.
func ctHist(values ...int64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(0, 10_000_000_000, 3)
	for _, v := range values {
		_ = h.RecordValue(v)
	}
	return h
}

// ctRows returns the data rows of a cyclictest histogram text.
func ctRows(text string) []string {
	var rows []string
	for _, l := range strings.Split(text, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	return rows
}

func TestWriteCyclictestHist(t *testing.T) {
	cols := []CyclictestColumn{
		// 9.999 µs truncates to 9 as cyclictest does; 12 µs is the last
		// row; 13 µs and 40 µs overflow.
		{Name: "fifo/r0/reader0", Hist: ctHist(9_000, 9_999, 10_000, 12_999, 13_000, 40_000)},
		{Hist: ctHist()},
	}
	var b bytes.Buffer
	if err := WriteCyclictestHist(&b, cols, 13); err != nil {
		t.Fatal(err)
	}
	want := "# rtload column 0: fifo/r0/reader0\n" +
		"# Histogram\n" +
		"000000 000000\t000000\n000001 000000\t000000\n000002 000000\t000000\n" +
		"000003 000000\t000000\n000004 000000\t000000\n000005 000000\t000000\n" +
		"000006 000000\t000000\n000007 000000\t000000\n000008 000000\t000000\n" +
		"000009 000002\t000000\n" +
		"000010 000001\t000000\n" +
		"000011 000000\t000000\n" +
		"000012 000001\t000000\n" +
		"# Total: 000000004 000000000\n" +
		"# Min Latencies: 00009 1000000\n" +
		// (9+9+10+12+13+40)/6 = 15.5, truncated
		"# Avg Latencies: 00015 00000\n" +
		"# Max Latencies: 00040 00000\n" +
		"# Histogram Overflows: 00002 00000\n" +
		"# Histogram Overflow at cycle number:\n" +
		"# Thread 0: # 00002 others\n" +
		"# Thread 1:\n" +
		"\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name    string
		cols    []CyclictestColumn
		buckets int
		want    string
	}{
		{"no buckets", cols, 0, "0 buckets, want > 0"},
		{"no columns", nil, 10, "no columns"},
		{"name with newline", []CyclictestColumn{{Name: "a\nb"}}, 10, "line break"},
	} {
		err := WriteCyclictestHist(&b, tc.cols, tc.buckets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestCyclictestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		// Values in ns, per column.
		cols [][]int64
		// sameText: rewriting what was read gives the same bytes. Not so
		// with several overflows of different values: the text keeps only
		// their count and the max, so the rewritten Avg is a lower bound.
		sameText bool
		buckets  int
	}{
		{"in range", [][]int64{{1_500, 2_000, 2_999, 57_500, 999_999}, {0, 999, 500_000, 500_999}}, true, 1000},
		{"one overflow at the max", [][]int64{{3_000, 4_000_000}, {7_777_777}}, true, 1000},
		{"long tail overflows", [][]int64{{5_000, 1_200_000, 1_300_000, 9_876_543}}, false, 1000},
		{"empty column", [][]int64{{5_000}, {}}, true, 1000},
		// Above 1,048,576 ns HDR buckets are ≥ 1024 ns wide: rows still
		// survive, since a row's middle falls in the HDR bucket it came from.
		{"high rows, coarse HDR buckets", [][]int64{{1_048_576, 1_999_999, 2_000_000, 2_000_999, 4_444_444}}, true, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.buckets
			var in []CyclictestColumn
			for i, vs := range tc.cols {
				in = append(in, CyclictestColumn{Name: "col" + string(rune('A'+i)), Hist: ctHist(vs...)})
			}
			var first bytes.Buffer
			if err := WriteCyclictestHist(&first, in, n); err != nil {
				t.Fatal(err)
			}
			got, meta, err := ReadCyclictestHist(bytes.NewReader(first.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if meta.Buckets != n || len(got) != len(in) {
				t.Fatalf("read %d columns of %d buckets, want %d of %d", len(got), meta.Buckets, len(in), n)
			}
			for i := range in {
				if got[i].Name != in[i].Name {
					t.Errorf("column %d name %q, want %q", i, got[i].Name, in[i].Name)
				}
				if g, w := got[i].Hist.TotalCount(), in[i].Hist.TotalCount(); g != w {
					t.Errorf("column %d: %d samples, want %d", i, g, w)
				}
				c := binCyclictest(in[i].Hist, n)
				if meta.Min[i] != c.min || meta.Avg[i] != c.avg || meta.Max[i] != c.max ||
					meta.Total[i] != c.total || meta.Overflows[i] != c.overflow {
					t.Errorf("column %d meta min/avg/max/total/overflows %d/%d/%d/%d/%d, want %d/%d/%d/%d/%d", i,
						meta.Min[i], meta.Avg[i], meta.Max[i], meta.Total[i], meta.Overflows[i],
						c.min, c.avg, c.max, c.total, c.overflow)
				}
			}
			var second bytes.Buffer
			if err := WriteCyclictestHist(&second, got, n); err != nil {
				t.Fatal(err)
			}
			if tc.sameText {
				if diff := cmp.Diff(first.String(), second.String()); diff != "" {
					t.Errorf("rewrite differs (-first +second):\n%s", diff)
				}
				return
			}
			// Per-µs rows, min, max and overflow counts survive; Avg does not.
			if diff := cmp.Diff(ctRows(first.String()), ctRows(second.String())); diff != "" {
				t.Errorf("rows differ (-first +second):\n%s", diff)
			}
			_, meta2, err := ReadCyclictestHist(bytes.NewReader(second.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(meta.Max, meta2.Max); diff != "" {
				t.Errorf("max differs:\n%s", diff)
			}
			if diff := cmp.Diff(meta.Overflows, meta2.Overflows); diff != "" {
				t.Errorf("overflows differ:\n%s", diff)
			}
			if meta2.Avg[0] > meta.Avg[0] {
				t.Errorf("rewritten avg %d above the original %d", meta2.Avg[0], meta.Avg[0])
			}
		})
	}
}

// TestReadCyclictestCapture parses real output of rt-tests' cyclictest
// V 2.40, captured with
//
//	cyclictest -m -p 80 -i 10000 -a 1 -t 2 -l 200 -h 400 -q   > testdata/cyclictest-h.txt
//	cyclictest -m -p 80 -i 10000 -t 2 -l 200 -H 30 -q         > testdata/cyclictest-H-overflow.txt
func TestReadCyclictestCapture(t *testing.T) {
	t.Run("-h 400", func(t *testing.T) {
		raw, err := os.ReadFile(filepath.Join("testdata", "cyclictest-h.txt"))
		if err != nil {
			t.Fatal(err)
		}
		cols, meta, err := ReadCyclictestHist(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		want := CyclictestMeta{
			Buckets: 400,
			Total:   []uint64{200, 200}, Min: []uint64{10, 7}, Avg: []uint64{31, 29}, Max: []uint64{98, 97},
			Overflows:      []uint64{0, 0},
			OverflowCycles: [][]uint64{{}, {}}, OverflowOthers: []uint64{0, 0},
			Comments: []string{"/dev/cpu_dma_latency set to 0us"},
		}
		if diff := cmp.Diff(want, meta); diff != "" {
			t.Errorf("meta (-want +got):\n%s", diff)
		}
		if len(cols) != 2 || cols[0].Name != "T0" || cols[1].Name != "T1" {
			t.Fatalf("columns %+v, want T0 and T1", cols)
		}
		for i, c := range cols {
			if c.Hist.TotalCount() != 200 || uint64(c.Hist.Min()/1000) != meta.Min[i] || uint64(c.Hist.Max()/1000) != meta.Max[i] {
				t.Errorf("column %d: count %d, min %d ns, max %d ns; want 200 in [%d, %d] µs",
					i, c.Hist.TotalCount(), c.Hist.Min(), c.Hist.Max(), meta.Min[i], meta.Max[i])
			}
		}
		// Without overflows every number is recoverable: rewriting gives
		// cyclictest's own bytes, bar the cpu_dma_latency line.
		for i := range cols {
			cols[i].Name = ""
		}
		var b bytes.Buffer
		if err := WriteCyclictestHist(&b, cols, meta.Buckets); err != nil {
			t.Fatal(err)
		}
		wantText := strings.TrimPrefix(string(raw), "# /dev/cpu_dma_latency set to 0us\n")
		if diff := cmp.Diff(wantText, b.String()); diff != "" {
			t.Errorf("rewrite of the capture (-cyclictest +rtload):\n%s", diff)
		}
	})
	t.Run("-H 30 with overflows", func(t *testing.T) {
		f, err := os.Open(filepath.Join("testdata", "cyclictest-H-overflow.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cols, meta, err := ReadCyclictestHist(f)
		if err != nil {
			t.Fatal(err)
		}
		want := CyclictestMeta{
			Buckets: 30,
			Total:   []uint64{192, 192}, Min: []uint64{5, 5}, Avg: []uint64{12, 10}, Max: []uint64{47, 58},
			Overflows: []uint64{8, 8},
			OverflowCycles: [][]uint64{
				{191, 192, 193, 194, 195, 196, 198, 199},
				{182, 186, 188, 189, 192, 196, 198, 199},
			},
			OverflowOthers: []uint64{0, 0},
			Summed:         true,
			Comments:       []string{"/dev/cpu_dma_latency set to 0us"},
		}
		if diff := cmp.Diff(want, meta); diff != "" {
			t.Errorf("meta (-want +got):\n%s", diff)
		}
		for i, c := range cols {
			// 192 in rows + 8 overflows: one at the max, seven at 30.5 µs.
			if c.Hist.TotalCount() != 200 || uint64(c.Hist.Max()/1000) != meta.Max[i] ||
				c.Hist.ValueAtQuantile(100*(192.0+7)/200) != c.Hist.ValueAtQuantile(100*193.0/200) {
				t.Errorf("column %d: count %d, max %d ns, p99.5 %d; want 200, max %d µs, overflows at 30.5 µs",
					i, c.Hist.TotalCount(), c.Hist.Max(), c.Hist.ValueAtQuantile(99.5), meta.Max[i])
			}
		}
	})
}

func TestReadCyclictestHistSparseAndErrors(t *testing.T) {
	// Older cyclictest versions print only some rows; status lines before
	// "# Histogram" are skipped.
	sparse := "T: 0 ( 1234) P:80 I:1000 C: 3 Min: 5 Act: 6 Avg: 6 Max: 8\n# Histogram\n000005 000001\n000008 000002\n# Total: 000000003\n"
	cols, meta, err := ReadCyclictestHist(strings.NewReader(sparse))
	if err != nil {
		t.Fatal(err)
	}
	if meta.Buckets != 9 || len(cols) != 1 || cols[0].Hist.TotalCount() != 3 || cols[0].Hist.Min() != 5_500 {
		t.Errorf("sparse: buckets %d, %d columns, count %d, min %d; want 9, 1, 3, 5500 ns",
			meta.Buckets, len(cols), cols[0].Hist.TotalCount(), cols[0].Hist.Min())
	}
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", "no histogram rows"},
		{"no rows", "# Histogram\n# Total: 000000000\n", "no histogram rows"},
		{"ragged", "# Histogram\n000000 000001\t000002\n000001 000003\n", "line 3: row 1 has 1 columns, earlier rows 2"},
		{"bad count", "# Histogram\n000000 00000x\n", "line 2: row 0: strconv.ParseUint"},
		{"bad index", "# Histogram\nabc 000001\n", `line 2: row "abc": bad bucket index`},
		{"repeated row", "# Histogram\n000000 000001\n000000 000001\n", "line 3: row 0 repeated"},
		{"truncated", "# Histogram\n000000 000001\n# Total: 000000005\n", "rows sum to 1, \"# Total:\" says 5 (truncated output?)"},
		{"min width", "# Histogram\n000000 000001\n# Min Latencies: 00000 00001 00002\n", "rows have 1 columns, \"# Min Latencies:\" 3"},
		{"bad thread", "# Histogram\n000000 000001\n# Thread x: 0001\n", "line 3: bad thread number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadCyclictestHist(strings.NewReader(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
