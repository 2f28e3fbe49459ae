package ansible

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rtload/rtload/internal/testutil"
)

// The role's own modules (roles/rtload/library), run on crafted input:
// what the fleet test's hostile hosts do over SSH, row by row and in a few
// seconds. Every row of a test goes to one Python process (moduleServer),
// which runs the module's main() once per row the way Ansible's own unit
// tests do (the arguments in basic._ANSIBLE_ARGS, the JSON result read
// from stdout): one interpreter start per test, not one per row.

// moduleDriver reads {"module": PATH, "args": {...}} lines on stdin and
// writes each run's JSON result as one line on stdout.
const moduleDriver = `
import contextlib, importlib.util, io, json, sys, traceback
sys.dont_write_bytecode = True  # no __pycache__ in the role's library
from ansible.module_utils import basic
mods = {}
for line in sys.stdin:
    req = json.loads(line)
    path = req["module"]
    if path not in mods:
        spec = importlib.util.spec_from_file_location("rtload_module_%d" % len(mods), path)
        mods[path] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mods[path])
    basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": req["args"]}).encode()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            mods[path].main()
    except SystemExit:
        pass
    except BaseException:
        out = io.StringIO(json.dumps({"failed": True, "msg": "driver: " + traceback.format_exc()}))
    res = out.getvalue().strip().splitlines()
    sys.stdout.write((res[-1] if res else json.dumps({"failed": True, "msg": "driver: no output"})) + "\n")
    sys.stdout.flush()
`

// moduleServer is one Python process running the role's modules for the
// rows of one test; safe for its parallel subtests.
type moduleServer struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

// newModuleServer starts the driver (under Ansible's own Python); it is
// stopped in t.Cleanup, after every subtest.
func newModuleServer(t *testing.T) *moduleServer {
	t.Helper()
	requireAnsibleModules(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, ansiblePython(t), "-c", moduleDriver)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("module driver: %v\n%s", err, stderr.String())
		}
		cancel()
	})
	return &moduleServer{in: in, out: bufio.NewReader(out)}
}

// run runs the role's module name with args and returns its JSON result
// (failed true when it failed).
func (s *moduleServer) run(t *testing.T, name string, args map[string]any) map[string]any {
	t.Helper()
	req, err := json.Marshal(map[string]any{"module": filepath.Join("roles/rtload/library", name+".py"), "args": args})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.in.Write(append(req, '\n')); err != nil {
		t.Fatalf("module driver: %v", err)
	}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("module driver: %v", err)
	}
	var res map[string]any
	if err := json.Unmarshal(line, &res); err != nil {
		t.Fatalf("%s %s: no JSON result (%v): %s", name, req, err, line)
	}
	if msg, _ := res["msg"].(string); strings.HasPrefix(msg, "driver: ") {
		t.Fatalf("%s %s: %s", name, req, msg)
	}
	return res
}

// requireAnsibleModules skips t without ansible-playbook and the Python
// it runs on (whose module_utils the modules import).
func requireAnsibleModules(t *testing.T) {
	t.Helper()
	testutil.Requires(t, testutil.System) // Debian's ansible-core (make test-setup installs it)
	requireTools(t, "ansible-playbook")
	py := ansiblePython(t)
	if out, err := exec.Command(py, "-c", "import ansible.module_utils.basic").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import ansible.module_utils.basic (apt-get install ansible-core): %v\n%s", py, err, out)
	}
}

