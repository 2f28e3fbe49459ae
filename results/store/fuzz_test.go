package store_test

import (
	"os"
	"testing"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
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
		s, err := store.DecodeSummary(data, "fuzz.json")
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
