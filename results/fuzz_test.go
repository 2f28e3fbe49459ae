package results_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// FuzzDecodeSummary feeds arbitrary bytes to the summary.json reader. It
// must never panic; a summary it accepts must be within the schema limits
// and merge its readers' distributions without panicking. Seeds: the
// golden summary and the version 1 fixture.
func FuzzDecodeSummary(f *testing.F) {
	for _, p := range []string{"testdata/summary.json.golden", "testdata/v1/summary.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{`{"version":2}`, `{"version":1,"trials":[{"wakeup_log":["a.csv"],"readers":[{},{}]}]}`,
		`{"version":2,"trials":[{"readers":[{"per_call":{"all":{"bucket_width":1,"counts":[1,2,3],"overflow":2}}}]}]}`,
		`{"version":2,"trials":[{"readers":[{"wakeup_latency":{"count":2,"hdr":"HISTFAAAAB54nJNpmSzMwMDAwQABzFCaEUoz2X+AsQBKmAME"}}]}]}`,
		// The pre-pass: empty objects, keys with escapes, any values.
		`{"version":2,"trials":[{},{},{"readers":[{},{}]}],"env":{"a":[{},[],"x",1,null]}}`,
		`{"version":2,"TRIALS":[{"Readers":[{"wakeup_log":["a\u0000"]}]}],"spec":{"readers":[{}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := results.DecodeSummary(data, "fuzz.json")
		if err != nil {
			return
		}
		if len(s.Trials) > results.MaxTrials {
			t.Fatalf("%d trials accepted", len(s.Trials))
		}
		for _, c := range results.Columns(s) {
			var ls []results.Latency
			var ts []results.TickStats
			for _, r := range c.Rounds {
				ls = append(ls, r.Reader.WakeupLatency)
				ts = append(ts, r.Reader.PerCallTicks)
				if n := len(r.Reader.PerCall.All.Counts); n > results.MaxBuckets {
					t.Fatalf("%d buckets accepted", n)
				}
				results.BucketPercentile(r.Reader.PerCall.All, 0.99)
			}
			results.MergeLatency(ls...)
			results.MergeTickStats(ts...)
		}
	})
}

// FuzzParseWakeupLog feeds arbitrary bytes, plain and gzipped, to the
// wakeup-log reader: it must never panic, and every row it returns must
// format back to a line it reads again identically.
func FuzzParseWakeupLog(f *testing.F) {
	f.Add([]byte(results.WakeupLogHeader+"\n1,2,3,4,5,6,7,8,9,10\n"), false, true)
	f.Add([]byte(results.WakeupLogHeaderV1+"\n7,1000,-2345,712000,225,675,450,1\n8,1"), false, true)
	if data, err := os.ReadFile(filepath.Join("testdata", "v1", "wakeups-00-recvfrom-r0-rt.csv")); err == nil {
		f.Add(data, false, false)
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		f.Add(b.Bytes(), true, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, gz, last bool) {
		var rows []record.Wakeup
		if _, err := results.ParseWakeupLog(bytes.NewReader(data), "fuzz.csv", gz, last, &rows); err != nil {
			return
		}
		if len(rows) == 0 {
			return
		}
		// Round trip through the writer's format.
		dir := t.TempDir()
		d, err := results.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		l, err := results.CreateWakeupLog(results.WakeupLogConfig{Dir: d, Base: "w"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			if err := l.Write(&rows[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		back, _, err := results.ReadWakeups(dir, l.Stats().Files)
		if err != nil || len(back) != len(rows) {
			t.Fatalf("round trip: %d of %d rows, %v", len(back), len(rows), err)
		}
		for i := range rows {
			if back[i] != rows[i] {
				t.Fatalf("row %d: %+v, wrote %+v", i, back[i], rows[i])
			}
		}
	})
}