// ansiblePython is the interpreter of ansible-playbook's #! line (a
// python3 first in PATH may be another one, without Ansible).
func ansiblePython(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("ansible-playbook")
	if err != nil {
		t.Skip("no ansible-playbook (apt-get install ansible-core)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b[:min(len(b), 256)]), "\n")
	f := strings.Fields(strings.TrimPrefix(line, "#!"))
	switch {
	case len(f) == 0:
		t.Fatalf("%s: no #! line", path)
	case filepath.Base(f[0]) == "env" && len(f) > 1:
		return f[1]
	}
	return f[0]
}

func failedMsg(res map[string]any) (bool, string, string) {
	failed, _ := res["failed"].(bool)
	msg, _ := res["msg"].(string)
	state, _ := res["rtload_state"].(string)
	return failed, msg, state
}

// TestLabel: the controller path is built from the inventory name and a
// kernel release that matched the pattern, never from whatever uname
// printed.
func TestLabel(t *testing.T) {
	t.Parallel()
	srv := newModuleServer(t)
	fleet := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fleet, "done", "6.1.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, host, kernel string
		wantErr            string // "" = accepted
	}{
		{"debian", "lab-icx", "6.1.0-18-amd64", ""},
		{"el9", "lab-zen4", "5.14.0-362.el9.x86_64", ""},
		{"rc plus", "h", "6.6.0-rc1+", ""},
		{"this machine's", "host0", "6.18.44-fc-v769", ""},
		{"an IPv6 inventory name", "2001:db8::1", "6.1.0", ""},
		{"up and out", "h", "../..", `uname -r printed "../..", which is not a kernel release`},
		{"up and into another directory", "h", "../../escaped", `printed "../../escaped"`},
		{"a slash", "h", "6.1/x", `printed "6.1/x"`},
		{"dot", "h", ".", `printed "."`},
		{"dot dot inside", "h", "6.1..0", `printed "6.1..0"`},
		{"empty", "h", "", `printed ""`},
		{"a second line", "h", "6.1.0\n../x", `printed "6.1.0\n../x"`},
		{"a terminal escape, shown escaped", "h", "6.1\x1b[2J", `printed "6.1\u001b[2J"`},
		{"over 64 characters, shown in part", "h", strings.Repeat("6", 100), `"` + strings.Repeat("6", 80) + `"… (100 characters)`},
		{"a slash in the inventory name", "a/b", "6.1.0", `inventory name "a/b" cannot name a directory`},
		{"dot dot as the inventory name", "..", "6.1.0", `inventory name ".."`},
		{"results already there", "done", "6.1.0", "/done/6.1.0 already holds results for done under 6.1.0; nothing was run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := srv.run(t, "rtload_fleet", map[string]any{"action": "label", "host": tc.host, "kernel": tc.kernel, "fleet_dir": fleet})
			failed, msg, _ := failedMsg(res)
			if tc.wantErr == "" {
				if failed || res["local"] != fleet+"/"+tc.host+"/"+tc.kernel {
					t.Errorf("refused or wrong path: %v", res)
				}
				return
			}
			if !failed || !strings.Contains(msg, tc.wantErr) {
				t.Errorf("got %v, want a failure with %q", res, tc.wantErr)
			}
			if strings.ContainsAny(msg, "\x1b\n") {
				t.Errorf("the message holds the host's control characters raw: %q", msg)
			}
		})
	}
}

// member is one entry of a test archive.
type member struct {
	name     string
	typeflag byte
	data     string
	link     string
}

func reg(name, data string) member { return member{name: name, typeflag: tar.TypeReg, data: data} }

