package sysinfo

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseCPUSteal reads the cpuN lines' eighth value (10 ms ticks), skips
// the all-CPU line and others, and reads 0 where a kernel gives fewer values.
func TestParseCPUSteal(t *testing.T) {
	text := `cpu  662097 0 392600 65791 257 0 17390 1504 0 0
cpu0 321906 0 202692 33343 35 0 11071 819 0 0
cpu1 340191 0 189908 32448 221 0 6318 685 0 0
cpu3 1 2 3 4 5 6 7
intr 123 4 5
ctxt 99
`
	got, err := parseCPUSteal([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := CPUSteal{8190 * time.Millisecond, 6850 * time.Millisecond, 0, 0}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steal (-want +got):\n%s", d)
	}
	later := CPUSteal{8300 * time.Millisecond, 6850 * time.Millisecond, 0, 0}
	d := later.Sub(got)
	if d.On([]int{0}) != 110*time.Millisecond || d.On(nil) != 110*time.Millisecond || d.On([]int{1, 7}) != 0 {
		t.Errorf("delta %v: On(0) %v, On(all) %v, On(1, 7) %v", d, d.On([]int{0}), d.On(nil), d.On([]int{1, 7}))
	}
	if _, err := parseCPUSteal([]byte("cpu0 1 2 3 4 5 6 7 x\n")); err == nil {
		t.Error("a bad steal value was read")
	}
	if s, err := ReadCPUSteal(); err != nil || len(s) == 0 {
		t.Errorf("ReadCPUSteal: %v, %v", s, err)
	}
}
