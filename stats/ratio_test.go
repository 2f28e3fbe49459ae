package stats

import (
	"reflect"
	"testing"
)

// TestRatios: y/x value by value; a missing or non-positive x gives −1,
// which NestedAt refuses (a value ≤ 0: no log-scale interval).
func TestRatios(t *testing.T) {
	got := Ratios([][]float64{{4, 9}, {10}}, [][]float64{{2, 3}, {0}})
	if want := [][]float64{{2, 3}, {-1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Ratios = %v, want %v", got, want)
	}
	if got := RatioSessions([][][]float64{{{6}}, {{8}}}, [][][]float64{{{2}}}); !reflect.DeepEqual(got, [][][]float64{{{3}}, {{-1}}}) {
		t.Errorf("RatioSessions = %v", got)
	}
	if c := NestedAt(Ratios([][]float64{{1, 1}, {1, 1}}, [][]float64{{1, 0}, {1, 1}}), [][]float64{{1, 1}, {1, 1}}, 0.95); c.Defined() {
		t.Errorf("a ratio over a missing control gave an interval: %+v", c)
	}
}
