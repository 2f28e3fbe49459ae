package testutil

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// DeadPID returns the pid of a process that has exited and been reaped:
// a child running true(1), or, without one in PATH, the test binary with no
// test selected. It skips the test when the kernel has already given the
// pid to another process.
func DeadPID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("true")
	if _, err := exec.LookPath("true"); err != nil {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(exe, "-test.run=^$")
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v", err)
	}
	pid := cmd.Process.Pid
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !errors.Is(err, fs.ErrNotExist) {
		t.Skipf("pid %d of a reaped child already reused (%v)", pid, err)
	}
	return pid
}
