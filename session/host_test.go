package session

import (
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/scenario"
)

func validateCPU(t *testing.T, cpu string, host scenario.Host) string {
	t.Helper()
	spec, err := scenario.Load("x.yaml", []byte("readers: [{name: rt, cpu: "+cpu+"}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(host); err != nil {
		return err.Error()
	}
	return ""
}

func TestHostForMasks(t *testing.T) {
	online := []int{0, 1, 2, 3}
	const notAllowed = "is not one this process may use (allowed: "
	for _, tc := range []struct {
		mask []int
		cpu  string
		want string // "" = accepted, else a substring of the error
	}{
		{[]int{0}, "0", ""},
		{[]int{0}, "1", "readers[0].cpu: CPU 1 " + notAllowed + "0, the CPUs this process may use"},
		{[]int{1}, "1", ""},
		{[]int{1}, "0", "readers[0].cpu: CPU 0 " + notAllowed + "1, the CPUs this process may use"},
		{[]int{1}, "auto", ""},
		{[]int{2, 3}, "2", ""},
		{[]int{2, 3}, "3", ""},
		{[]int{2, 3}, "1", "readers[0].cpu: CPU 1 " + notAllowed + "2,3, the CPUs this process may use"},
		{[]int{2, 3}, "auto", ""},
	} {
		h := hostFor(online, tc.mask)
		if h.NumCPU != 4 {
			t.Errorf("mask %v: NumCPU %d, want 4 (the online CPUs)", tc.mask, h.NumCPU)
		}
		got := validateCPU(t, tc.cpu, h)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("mask %v cpu %s: got %q, want %q", tc.mask, tc.cpu, got, tc.want)
		}
		if strings.Contains(got, "for this host") {
			t.Errorf("mask %v cpu %s: %q blames the host for a CPU the mask leaves out", tc.mask, tc.cpu, got)
		}
	}
	// Without the online list the range still covers the mask.
	if h := hostFor(nil, []int{2, 3}); h.NumCPU < 4 {
		t.Errorf("no online list, mask {2,3}: NumCPU %d, want ≥ 4", h.NumCPU)
	}
}

func TestThisHostAffinity(t *testing.T) {
	testutil.Requires(t, testutil.CPUs(2))
	type res struct {
		host      scenario.Host
		one, zero string
		setErr    error
	}
	ch := make(chan res, 1)
	go func() {
		// The thread is never unlocked: it exits with the goroutine, so
		// no other goroutine inherits its narrowed mask.
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(1)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			ch <- res{setErr: err}
			return
		}
		h := ThisHost()
		ch <- res{host: h, one: validateCPU(t, "1", h), zero: validateCPU(t, "0", h)}
	}()
	r := <-ch
	if r.setErr != nil {
		t.Skipf("sched_setaffinity: %v", r.setErr)
	}
	if len(r.host.Allowed) != 1 || r.host.Allowed[0] != 1 || r.host.NumCPU < 2 {
		t.Fatalf("host %+v, want allowed [1] of ≥ 2 CPUs", r.host)
	}
	if r.one != "" {
		t.Errorf("cpu 1 under mask {1}: %s", r.one)
	}
	if !strings.Contains(r.zero, "CPU 0 is not one this process may use (allowed: 1,") {
		t.Errorf("cpu 0 under mask {1}: %q", r.zero)
	}
}
