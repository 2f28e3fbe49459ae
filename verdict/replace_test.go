package verdict

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReplacer: run --processes 6 runs a fresh process in the place of
// each the machine disturbed, at most 2 (a third), saying so once each.
func TestReplacer(t *testing.T) {
	var log bytes.Buffer
	r := Replacer(6, &log)
	var got []int
	for n := 1; n <= 8; n++ {
		got = append(got, r(disturbed(1000, 1, 3, 6)(n)))
	}
	if diff := cmp.Diff([]int{0, 1, 1, 2, 2, 2, 2, 2}, got); diff != "" {
		t.Errorf("replacements after each process (-want +got):\n%s", diff)
	}
	want := "process 2 disturbed by the machine (reader rt runnable but off CPU 1 for 66ms (starved)): a fresh process runs in its place (1 of at most 2)\n" +
		"process 4 disturbed by the machine (reader rt runnable but off CPU 1 for 66ms (starved)): a fresh process runs in its place (2 of at most 2)\n" +
		"process 7 disturbed by the machine (reader rt runnable but off CPU 1 for 66ms (starved)): not replaced: at most 2 of 6 may be (a third)\n"
	if diff := cmp.Diff(want, log.String()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	d := RunDropped(disturbed(1000, 1, 3)(8))
	if d == nil || len(d.Disturbed) != 2 || d.Processes != 8 || d.TooMany {
		t.Fatalf("dropped %+v", d)
	}
	if l := d.RunLine(); l != "disturbed by the machine: 2 of 8 processes, which a check leaves out (run ran a fresh one in the place of each, at most a third): reader rt runnable but off CPU 1 for 66ms (starved)" {
		t.Errorf("line %q", l)
	}
}
