package results_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

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
