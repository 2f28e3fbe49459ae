package rt_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/rt"
)

// TestOtherRTWarnings: another process's SCHED_FIFO thread pinned to CPU 1
// (chrt -f 10 taskset -c 1 sleep) is listed for reader CPU 1, with its pid,
// policy, priority and mask, and not for CPU 0; no kernel thread
// (migration/N is SCHED_FIFO 99 on every CPU) is ever listed.
func TestOtherRTWarnings(t *testing.T) {
	testutil.Requires(t, testutil.Root) // chrt -f (CAP_SYS_NICE)
	if _, err := exec.LookPath("chrt"); err != nil {
		t.Skip("chrt not installed (util-linux)")
	}
	cmd := exec.Command("chrt", "-f", "10", "taskset", "-c", "1", "sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skipf("chrt -f 10 taskset -c 1 sleep: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	want := "process " + strconv.Itoa(cmd.Process.Pid) + " (sleep) thread " + strconv.Itoa(cmd.Process.Pid) + " (SCHED_FIFO 10) may run on reader CPU 1 (mask 1)"
	// Until the exec of sleep is done (3 s at most).
	var got []string
	var err error
	testutil.Eventually(3*time.Second, func() bool {
		got, err = rt.OtherRTWarnings([]int{1})
		return err != nil || strings.Contains(strings.Join(got, "\n"), want)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(got, "\n"), want) {
		t.Errorf("CPU 1: %q, want a line %q", got, want)
	}
	for _, l := range got {
		if strings.Contains(l, "(migration/") || strings.Contains(l, "(ksoftirqd/") {
			t.Errorf("kernel thread listed: %q", l)
		}
	}
	zero, err := rt.OtherRTWarnings([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(zero, "\n"), "process "+strconv.Itoa(cmd.Process.Pid)+" ") {
		t.Errorf("CPU 0: %q lists the process pinned to CPU 1", zero)
	}
}
