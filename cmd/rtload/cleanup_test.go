package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
)

// TestCleanupFstimeLeftovers leaves, in a file_write dir, what a SIGKILLed
// run's FileWrite leaves (rtload-fstime-<dead pid>-<random>/fstime) beside a
// link of such a name: --dry-run says what it would remove and keeps
// everything; cleanup removes the leftover, keeps the link, and says why
// for each.
func TestCleanupFstimeLeftovers(t *testing.T) {
	dir := t.TempDir()
	dead := testutil.DeadPID(t)
	left := filepath.Join(dir, fmt.Sprintf("rtload-fstime-%d-3096535059", dead))
	link := filepath.Join(dir, fmt.Sprintf("rtload-fstime-%d-0badc0de", dead))
	if err := os.Mkdir(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "fstime"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	removeLine := fmt.Sprintf("fstime leftover %s: owner pid %d is gone (no /proc/%d)", left, dead, dead)
	keepLine := fmt.Sprintf("kept fstime leftover %s: a symbolic link", link)

	dry := rtload(t, nil, "cleanup", "--dry-run", "--dir", dir)
	if !strings.Contains(dry.stdout, "would remove "+removeLine) || !strings.Contains(dry.stdout, keepLine) {
		t.Errorf("cleanup --dry-run: exit %d\n%s%s\nwant lines %q and %q", dry.code, dry.stdout, dry.stderr, "would remove "+removeLine, keepLine)
	}
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("--dry-run removed %s: %v", left, err)
	}

	r := rtload(t, nil, "cleanup", "--dir", dir)
	if !strings.Contains(r.stdout, "removed "+removeLine) || !strings.Contains(r.stdout, keepLine) {
		t.Errorf("cleanup: exit %d\n%s%s\nwant lines %q and %q", r.code, r.stdout, r.stderr, "removed "+removeLine, keepLine)
	}
	if os.Geteuid() == 0 && r.code != 0 {
		t.Errorf("cleanup as root: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("after cleanup, %s: %v; want it removed", left, err)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("after cleanup, the link %s: %v; want it kept", link, err)
	}
}
