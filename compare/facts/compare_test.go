package facts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// TestDifferencesClockRead: two TSC runs read with different
// instructions (RDTSCP, and LFENCE;RDTSC;LFENCE on a VM that hides it)
// differ in every call's read cost: a warning, a file written before the
// field counting as RDTSCP.
func TestDifferencesClockRead(t *testing.T) {
	a := testutil.SeedRun("6.12.0", [2]int{0, 2}, 0)
	b := testutil.SeedRun("6.12.0", [2]int{1, 3}, 0)
	if a.Clock.Kind != "tsc" {
		t.Fatalf("fixture clock %q, want tsc", a.Clock.Kind)
	}
	b.Clock.Read = results.ReadRDTSCFenced
	warn, _ := Differences([]compare.Run{{Label: "metal", Summary: a}, {Label: "vm", Summary: b}})
	if len(warn) != 1 || warn[0].Field != "clock read" || warn[0].Values[0] != results.ReadRDTSCP || warn[0].Values[1] != results.ReadRDTSCFenced {
		t.Errorf("warnings %+v, want clock read %s vs %s", warn, results.ReadRDTSCP, results.ReadRDTSCFenced)
	}
	b.Clock.Read = results.ReadRDTSCP
	if warn, _ := Differences([]compare.Run{{Label: "old", Summary: a}, {Label: "new", Summary: b}}); len(warn) != 0 {
		t.Errorf("RDTSCP written and RDTSCP implied: warnings %+v", warn)
	}
}

// TestCompareFacts: Compare is compare.Model with the runs' facts filled
// in, and only them: the same metrics, runs and columns; the seed's two
// kernels give it metadata, which the model leaves empty (compare's
// TestHeadlines: the model's metrics are each look's).
func TestCompareFacts(t *testing.T) {
	runs := comparetest.SeedRuns() // two kernels: metadata and warnings differ
	full, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	model, err := compare.Model(runs, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(model.Metrics, full.Metrics, cmpopts.IgnoreUnexported(compare.Metric{})); diff != "" {
		t.Errorf("metrics differ from the model's (-model +full):\n%s", diff)
	}
	if diff := cmp.Diff(model.Runs, full.Runs); diff != "" {
		t.Errorf("runs differ from the model's (-model +full):\n%s", diff)
	}
	if diff := cmp.Diff(model.Columns, full.Columns); diff != "" {
		t.Errorf("columns differ from the model's (-model +full):\n%s", diff)
	}
	if len(full.Metadata) == 0 || len(full.Info) == 0 {
		t.Fatalf("the fixture's full comparison has no metadata or information: %v, %v", full.Metadata, full.Info)
	}
	if len(model.Warnings) != 0 || len(model.Info) != 0 || len(model.Metadata) != 0 || model.Profiles != nil {
		t.Errorf("the model holds the runs' facts: %v %v %v %v", model.Warnings, model.Info, model.Metadata, model.Profiles)
	}
}
