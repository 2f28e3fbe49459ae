package report

import (
	"math"
	"testing"
)

// TestSummarizeSeed001 checks Summarize against Kees Cook's numbers in
// seed 001: "Run times: 289.72 286.95 287.87 287.34 287.35 / Min: 286.95
// Max: 289.72 Mean: 287.85 Std Dev: 0.98" (sample standard deviation).
func TestSummarizeSeed001(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		runs                   []float64
		min, max, mean, stddev float64
	}{
		{"init_on_alloc=1", []float64{289.72, 286.95, 287.87, 287.34, 287.35}, 286.95, 289.72, 287.85, 0.98},
		{"init_on_free=1", []float64{303.26, 301.44, 301.19, 301.55, 301.39}, 301.19, 303.26, 301.77, 0.75},
		{"init_on_free=1, sanitize slabs excluded", []float64{299.19, 299.85, 298.95, 298.23, 298.64}, 298.23, 299.85, 298.97, 0.55}, // seed rounds 298.972 to 298.97
	} {
		s := Summarize(tc.runs)
		if s.Min != tc.min || s.Max != tc.max || math.Abs(s.Mean-tc.mean) > 0.005 || math.Abs(s.Std-tc.stddev) > 0.011 /* the seed rounds its last digit loosely: 0.757 shown as 0.75 */ {
			t.Errorf("%s: got min %.2f max %.2f mean %.2f std %.2f, want %.2f %.2f %.2f %.2f", tc.name, s.Min, s.Max, s.Mean, s.Std, tc.min, tc.max, tc.mean, tc.stddev)
		}
	}
	if s := Summarize(nil); s.N != 0 || s.Mean != 0 {
		t.Errorf("empty: %+v", s)
	}
	if s := Summarize([]float64{3}); s.Std != 0 || s.Mean != 3 {
		t.Errorf("one run: %+v", s)
	}
}

func TestChange(t *testing.T) {
	base := Summarize([]float64{287.0, 288.0, 289.0})
	for _, tc := range []struct {
		name           string
		runs           []float64
		higherIsBetter bool
		want           string
	}{
		{"identical data is within noise", []float64{287.0, 288.0, 289.0}, false, "0.00% change (within the std dev noise)"},
		{"shifted copy, time: slower", []float64{300.0, 301.0, 302.0}, false, "4.51% slower"},
		{"shifted copy, KB/s: faster", []float64{300.0, 301.0, 302.0}, true, "4.51% faster"},
		{"small shift inside the std dev", []float64{287.5, 288.5, 289.5}, false, "0.17% slower (within the std dev noise)"},
	} {
		if got := Change(base, Summarize(tc.runs), tc.higherIsBetter); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
