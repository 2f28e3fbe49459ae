package results_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/wakelog"
)

func TestSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := testutil.SeedSummary()
	at := s.Start.Add(time.Minute)
	s.Stopped, s.StoppedAt = true, &at
	testutil.WriteSummary(t, dir, s)
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
	// Overwrite keeps a single file; whatever Version says, the current one is written.
	s.Version = 1
	testutil.WriteSummary(t, dir, s)
	if s.Version != 1 {
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

// TestSummaryGolden pins the summary.json format, the results contract.
// HDR encodings are blanked: their zlib bytes depend on compress/flate.
func TestSummaryGolden(t *testing.T) {
	s := testutil.SeedSummary()
	for i := range s.Trials {
		tr := &s.Trials[i]
		r := &tr.Readers[0]
		r.WakeupLatency.HDR, r.Drain.HDR, r.OneWayDelay.HDR, r.PerCallTicks.HDR = "", "", "", ""
		tr.Traffic[0].SendLag.HDR = ""
		// Keep the golden short: only the first round's per-call data.
		if i > 0 {
			r.PerCall = results.PerCall{}
		}
	}
	dir := t.TempDir()
	testutil.WriteSummary(t, dir, s)
	got, err := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "summary.json", got)
}

func TestReadSummaryErrors(t *testing.T) {
	dir := t.TempDir()
	big := record.NewLinear(1, 0, 2_000_000).Snapshot("ticks")
	bigJSON, err := json.Marshal(results.Summary{Version: 2, Trials: []results.Trial{{Readers: []results.Reader{{PerCall: results.PerCall{All: big}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body, wantErr string
	}{
		{"syntax error names file line col", "{\n  \"version\": 2,\n  x\n}", "summary.json:3:3: invalid character 'x'"},
		{"type error", "{\n  \"version\": \"two\"\n}", "summary.json:2:"},
		{"truncated", "{\"version\": 2,", "summary.json:1:"},
		{"unknown version", "{\"version\": 9}", "summary version 9 not supported (this rtload reads versions 1 to 3)"},
		{"2 million buckets", string(bigJSON), "trials[0].readers[0].per_call.all.counts: more than 65536 entries, more than the limit of 65536"},
		{"layout that does not add up", `{"version":2,"trials":[{"readers":[{"per_call":{"all":{"bucket_width":0,"counts":[1,2]}}}]}]}`,
			"per_call.all: histogram layout (width 0, origin 0, overflow 0) does not match its 2 buckets"},
		{"wakeup log outside the directory", `{"version":2,"trials":[{"readers":[{"wakeup_log":["../../etc/shadow"]}]}]}`,
			`wakeup_log: "../../etc/shadow" is not a file name in the results directory`},
		{"huge hdr", `{"version":2,"trials":[{"readers":[{"wakeup_latency":{"hdr":"` + strings.Repeat("A", safeio.MaxHDRBytes+1) + `"}}]}]}`,
			"wakeup_latency: hdr encoding of 1048577 bytes, more than the limit of 1048576"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, results.SummaryFile)
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := results.ReadSummary(dir)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want it to name %s and contain %q", err, path, tc.wantErr)
			}
			t.Logf("refused in %v", time.Since(start))
		})
	}
	if _, err := results.ReadSummary(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := results.ReadSummary("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: is a character device: refused") {
		t.Errorf("/dev/zero: %v", err)
	}
}

// TestReadV1 reads a version 1 directory written by rtload before summary
// version 2 (testdata/v1, made with the code of ce607ba): two readers "rt"
// and "rt2" whose logs sat in one trial-level list. Each reader gets its own
// log (the old substring match gave "rt" both), and per-call tick
// summaries written under *_ns names read as TickStats.
func TestReadV1(t *testing.T) {
	s, err := results.ReadSummary("testdata/v1")
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 1 || len(s.Trials) != 1 || len(s.Trials[0].Readers) != 2 {
		t.Fatalf("version %d, %d trials", s.Version, len(s.Trials))
	}
	for i, want := range []string{"wakeups-00-recvfrom-r0-rt.csv", "wakeups-00-recvfrom-r0-rt2.csv"} {
		r := s.Trials[0].Readers[i]
		if diff := cmp.Diff([]string{want}, r.WakeupLog); diff != "" {
			t.Errorf("reader %s: logs (-want +got):\n%s", r.Name, diff)
		}
		rows, st, err := wakelog.ReaderWakeups("testdata/v1", r)
		if err != nil || len(rows) != 100 || st.Files != 1 {
			t.Errorf("reader %s: %d rows, %+v, %v", r.Name, len(rows), st, err)
		}
		// The log is the reader's own: it gives the reader's numbers.
		l := results.WakeupLatencyOf(rows)
		if l.MaxNs != r.WakeupLatency.MaxNs && l.Count != r.WakeupLatency.Count {
			t.Errorf("reader %s: log max %d count %d, summary %d %d", r.Name, l.MaxNs, l.Count, r.WakeupLatency.MaxNs, r.WakeupLatency.Count)
		}
		pc := r.PerCallTicks
		if pc.Count != 100 || pc.MinTicks != uint64(1500+1000*i) || pc.MaxTicks == 0 || pc.P99Ticks == 0 || pc.HDR == "" {
			t.Errorf("reader %s: per-call ticks from v1 *_ns names: %+v", r.Name, pc)
		}
	}
}

func TestCheckLayout(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		width, origin, overflow uint64
		buckets                 int
		wantErr                 string
	}{
		{"seed layout", 128, 64, 8256, -1, ""},
		{"seed snapshot", 128, 64, 8256, 65, ""},
		{"limit exactly", 1, 0, results.MaxBuckets - 1, -1, ""},
		{"one past the limit", 1, 0, results.MaxBuckets, -1, "gives 65537 buckets, more than the limit of 65536"},
		{"zero width", 0, 0, 10, -1, "need width > 0"},
		{"empty snapshot", 0, 0, 0, 0, ""},
		{"wrong count", 128, 64, 8256, 64, "does not match its 64 buckets"},
		{"huge overflow", 1, 0, math.MaxUint64, -1, "more than the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := results.CheckLayout(tc.width, tc.origin, tc.overflow, tc.buckets)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	// What NewLinear makes always passes.
	for _, l := range []*record.Linear{record.NewLinear(128, 64, 8256), record.NewLinear(7, 3, 1000), record.NewLinear(1, 0, 5)} {
		s := l.Snapshot("")
		if err := results.CheckLayout(s.Width, s.Origin, s.Overflow, len(s.Counts)); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

func TestColumns(t *testing.T) {
	s := &results.Summary{Trials: []results.Trial{
		{Variant: "a", Readers: []results.Reader{{Name: "rt"}, {Name: ""}}},
		{Variant: "b", Readers: []results.Reader{{Name: "rt"}, {Name: ""}}},
		{Variant: "a", Round: 1, Readers: []results.Reader{{Name: "rt"}, {Name: ""}}},
	}}
	cols := results.Columns(s)
	var got []string
	for _, c := range cols {
		got = append(got, fmt.Sprintf("%s %d", c.Label(results.PerReader(s), "/"), len(c.Rounds)))
	}
	if diff := cmp.Diff([]string{"a/rt 2", "a/reader1 2", "b/rt 1", "b/reader1 1"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if r := cols[0].Rounds[1]; r.TrialPos != 2 || r.ReaderPos != 0 || r.Trial != &s.Trials[2] {
		t.Errorf("round positions %+v", r)
	}
	one := &results.Summary{Trials: []results.Trial{{Readers: []results.Reader{{Name: "x"}}}}}
	if results.PerReader(one) || results.Columns(one)[0].Label(false, "/") != "run" {
		t.Error("one unnamed-variant reader: want label run")
	}
}

func TestWakeupLogBase(t *testing.T) {
	if got := results.WakeupLogBase(3, "a b/c", 1, "rt.2"); got != "wakeups-03-a_b_c-r1-rt.2" {
		t.Errorf("got %q", got)
	}
}

// TestNoAny: no field of the contract, however deep, is an interface:
// every reader asks a typed field or method, never a JSON round trip
// through string keys (issue 26).
func TestNoAny(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string) []string
	walk = func(ty reflect.Type, path string) []string {
		switch ty.Kind() {
		case reflect.Interface:
			return []string{path + " is " + ty.String()}
		case reflect.Pointer, reflect.Slice, reflect.Array:
			return walk(ty.Elem(), path+"[]")
		case reflect.Map:
			return append(walk(ty.Key(), path+"{key}"), walk(ty.Elem(), path+"{}")...)
		case reflect.Struct:
			if seen[ty] {
				return nil
			}
			seen[ty] = true
			var out []string
			for i := range ty.NumField() {
				f := ty.Field(i)
				if f.IsExported() {
					out = append(out, walk(f.Type, path+"."+f.Name)...)
				}
			}
			return out
		}
		return nil
	}
	for _, bad := range walk(reflect.TypeFor[results.Summary](), "Summary") {
		t.Error(bad)
	}
}
