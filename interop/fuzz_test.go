package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadCyclictestHist feeds arbitrary text to the cyclictest -h reader:
// it must never panic, and a histogram it accepts must write back in
// cyclictest's layout. Seeds: the captures in testdata.
func FuzzReadCyclictestHist(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("# Histogram\n000000 000001\n# Max Latencies: 99999999999\n"))
	f.Add([]byte("000003 1 2 3\n# Min Latencies: 00001 00002\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cols, meta, err := ReadCyclictestHist(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(cols) == 0 || meta.Buckets > maxCyclictestUs+1 {
			t.Fatalf("%d columns, %d buckets accepted", len(cols), meta.Buckets)
		}
		var b bytes.Buffer
		if err := WriteCyclictestHist(&b, cols, min(max(meta.Buckets, 1), 2000)); err != nil {
			t.Fatalf("write back: %v", err)
		}
	})
}

// FuzzDecodeHlog feeds arbitrary text to the HdrHistogram log reader: it
// must never panic, and a log it accepts must encode again.
func FuzzDecodeHlog(f *testing.F) {
	h := hlogTestHist(100, 2000, 1)
	var b bytes.Buffer
	if err := EncodeHlog(&b, &HlogFile{Comments: []string{"seed"}, Intervals: []HlogInterval{{Tag: "a/r0/x", LengthSec: 1, Hist: h, MaxValueDivisor: 1e3}}}); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte("#[StartTime: 1.5 (seconds since epoch)]\n0.0,1.0,2.0,HISTFAAAAB54nJNpmSzMwMDAwQABzFCaEUoz2X+AsQBKmAME\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lf, err := DecodeHlog(bytes.NewReader(data), "fuzz.hlog")
		if err != nil {
			return
		}
		var out bytes.Buffer
		lf.Comments = nil // free text may hold what a comment line cannot
		if err := EncodeHlog(&out, lf); err != nil {
			t.Fatalf("encode back: %v", err)
		}
	})
}
