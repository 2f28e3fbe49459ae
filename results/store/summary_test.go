package store_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
)

func TestSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := testutil.SeedSummary()
	at := s.Start.Add(time.Minute)
	s.Stopped, s.StoppedAt = true, &at
	testutil.WriteSummary(t, dir, s)
	for _, path := range []string{dir, filepath.Join(dir, results.SummaryFile)} {
		got, err := store.ReadSummary(path)
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
	got, err := store.ReadSummary(dir)
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
			_, err := store.ReadSummary(dir)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want it to name %s and contain %q", err, path, tc.wantErr)
			}
			t.Logf("refused in %v", time.Since(start))
		})
	}
	if _, err := store.ReadSummary(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := store.ReadSummary("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: is a character device: refused") {
		t.Errorf("/dev/zero: %v", err)
	}
}

// TestReadV1 reads a version 1 directory written by rtload before summary
// version 2 (testdata/v1, made with the code of ce607ba): two readers "rt"
// and "rt2" whose logs sat in one trial-level list. Each reader gets its own
// log (the old substring match gave "rt" both), and per-call tick
// summaries written under *_ns names read as TickStats.
func TestReadV1(t *testing.T) {
	s, err := store.ReadSummary("testdata/v1")
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
		l := testutil.WakeupLatencyOf(rows)
		if l.MaxNs != r.WakeupLatency.MaxNs && l.Count != r.WakeupLatency.Count {
			t.Errorf("reader %s: log max %d count %d, summary %d %d", r.Name, l.MaxNs, l.Count, r.WakeupLatency.MaxNs, r.WakeupLatency.Count)
		}
		pc := r.PerCallTicks
		if pc.Count != 100 || pc.MinTicks != uint64(1500+1000*i) || pc.MaxTicks == 0 || pc.P99Ticks == 0 || pc.HDR == "" {
			t.Errorf("reader %s: per-call ticks from v1 *_ns names: %+v", r.Name, pc)
		}
	}
}
