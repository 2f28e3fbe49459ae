package rt_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rtload/rtload/rt"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{rt.ReaderName("r0"), "rtl-rd/r0"},
		{rt.SenderName("lo450"), "rtl-tx/lo450"},
		{rt.NoiseName("spin", 3), "rtl-nz/spin.3"},
		{rt.ProbeName("hackbench"), "rtl-pr/hackbench"},
		{rt.WriterName, "rtl-writer"},
	} {
		if tc.got != tc.want {
			t.Errorf("name %q, want %q", tc.got, tc.want)
		}
	}
}

func TestComm(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short names are kept", "rtl-rd/r0", "rtl-rd/r0"},
		{"exactly 15 bytes are kept", "rtl-nz/spin.123", "rtl-nz/spin.123"},
		{"16 bytes: head, ~, tail", "rtl-tx/endpoint0", "rtl-tx/en~oint0"},
		{"siblings stay apart by their tail", "rtl-nz/messaging.3", "rtl-nz/me~ing.3"},
		{"the other sibling", "rtl-nz/messaging.4", "rtl-nz/me~ing.4"},
		{"a UTF-8 head ends before a split sequence", "rtl-rd/aé-long-reader", "rtl-rd/a~eader"},
		{"a UTF-8 tail starts after a split sequence", "rtl-rd/reader-éabcd", "rtl-rd/re~abcd"},
		{"whole runes are kept", "rtl-rd/éa-long-readé", "rtl-rd/é~eadé"},
		{"NUL ends the name, as in the kernel", "rtl-rd/a\x00bcdefghijklmnop", "rtl-rd/a"},
		{"empty stays empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rt.Comm(tc.in)
			if got != tc.want {
				t.Errorf("Comm(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if len(got) > rt.CommLen || !utf8.ValidString(got) {
				t.Errorf("Comm(%q) = %q: %d bytes (max %d), valid UTF-8 %v", tc.in, got, len(got), rt.CommLen, utf8.ValidString(got))
			}
			if again := rt.Comm(tc.in); again != got {
				t.Errorf("Comm(%q) not deterministic: %q then %q", tc.in, got, again)
			}
		})
	}
}

// comm reads a thread's name as the kernel reports it.
func comm(t *testing.T, tid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/comm")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// parked starts a thread with s whose body blocks until the test ends
// (bounded: 20 s), and returns what Start applied.
func parked(t *testing.T, s rt.Sched) rt.Applied {
	t.Helper()
	release := make(chan struct{})
	th, a, err := rt.Start(s, nil, func(rt.Applied) {
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(release); waitThread(t, th) })
	return a
}

func TestStartSetsName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{rt.ReaderName("r0"), "rtl-rd/r0"},
		{rt.SenderName("endpoint-long-7"), "rtl-tx/en~ong-7"},
		{rt.WriterName, "rtl-writer"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			a := parked(t, rt.Sched{Name: tc.name})
			if got := comm(t, a.TID); got != tc.want {
				t.Errorf("/proc/self/task/%d/comm = %q, want %q", a.TID, got, tc.want)
			}
			if a.Name != tc.want {
				t.Errorf("Applied.Name = %q, want %q", a.Name, tc.want)
			}
		})
	}
	// No name asked: the thread keeps the one it had (the binary's, here
	// rt.test, or whatever an earlier thread on this M was given: none, as
	// named threads are never handed back).
	a := parked(t, rt.Sched{})
	if got := comm(t, a.TID); got != a.Name || strings.HasPrefix(got, "rtl-") {
		t.Errorf("unnamed thread: comm %q, Applied.Name %q", got, a.Name)
	}
}
