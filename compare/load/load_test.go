package load

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := comparetest.Mkdir(good); err != nil {
		t.Fatal(err)
	}
	if err := testutil.ResultsDir(t, good).WriteSummary(comparetest.SeedRuns()[0].Summary); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		dirs    []string
		labels  []string
		wantErr string
	}{
		{"no dirs", nil, nil, "compare: no results directories"},
		{"label count", []string{good, good}, []string{"a"}, "compare: 1 labels for 2 results directories"},
		{"slash in label", []string{good}, []string{"a/b"}, `label "a/b" contains "/"`},
		{"duplicate label", []string{good, good}, []string{"a", "a"}, `label "a" given twice`},
		{"empty label", []string{good}, []string{" "}, "compare: empty label"},
		{"missing dir", []string{good, filepath.Join(dir, "nope")}, []string{"a", "b"}, "compare b: read summary: " + filepath.Join(dir, "nope") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Runs(tc.dirs, tc.labels)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
	// Default labels: base names, or run1, run2 when they clash.
	runs, err := Runs([]string{good}, nil)
	if err != nil || runs[0].Label != "good" {
		t.Errorf("label %v err %v", runs, err)
	}
	if got := defaultLabels([]string{"x/r", "y/r"}); got[0] != "run1" || got[1] != "run2" {
		t.Errorf("clashing labels %v", got)
	}
}

// TestLoadRefusesHugeHistogram: a summary whose histogram claims 2 million
// buckets is refused on load, naming the limit, before any comparison
// (which would bootstrap over every bucket for minutes).
func TestLoadRefusesHugeHistogram(t *testing.T) {
	testutil.Long(t, "decodes a huge histogram")
	dir := t.TempDir()
	big := record.NewLinear(1, 0, 2_000_000).Snapshot("ticks")
	s := &results.Summary{Trials: []results.Trial{{Variant: "v", Readers: []results.Reader{{Name: "rt", PerCall: results.PerCall{All: big}}}}}}
	testutil.WriteSummary(t, dir, s)
	_, err := Runs([]string{dir}, nil)
	if err == nil || !strings.Contains(err.Error(), "trials[0].readers[0].per_call.all.counts: more than 65536 entries, more than the limit of 65536") {
		t.Fatalf("err = %v", err)
	}
}
