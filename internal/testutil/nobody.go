package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// RunTestAsNobody re-executes the current test binary as uid/gid 65534 (no
// capabilities), running only the test named test, with env set (the child
// checks it to take its unprivileged branch). The binary is copied to a
// 0755 directory first: go test builds it in a 0700 one. It fails t unless
// the child passed that test without skipping, and logs the child's output.
// The caller must be root.
func RunTestAsNobody(t *testing.T, test, env string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := MkdirTemp("rtload-nobody-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	copyExe := filepath.Join(dir, filepath.Base(exe))
	if err := os.WriteFile(copyExe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(copyExe, "-test.run=^"+test+"$", "-test.v", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), env+"=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("child as nobody:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("child did not pass %s", test)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Fatal("child skipped")
	}
}
