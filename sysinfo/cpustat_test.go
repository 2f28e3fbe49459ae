package sysinfo

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCPUTimes(t *testing.T) {
	stat := []byte("cpu  100 2 300 4000 5 6 7 8 0 0\ncpu0 50 1 150 2000 2 3 3 4 0 0\ncpu1 50 1 150 2000 3 3 4 4 0 0\nintr 12345 1 2 3\nctxt 99\n")
	for _, tc := range []struct {
		name string
		want CPUTimes
		ok   bool
	}{
		{"cpu1", CPUTimes{User: 50, Nice: 1, System: 150, Idle: 2000, IOWait: 3, IRQ: 3, SoftIRQ: 4, Steal: 4, HasSteal: true}, true},
		{"cpu0", CPUTimes{User: 50, Nice: 1, System: 150, Idle: 2000, IOWait: 2, IRQ: 3, SoftIRQ: 3, Steal: 4, HasSteal: true}, true},
		{"cpu2", CPUTimes{}, false},
		{"cpu", CPUTimes{User: 100, Nice: 2, System: 300, Idle: 4000, IOWait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8, HasSteal: true}, true},
	} {
		got, ok := ParseCPUTimes(stat, []byte(tc.name))
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	// An old kernel's line: no steal column.
	got, ok := ParseCPUTimes([]byte("cpu0 1 2 3 4 5 6 7\n"), []byte("cpu0"))
	if diff := cmp.Diff(CPUTimes{User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7}, got); !ok || diff != "" {
		t.Errorf("no steal column (-want +got):\n%s", diff)
	}
	if _, ok := ParseCPUTimes([]byte("cpu0 1 x 3 4\n"), []byte("cpu0")); ok {
		t.Error("a malformed line parses")
	}
}

// TestCPUTimesLive reads this machine's /proc/stat; a second read
// allocates nothing.
func TestCPUTimesLive(t *testing.T) {
	p := NewProcReader()
	if _, err := p.CPUTimes(0); err != nil {
		t.Skipf("no /proc/stat here: %v", err)
	}
	if a := testing.AllocsPerRun(20, func() { p.CPUTimes(0) }); a != 0 {
		t.Errorf("CPUTimes allocates %v per read", a)
	}
	if _, err := p.CPUTimes(1 << 20); err == nil {
		t.Error("a CPU that is not there reads")
	}
}

// BenchmarkWatchPoll is what the writer's machine watch reads every 50 ms
// per reader: the CPU's /proc/stat line and its /proc/interrupts and
// /proc/softirqs columns.
func BenchmarkWatchPoll(b *testing.B) {
	p := NewProcReader()
	m := IRQCounts{}
	if _, err := p.CPUTimes(0); err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.CPUTimes(0); err != nil {
			b.Fatal(err)
		}
		if err := p.IRQCounts(0, m); err != nil {
			b.Fatal(err)
		}
	}
}
