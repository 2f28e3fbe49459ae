package sysinfo

import (
	"testing"
	"time"
)

// TestBootFacts: the boot id is kept only in the kernel's UUID form, and
// btime is read from /proc/stat's line, not from a prefix of another.
func TestBootFacts(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a7d0184e-81f0-4d92-8e1f-ebce14bf5274", "a7d0184e-81f0-4d92-8e1f-ebce14bf5274"},
		{"A7D0184E-81F0-4D92-8E1F-EBCE14BF5274", ""}, // the kernel prints lower case
		{"a7d0184e-81f0-4d92-8e1f-ebce14bf527", ""},
		{"a7d0184e+81f0-4d92-8e1f-ebce14bf5274", ""},
		{"\x1b]0;x\x07aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", ""},
		{"", ""},
	} {
		if got := bootID(c.in); got != c.want {
			t.Errorf("bootID(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	stat := []byte("cpu  1 2 3\nbtimex 5\nbtime 1700000000\nprocesses 9\n")
	if got, want := parseBtime(stat), time.Unix(1700000000, 0).UTC(); !got.Equal(want) {
		t.Errorf("btime %v, want %v", got, want)
	}
	if got := parseBtime([]byte("cpu 1\n")); !got.IsZero() {
		t.Errorf("no btime: %v", got)
	}
}
