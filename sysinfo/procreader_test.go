package sysinfo

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProcReader reads this process's facts through a ProcReader and
// checks them against the one-off readers: the same fd count, an RSS of
// the same order, the same interrupt sources with counts that only grew.
func TestProcReader(t *testing.T) {
	p := NewProcReader()
	rss, err := p.RSS()
	if err != nil {
		t.Skip(err)
	}
	if rss0, _ := RSS(); rss < 1<<20 || rss > 4*rss0 || rss0 > 4*rss {
		t.Errorf("RSS %d, one-off %d", rss, rss0)
	}
	n, err := p.OpenFDs()
	if n0, _ := OpenFDs(); err != nil || n != n0 {
		t.Errorf("OpenFDs %d, %v; one-off %d", n, err, n0)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n1, _ := p.OpenFDs(); n1 != n+1 {
		t.Errorf("OpenFDs %d after opening one file, %d before", n1, n)
	}
	before, err := ReadIRQCounts(0)
	if err != nil {
		t.Skip(err)
	}
	m := IRQCounts{"irq:stale": 7}
	if err := p.IRQCounts(0, m); err != nil {
		t.Fatal(err)
	}
	if m["irq:stale"] != 0 {
		t.Errorf("a value read before survived: %d", m["irq:stale"])
	}
	delete(m, "irq:stale")
	for k, v := range before {
		if got, ok := m[k]; !ok || got < v {
			t.Errorf("%s: %d (present %v), read before as %d", k, got, ok, v)
		}
	}
	if len(m) != len(before) {
		t.Errorf("%d sources, one-off read %d", len(m), len(before))
	}
}

// TestProcReaderAllocs: once warmed up, a writer's per-interval reads
// allocate nothing (issue 12: a soak's writer grew the heap by ~80 KB per
// interval reading these with os.ReadDir and strings.Fields).
func TestProcReaderAllocs(t *testing.T) {
	p := NewProcReader()
	a, b := IRQCounts{}, IRQCounts{}
	if _, err := p.RSS(); err != nil {
		t.Skip(err)
	}
	if err := p.IRQCounts(0, a); err != nil {
		t.Skip(err)
	}
	p.IRQCounts(0, b)
	p.OpenFDs()
	if _, err := p.TaskStats(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"RSS", func() { p.RSS() }},
		{"OpenFDs", func() { p.OpenFDs() }},
		{"IRQCounts, two maps in turn", func() { p.IRQCounts(0, a); a, b = b, a }},
		{"TaskStats", func() { p.TaskStats(os.Getpid()) }},
	} {
		if n := testing.AllocsPerRun(50, tc.f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", tc.name, n)
		}
	}
}

// TestCountDirents: linux_dirent64 records, "." and ".." not counted, a
// truncated record ends the count.
func TestCountDirents(t *testing.T) {
	rec := func(name string) []byte {
		n := (19 + len(name) + 1 + 7) &^ 7
		b := make([]byte, n)
		binary.NativeEndian.PutUint16(b[16:18], uint16(n))
		copy(b[19:], name)
		return b
	}
	var buf []byte
	for _, name := range []string{".", "..", "0", "1", "2", "127"} {
		buf = append(buf, rec(name)...)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want int
	}{
		{"dot entries skipped", buf, 4},
		{"empty", nil, 0},
		{"truncated last record", buf[:len(buf)-3], 3},
		{"only dots", append(rec("."), rec("..")...), 0},
		{"dotfile counted", rec(".x"), 1},
	} {
		if got := countDirents(tc.b); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestParseDecimal: strconv.ParseUint(s, 10, 64) without an error value.
func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"90210", 90210, true},
		{"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false}, // overflow
		{"", 0, false},
		{"12a", 0, false},
		{"-1", 0, false},
	} {
		got, ok := parseDecimal([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseDecimal(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestNextField splits like strings.Fields on ASCII white space.
func TestNextField(t *testing.T) {
	for _, in := range []string{"", "  ", "a", " a  b\tc\n", "CPU0       CPU1       "} {
		var got []string
		rest := []byte(in)
		for {
			var f []byte
			if f, rest = nextField(rest); f == nil {
				break
			}
			got = append(got, string(f))
		}
		want := strings.Fields(in)
		if len(want) == 0 {
			want = nil
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%q (-want +got):\n%s", in, d)
		}
	}
}

// TestProcReaderTaskStats: the same counts as ReadTaskStats (counts only
// grow between the two reads), and ReadTaskStats' error for a thread that
// is not there.
func TestProcReaderTaskStats(t *testing.T) {
	p := NewProcReader()
	before, err := ReadTaskStats(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	got, err := p.TaskStats(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got.HasMigrations != before.HasMigrations || got.RunNs < before.RunNs || got.VoluntarySwitches < before.VoluntarySwitches ||
		got.MinorFaults < before.MinorFaults || got.Timeslices < before.Timeslices || got.RunNs == 0 {
		t.Errorf("ProcReader %+v, ReadTaskStats before it %+v", got, before)
	}
	if _, err := p.TaskStats(1 << 30); err == nil || !strings.Contains(err.Error(), "/proc/self/task/1073741824/status") {
		t.Errorf("no such thread: %v, want the status file's error", err)
	}
}
