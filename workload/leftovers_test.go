package workload_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/workload"
)

func TestParseLeftoverName(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"rtload-fstime-4242-3096535059", 4242, true}, // os.MkdirTemp's decimal suffix
		{"rtload-fstime-4242-0badc0de", 4242, true},   // a file_write dir's hex suffix
		{"rtload-fstime-2147483647-1", 2147483647, true},
		{"rtload-fstime-3096535059", 0, false}, // an older rtload's temp dir: no pid
		{"rtload-fstime-0-1", 0, false},        // pid 0
		{"rtload-fstime-042-1", 0, false},      // leading zero
		{"rtload-fstime-+42-1", 0, false},      // sign
		{"rtload-fstime-2147483648-1", 0, false},
		{"rtload-fstime-42-", 0, false},
		{"rtload-fstime-42-XYZ", 0, false},
		{"rtload-fstime-42-1/..", 0, false},
		{"rtload-fstime-42-" + strings.Repeat("1", 21), 0, false},
		{"fstime", 0, false},
		{"rtl42-0badc0de", 0, false}, // a namespace name, not ours here
	} {
		if pid, ok := workload.ParseLeftoverName(tc.name); pid != tc.pid || ok != tc.ok {
			t.Errorf("parseLeftoverName(%q) = %d, %v; want %d, %v", tc.name, pid, ok, tc.pid, tc.ok)
		}
	}
}

// TestSweepLeftovers fills a directory with entries named like FileWrite
// leftovers: only those of a dead pid that are this user's directories or
// regular files go; a live pid's, a link (and its target), another
// user's file and an old-style name stay, each with its reason.
func TestSweepLeftovers(t *testing.T) {
	testutil.Requires(t, testutil.Root) // to give a file to nobody
	dir := t.TempDir()
	dead := testutil.DeadPID(t)
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := func(pid int, suffix string) string { return fmt.Sprintf("rtload-fstime-%d-%s", pid, suffix) }
	mustDo(t, os.MkdirAll(filepath.Join(dir, name(dead, "1"), "sub"), 0o700))
	mustDo(t, os.WriteFile(filepath.Join(dir, name(dead, "1"), "fstime"), []byte("x"), 0o600))
	mustDo(t, os.Symlink(outside, filepath.Join(dir, name(dead, "1"), "link"))) // removed, not followed
	mustDo(t, os.WriteFile(filepath.Join(dir, name(dead, "0badc0de")), []byte("x"), 0o600))
	mustDo(t, os.Mkdir(filepath.Join(dir, name(os.Getpid(), "2")), 0o700))
	mustDo(t, os.Symlink(filepath.Dir(outside), filepath.Join(dir, name(dead, "3"))))
	mustDo(t, os.WriteFile(filepath.Join(dir, name(dead, "4")), nil, 0o600))
	mustDo(t, os.Chown(filepath.Join(dir, name(dead, "4")), 65534, 65534))
	mustDo(t, os.Mkdir(filepath.Join(dir, "rtload-fstime-5"), 0o700))

	want := map[string]struct {
		stale bool
		why   string
	}{
		name(dead, "1"):        {true, fmt.Sprintf("owner pid %d is gone (no /proc/%d)", dead, dead)},
		name(dead, "0badc0de"): {true, "is gone"},
		name(os.Getpid(), "2"): {false, "is running"},
		name(dead, "3"):        {false, "a symbolic link"},
		name(dead, "4"):        {false, "owned by uid 65534"},
	}
	list, err := workload.ListLeftovers(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(want) {
		t.Errorf("ListLeftovers found %d entries, want %d: %+v", len(list), len(want), list)
	}
	for _, l := range list {
		w, ok := want[filepath.Base(l.Path)]
		if !ok || l.Stale != w.stale || !strings.Contains(l.Why, w.why) {
			t.Errorf("%s: stale %v, %q; want %v, %q", l.Path, l.Stale, l.Why, w.stale, w.why)
		}
	}

	removed, err := workload.SweepLeftovers(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 {
		t.Errorf("SweepLeftovers removed %+v; want the dead pid's directory and file", removed)
	}
	for n, w := range want {
		_, err := os.Lstat(filepath.Join(dir, n))
		if gone := os.IsNotExist(err); gone != w.stale {
			t.Errorf("%s after SweepLeftovers: %v; want removed %v", n, err, w.stale)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "rtload-fstime-5")); err != nil {
		t.Errorf("old-style rtload-fstime-5: %v; want it kept (no pid to judge)", err)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
		t.Errorf("link target after SweepLeftovers: %q, %v", b, err)
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// childEnv makes TestLeftoverAfterSIGKILL's child create a FileWrite,
// print its path and wait to be killed.
const childEnv = "RTLOAD_WORKLOAD_TEST_FILEWRITE_CHILD"

// TestLeftoverAfterSIGKILL kills (SIGKILL) a process holding a FileWrite
// without Dir: its directory survives, ListLeftovers calls it stale and
// SweepLeftovers removes it.
func TestLeftoverAfterSIGKILL(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		f, err := workload.NewFileWrite(workload.FileWriteConfig{Block: 16, Blocks: 4})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(f.Path())
		// Wait to be killed: stdin is a pipe the parent holds open until
		// after the kill (EOF, should the parent die first, ends us too).
		io.Copy(io.Discard, os.Stdin)
		os.Exit(2)
	}
	tmp := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestLeftoverAfterSIGKILL$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	path := strings.TrimSpace(line)
	if err != nil || !strings.HasPrefix(path, tmp) {
		t.Fatalf("child printed %q (%v); want a path under %s", line, err, tmp)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the killed child's file %s: %v; want it left behind", path, err)
	}
	removed, err := workload.SweepLeftovers(tmp)
	if err != nil || len(removed) != 1 || removed[0].Path != filepath.Dir(path) || removed[0].PID != cmd.Process.Pid {
		t.Fatalf("SweepLeftovers = %+v, %v; want the child's directory %s (pid %d)", removed, err, filepath.Dir(path), cmd.Process.Pid)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("after SweepLeftovers: %v; want the directory gone", err)
	}
}
