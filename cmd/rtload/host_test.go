package main

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
)

// validateCPU validates a one-reader scenario with a fixed cpu against
// host; "" when it passes, else the error text.
// TestHostForMasks: the host's CPU range comes from the online CPUs, the
// allowed set from the affinity mask, whatever CPU the mask starts at
// (the bug: run took the range from the mask's size, so under taskset
// -c 1 CPU 1 was "out of range for this host (1 CPUs)").
// TestThisHostAffinity narrows a locked thread's affinity to CPU 1 with
// sched_setaffinity(2) and checks thisHost on it: CPU 1 is accepted, CPU
// 0 refused with the set named, and the host still has both CPUs.
// TestRunFixedCPUTaskset: under taskset -c 1 a scenario with cpu: 1 is
// accepted by validate and, as root, run (with and without the re-exec);
// under taskset -c 0 run refuses it with validate's message.
func TestRunFixedCPUTaskset(t *testing.T) {
	taskset, err := exec.LookPath("taskset")
	if err != nil || runtime.NumCPU() < 2 {
		t.Skip("needs taskset (util-linux) and 2 CPUs")
	}
	fixed := writeScenario(t, "fixed.yaml", "readers: [{name: rt, cpu: 1}]\n")
	under := func(cpu string, args ...string) result {
		t.Helper()
		return rtloadVia(t, taskset, append([]string{"-c", cpu, binary}, args...)...)
	}
	if r := under("1", "validate", fixed); r.code != 0 {
		t.Errorf("validate under taskset -c 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := under("0", "run", fixed, "--duration", "200ms", "--out", t.TempDir()+"/o", "-q")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "readers[0].cpu: CPU 1 is not one this process may use (allowed: 0, ") ||
		strings.Contains(r.stderr, "for this host") {
		t.Errorf("run under taskset -c 0: exit %d, want %d with the allowed set named\n%s", r.code, ExitUsage, r.stderr)
	}
	t.Run("run as root", func(t *testing.T) {
		testutil.Requires(t, testutil.Root, testutil.CPUs(2))
		for _, noReexec := range []string{"", "1"} {
			t.Setenv("RTLOAD_NO_REEXEC", noReexec)
			r := under("1", "run", fixed, "--duration", "200ms", "--out", t.TempDir()+"/o", "-q")
			if r.code != 0 {
				t.Errorf("run under taskset -c 1 (RTLOAD_NO_REEXEC=%q): exit %d\n%s%s", noReexec, r.code, r.stdout, r.stderr)
			}
		}
	})
}