// writeArchive writes members as a .tar.gz (or, with raw, the bytes as they are).
func writeArchive(t *testing.T, path string, members []member) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range members {
		hdr := &tar.Header{Name: m.name, Typeflag: m.typeflag, Mode: 0o4755, Size: int64(len(m.data)), Linkname: m.link, ModTime: time.Unix(1e9, 0), Uid: 4242, Gid: 4242}
		if m.typeflag != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Size > 0 {
			if _, err := tw.Write([]byte(m.data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUnpack: a fetched archive is unpacked only when it holds nothing but
// directories and regular files with plain names, within the bounds;
// anything else refuses it whole and leaves nothing behind.
func TestUnpack(t *testing.T) {
	t.Parallel()
	srv := newModuleServer(t)
	const secret = "/etc/shadow"
	good := []member{{name: "./", typeflag: tar.TypeDir}, reg("./summary.json", `{"degraded": true, "stopped": "yes"}`), reg("./wakeups-00-base-r0-timer.csv", "tick\n")}
	for _, tc := range []struct {
		name    string
		members []member
		raw     string // instead of members: these bytes as the archive
		args    map[string]any
		wantErr []string // "" = unpacked
	}{
		{name: "results", members: good},
		{name: "a file in a directory without its own member", members: []member{reg("sub/deeper/x.csv", "1\n")}},
		{name: "a symbolic link to a controller file", members: append(good[:2:2], member{name: "./wakeups-00-base-r0-timer.csv", typeflag: tar.TypeSymlink, link: secret}),
			wantErr: []string{`"wakeups-00-base-r0-timer.csv": a symbolic link`}},
		{name: "a hard link", members: append(good[:2:2], member{name: "./copy.json", typeflag: tar.TypeLink, link: "./summary.json"}),
			wantErr: []string{`"copy.json": a hard link`}},
		{name: "a FIFO", members: append(good[:2:2], member{name: "./summary.fifo", typeflag: tar.TypeFifo}), wantErr: []string{`"summary.fifo": a FIFO`}},
		{name: "a character device", members: []member{{name: "null", typeflag: tar.TypeChar}}, wantErr: []string{`"null": a character device`}},
		{name: "a block device", members: []member{{name: "sda", typeflag: tar.TypeBlock}}, wantErr: []string{`"sda": a block device`}},
		{name: "up and out", members: []member{reg("../../escaped", "x")}, wantErr: []string{`"../../escaped": a name with '..'`}},
		{name: "up from inside", members: []member{reg("a/../../b", "x")}, wantErr: []string{`a name with '..'`}},
		{name: "absolute", members: []member{reg("/etc/cron.d/x", "x")}, wantErr: []string{`"/etc/cron.d/x": an absolute name`}},
		{name: "a terminal escape in a name", members: []member{reg("a\x1b]0;pwned\x07", "x")}, wantErr: []string{`"a\u001b]0;pwned\u0007": the name holds control characters`}},
		{name: "a duplicate", members: []member{reg("a", "1"), reg("a", "2")}, wantErr: []string{`"a": a duplicate name`}},
		{name: "a directory where a file is", members: []member{reg("a", "1"), {name: "a/", typeflag: tar.TypeDir}}, wantErr: []string{`"a": a duplicate name`}},
		{name: "a file where a directory is", members: []member{{name: "a/", typeflag: tar.TypeDir}, reg("a", "1")}, wantErr: []string{`"a": a file where a directory is`}},
		{name: "too deep", members: []member{reg("1/2/3/4/5/6/7/8/9", "x")}, wantErr: []string{"deeper than 8 directories"}},
		{name: "more bytes than allowed", members: []member{reg("a", "12345"), reg("b", "67890")}, args: map[string]any{"max_bytes": 8},
			wantErr: []string{`"b": the files add up to more than 8 bytes (max_bytes)`}},
		{name: "more entries than allowed", members: []member{reg("a", ""), reg("b", ""), reg("c", "")}, args: map[string]any{"max_members": 2},
			wantErr: []string{"more than 2 entries (max_members)"}},
		{name: "not gzip", raw: "not an archive", wantErr: []string{"not a readable .tar.gz"}},
		{name: "every problem named", members: []member{{name: "l", typeflag: tar.TypeSymlink, link: secret}, {name: "f", typeflag: tar.TypeFifo}, reg("ok", "1")},
			wantErr: []string{`"l": a symbolic link`, `"f": a FIFO`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src, dest := filepath.Join(dir, "kernel.tar.gz"), filepath.Join(dir, "kernel")
			if tc.raw != "" {
				if err := os.WriteFile(src, []byte(tc.raw), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				writeArchive(t, src, tc.members)
			}
			args := map[string]any{"action": "unpack", "src": src, "dest": dest}
			for k, v := range tc.args {
				args[k] = v
			}
			res := srv.run(t, "rtload_fleet", args)
			failed, msg, state := failedMsg(res)
			left, _ := os.ReadDir(dir)
			if len(tc.wantErr) > 0 {
				if !failed || state != "rejected" || !containsAll(msg, tc.wantErr...) {
					t.Errorf("got %v, want rejected naming %q", res, tc.wantErr)
				}
				if strings.Contains(msg, secret) || strings.ContainsAny(msg, "\x1b\x07") {
					t.Errorf("the message quotes a link target or a raw control character: %q", msg)
				}
				// Nothing unpacked, no partial directory; the archive kept for a look.
				if len(left) != 1 || left[0].Name() != "kernel.tar.gz" {
					t.Errorf("left behind: %v", left)
				}
				return
			}
			if failed {
				t.Fatalf("refused: %v", res)
			}
			if len(left) != 1 || left[0].Name() != "kernel" {
				t.Errorf("after unpacking, the directory holds %v, want only kernel/ (the archive removed)", left)
			}
			filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
				if err != nil {
					t.Error(err)
					return nil
				}
				fi, _ := d.Info()
				st := fi.Sys().(*syscall.Stat_t)
				want := os.FileMode(0o644)
				if d.IsDir() {
					want = 0o755 | os.ModeDir
				}
				if fi.Mode() != want || st.Uid != uint32(os.Getuid()) {
					t.Errorf("%s: mode %v uid %d, want %v (the archive's 04755 and uid 4242 dropped), uid %d", p, fi.Mode(), st.Uid, want, os.Getuid())
				}
				return nil
			})
			if tc.name == "results" {
				sum, _ := res["summary"].(map[string]any)
				if sum["degraded"] != true || sum["stopped"] != nil {
					t.Errorf("summary flags %v, want degraded true and stopped unknown (a string is not a flag)", sum)
				}
			}
		})
	}
}

// TestCheckTree: a baseline to copy to the hosts holds only directories
// and regular files.
func TestCheckTree(t *testing.T) {
	t.Parallel()
	srv := newModuleServer(t)
	for _, tc := range []struct {
		name    string
		build   func(t *testing.T, dir string)
		wantErr string
	}{
		{"results", func(t *testing.T, dir string) {}, ""},
		{"a link to a controller file", func(t *testing.T, dir string) {
			if err := os.Symlink("/etc/shadow", filepath.Join(dir, "notes.txt")); err != nil {
				t.Fatal(err)
			}
		}, `"notes.txt": a symbolic link`},
		{"a link to a directory", func(t *testing.T, dir string) {
			if err := os.Symlink("/root", filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
		}, `"sub": a symbolic link`},
		{"a FIFO", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "summary.fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, `"summary.fifo": a FIFO`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "profiles"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.build(t, dir)
			pack := filepath.Join(t.TempDir(), "baseline.tar.gz")
			res := srv.run(t, "rtload_fleet", map[string]any{"action": "check_tree", "src": dir, "dest": pack, "top_name": "baseline-x"})
			failed, msg, state := failedMsg(res)
			if tc.wantErr == "" {
				if failed {
					t.Fatalf("refused: %v", res)
				}
				checkPack(t, pack, map[string]string{"baseline-x/": "d 0755", "baseline-x/profiles/": "d 0755", "baseline-x/summary.json": "- 0644"})
				return
			}
			if _, err := os.Lstat(pack); !os.IsNotExist(err) {
				t.Errorf("a refused baseline was packed (lstat: %v)", err)
			}
			if !failed || state != "invalid" || !containsAll(msg, "refused, nothing copied", tc.wantErr) || strings.Contains(msg, "/etc/shadow") {
				t.Errorf("got %v, want invalid naming %q (and no link target)", res, tc.wantErr)
			}
		})
	}
}

// TestWorkdir: the host's working directory is root's alone, under
// parents no one else can change, or it is refused.
func TestWorkdir(t *testing.T) {
	// Not parallel: it takes the real-time test lock (root), which a
	// parallel test must not hold (testutil.Requires).
	testutil.Requires(t, testutil.Root)
	srv := newModuleServer(t)
	const nobody = 65534
	for _, tc := range []struct {
		name    string
		build   func(t *testing.T, top string) string // returns the path to ask for
		args    map[string]any
		wantErr string // "" = accepted
		want    os.FileMode
	}{
		{name: "new, under root's directories", build: func(t *testing.T, top string) string { return filepath.Join(top, "lib", "rtload") }, want: 0o700},
		{name: "new, in a sticky world-writable directory (/var/tmp)", build: func(t *testing.T, top string) string {
			return filepath.Join(mkdir(t, top, "tmp", 0o1777, 0), "rtload")
		}, want: 0o700},
		{name: "root's, 0755 from an earlier role: made 0700", build: func(t *testing.T, top string) string {
			return mkdir(t, top, "rtload", 0o755, 0)
		}, want: 0o700},
		{name: "an install directory, 0755: left as it is", build: func(t *testing.T, top string) string {
			return mkdir(t, top, "bin", 0o755, 0)
		}, args: map[string]any{"mode": "0755", "exact_mode": false}, want: 0o755},
		{name: "made first by another user in /var/tmp", build: func(t *testing.T, top string) string {
			return mkdir(t, mkdir(t, top, "tmp", 0o1777, 0), "rtload", 0o777, nobody)
		}, wantErr: "rtload is owned by uid 65534 (nobody), not by uid 0 (root), which rtload runs as: another local user may have made it first"},
		{name: "root's but writable by others", build: func(t *testing.T, top string) string {
			return mkdir(t, top, "rtload", 0o777, 0)
		}, wantErr: "rtload is writable by others (mode 0777)"},
		{name: "a link to root's directory", build: func(t *testing.T, top string) string {
			mkdir(t, top, "real", 0o700, 0)
			link := filepath.Join(top, "rtload")
			if err := os.Symlink(filepath.Join(top, "real"), link); err != nil {
				t.Fatal(err)
			}
			return link
		}, wantErr: "rtload is a symbolic link"},
		{name: "a file", build: func(t *testing.T, top string) string {
			p := filepath.Join(top, "rtload")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, wantErr: "rtload is not a directory"},
		{name: "a parent of another user's", build: func(t *testing.T, top string) string {
			return filepath.Join(mkdir(t, top, "theirs", 0o755, nobody), "rtload")
		}, wantErr: "theirs is owned by uid 65534 (nobody)"},
		{name: "a parent writable by everyone, not sticky", build: func(t *testing.T, top string) string {
			return filepath.Join(mkdir(t, top, "open", 0o777, 0), "rtload")
		}, wantErr: "open is writable by others (mode 0777, not sticky)"},
		{name: "a parent reached through root's link", build: func(t *testing.T, top string) string {
			mkdir(t, top, "real", 0o755, 0)
			if err := os.Symlink("real", filepath.Join(top, "via")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(top, "via", "rtload")
		}, want: 0o700},
		{name: "a parent reached through another user's link", build: func(t *testing.T, top string) string {
			tmp := mkdir(t, top, "tmp", 0o1777, 0)
			mkdir(t, top, "real", 0o755, 0)
			link := filepath.Join(tmp, "via")
			if err := os.Symlink(filepath.Join(top, "real"), link); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(link, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(link, "rtload")
		}, wantErr: "via is owned by uid 65534 (nobody)"},
		{name: "a link leading somewhere unsafe", build: func(t *testing.T, top string) string {
			open := mkdir(t, top, "open", 0o777, 0)
			if err := os.Symlink(open, filepath.Join(top, "via")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(top, "via", "rtload")
		}, wantErr: "open is writable by others (mode 0777, not sticky)"},
		{name: "relative", build: func(t *testing.T, top string) string { return "var/lib/rtload" }, wantErr: "not an absolute, normalised path"},
		{name: "not normalised", build: func(t *testing.T, top string) string { return top + "/a/../rtload" }, wantErr: "not an absolute, normalised path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			top := t.TempDir()
			if err := os.Chmod(top, 0o755); err != nil {
				t.Fatal(err)
			}
			mkdir(t, top, "lib", 0o755, 0)
			path := tc.build(t, top)
			dir := map[string]any{"path": path, "what": "rtload_remote_dir"}
			for k, v := range tc.args {
				dir[k] = v
			}
			res := srv.run(t, "rtload_workdir", map[string]any{"dirs": []any{dir}})
			failed, msg, state := failedMsg(res)
			if tc.wantErr != "" {
				if !failed || !strings.Contains(msg, tc.wantErr) {
					t.Errorf("got %v, want a refusal with %q", res, tc.wantErr)
				}
				if want := map[bool]string{true: "invalid", false: "rejected"}[strings.Contains(tc.wantErr, "normalised")]; state != want {
					t.Errorf("rtload_state %q, want %s", state, want)
				}
				return
			}
			if failed {
				t.Fatalf("refused: %v", res)
			}
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != tc.want || st.Uid != 0 {
				t.Errorf("%s: %v uid %d, want a directory of root's with mode %v", path, fi.Mode(), st.Uid, tc.want)
			}
		})
	}
}

// mkdir makes top/name with mode (exactly) owned by uid and returns it.
func mkdir(t *testing.T, top, name string, mode os.FileMode, uid int) string {
	t.Helper()
	p := filepath.Join(top, name)
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	perm := mode.Perm()
	if mode&0o1000 != 0 {
		perm |= os.ModeSticky
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWrite: the controller's own files (status, compare, rtload's output)
// are written under the fleet directory only, replacing whatever was
// there (a link included) rather than writing through it.
func TestWrite(t *testing.T) {
	t.Parallel()
	srv := newModuleServer(t)
	fleet := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	writeFile(t, victim, "precious\n", 0o600)
	symlink(t, victim, filepath.Join(fleet, "status.txt"))
	for _, tc := range []struct {
		name, file string
		wantErr    string // "" = written
	}{
		{"a fleet file, replacing a link", "status.txt", ""},
		{"a host's file, making its directory", "host0/status-20261201T000000Z.json", ""},
		{"a host's log", "host0/6.1.0-18-amd64.log", ""},
		{"up and out", "../escaped", `write "../escaped": not one or two plain names`},
		{"three deep", "a/b/c", `write "a/b/c": not one or two plain names`},
		{"absolute", "/etc/passwd", `write "/etc/passwd": not one or two plain names`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.run(t, "rtload_fleet", map[string]any{"action": "write", "fleet_dir": fleet,
				"files": []any{map[string]any{"name": tc.file, "content": "written\n"}}})
			failed, msg, _ := failedMsg(res)
			if tc.wantErr != "" {
				if !failed || !strings.Contains(msg, tc.wantErr) {
					t.Errorf("got %v, want a refusal with %q", res, tc.wantErr)
				}
				return
			}
			b, err := os.ReadFile(filepath.Join(fleet, tc.file))
			fi, _ := os.Lstat(filepath.Join(fleet, tc.file))
			if failed || err != nil || string(b) != "written\n" || fi == nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
				t.Errorf("got %v; file %q (%v), mode %v", res, b, err, fi)
			}
		})
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
		t.Errorf("written through the link: %q (%v)", b, err)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(fleet), "escaped")); !os.IsNotExist(err) {
		t.Errorf("../escaped was written (lstat: %v)", err)
	}
}

// checkPack checks that the .tar.gz path holds exactly want: member name →
// "d 0755" or "- 0644" (type and mode), every member owned by root.
func checkPack(t *testing.T, path string, want map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	got := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kind := map[byte]string{tar.TypeDir: "d", tar.TypeReg: "-"}[hdr.Typeflag]
		if kind == "" {
			kind = string(hdr.Typeflag)
		}
		name := hdr.Name
		if hdr.Typeflag == tar.TypeDir && !strings.HasSuffix(name, "/") {
			name += "/"
		}
		got[name] = fmt.Sprintf("%s %04o", kind, hdr.Mode)
		if hdr.Uid != 0 || hdr.Gid != 0 {
			t.Errorf("%s: owned by %d:%d, want root", name, hdr.Uid, hdr.Gid)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s members (-want +got):\n%s", path, diff)
	}
}
