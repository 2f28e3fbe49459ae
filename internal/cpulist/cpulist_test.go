package cpulist

import (
	"slices"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		out  string // Format(want)
	}{
		{"", nil, ""},
		{" \n", nil, ""},
		{"0", []int{0}, "0"},
		{"0-3,8,10-11\n", []int{0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11"},
		{"5,1,1-2", []int{1, 2, 5}, "1-2,5"}, // sorted, unique
	} {
		got, err := Parse(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if s := Format(got); s != tc.out {
			t.Errorf("Format(%v) = %q, want %q", got, s, tc.out)
		}
	}
	for _, bad := range []string{"x", "-1", "3-1", "0-99999999", "1,,2"} {
		if got, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", bad, got)
		}
	}
}
