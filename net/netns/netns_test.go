package netns

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/rt"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { testutil.Main(m) }

func TestNameRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		pid   int
		runID string
	}{
		{1, "0000000a"},
		{4242, "0badc0de"},
		{4194304, "dead0001"},    // pid_max on 64-bit
		{2147483647, "ffffffff"}, // largest pid_t
		{17, NewRunID()},
	} {
		name := Name(tc.pid, tc.runID)
		pid, runID, ok := ParseName(name)
		if !ok || pid != tc.pid || runID != tc.runID {
			t.Errorf("ParseName(%q) = %d, %q, %v; want %d, %q, true", name, pid, runID, ok, tc.pid, tc.runID)
		}
	}
}

func TestParseNameRejects(t *testing.T) {
	for _, tc := range []struct{ name, why string }{
		{"", "empty"},
		{"cni-1234", "another tool's namespace"},
		{"rtl", "prefix only"},
		{"rtl12", "no run id separator"},
		{"rtl12-", "empty run id"},
		{"rtl-1-x", "empty pid"},
		{"rtlabc-x", "pid not a number"},
		{"rtltest-foreign-1234", "starts with rtl but is not ours"},
		{"rtl0-x", "pid 0"},
		{"rtl012-x", "leading zero: one spelling per pid"},
		{"rtl+12-x", "signed pid"},
		{"rtl-12-x", "negative pid"},
		{"rtl2147483648-x", "pid beyond pid_t"},
		{"rtl99999999999-x", "pid overflow"},
		{"rtl12-AB", "upper case run id"},
		{"rtl12-a-b", "dash in run id"},
		{"rtl12-a.b", "dot in run id"},
		{"rtl12-0badc0de0", "run id too long"},
		{"rtl12-0badc0d", "run id too short"},
		{"rtl12-x", "run id not NewRunID's form"},
		{"rtl8192-wifi", "a Realtek-like name: run id not hex"},
		{"rtl12-0badc0dg", "run id not hex"},
		{"RTL12-x", "prefix is case sensitive"},
		{" rtl12-x", "leading space"},
		{"rtl12-x\n", "trailing newline"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			if pid, runID, ok := ParseName(tc.name); ok {
				t.Errorf("ParseName(%q) = %d, %q, true; want ok false", tc.name, pid, runID)
			}
		})
	}
}

func TestNewRunID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		id := NewRunID()
		if len(id) != 8 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("NewRunID() = %q, want 8 lowercase hex chars", id)
		}
		if seen[id] {
			t.Fatalf("NewRunID() repeated %q in 100 calls", id)
		}
		seen[id] = true
	}
}

func TestNewRejectsBadRunID(t *testing.T) {
	for _, id := range []string{"", "A", "a-b", "../x", strings.Repeat("a", 33)} {
		if n, err := New(id); err == nil || !strings.Contains(err.Error(), "run id") {
			n.Close()
			t.Errorf("New(%q) = %v; want a run id error", id, err)
		}
	}
}

func TestPrivilegeErrorText(t *testing.T) {
	n := &NS{name: "rtl1-x"}
	err := n.syscallError("unshare(CLONE_NEWNET)", unix.EPERM)
	want := "netns rtl1-x: unshare(CLONE_NEWNET): needs CAP_SYS_ADMIN: operation not permitted (private network namespaces need root; --allow-degraded cannot replace them)"
	if got := err.Error(); got != want {
		t.Errorf("error\n got %q\nwant %q", got, want)
	}
	var pe *rt.PrivilegeError
	if !errors.Is(err, rt.ErrNoPrivilege) || !errors.As(err, &pe) || pe.Cap != "CAP_SYS_ADMIN" || !errors.Is(err, unix.EPERM) {
		t.Errorf("error %v: want a *rt.PrivilegeError for CAP_SYS_ADMIN wrapping EPERM", err)
	}
	if err := n.syscallError("unshare(CLONE_NEWNET)", unix.EACCES); !errors.Is(err, rt.ErrNoPrivilege) {
		t.Errorf("EACCES: %v is not ErrNoPrivilege", err)
	}
	err = n.syscallError("unshare(CLONE_NEWNET)", unix.ENOMEM)
	if errors.Is(err, rt.ErrNoPrivilege) || err.Error() != "netns rtl1-x: unshare(CLONE_NEWNET): cannot allocate memory" {
		t.Errorf("ENOMEM: %v", err)
	}
}

// nsInode returns the inode of the calling thread's network namespace.
func nsInode(t testing.TB) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// threadsIn lists the tids of this process whose network namespace is not
// the inode want.
func threadsNotIn(t testing.TB, want uint64) []string {
	t.Helper()
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, d := range tids {
		var st unix.Stat_t
		if err := unix.Stat("/proc/self/task/"+d.Name()+"/ns/net", &st); err != nil {
			continue // the thread exited
		}
		if st.Ino != want {
			bad = append(bad, d.Name())
		}
	}
	return bad
}

// newNS creates a namespace for a test and closes it in t.Cleanup.
func newNS(t *testing.T) *NS {
	t.Helper()
	n, err := New(NewRunID())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	return n
}

func TestNewDoClose(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	host := nsInode(t)

	n := newNS(t)
	if want := "rtl" + strconv.Itoa(os.Getpid()) + "-"; !strings.HasPrefix(n.Name(), want) {
		t.Errorf("Name() = %q, want prefix %q", n.Name(), want)
	}
	if got, want := n.Path(), filepath.Join(Dir, n.Name()); got != want {
		t.Errorf("Path() = %q, want %q", got, want)
	}
	var st unix.Stat_t
	if err := unix.Stat(n.Path(), &st); err != nil {
		t.Fatalf("stat %s: %v", n.Path(), err)
	}
	inside := st.Ino
	if inside == host {
		t.Fatalf("%s is the host namespace (inode %d)", n.Path(), host)
	}
	if got := nsInode(t); got != host {
		t.Fatalf("New moved the calling thread: netns inode %d, was %d", got, host)
	}
	if bad := threadsNotIn(t, host); len(bad) > 0 {
		t.Errorf("after New, threads %v are not in the host namespace", bad)
	}

	// lo is up inside, as seen through a handle in the namespace.
	h, err := n.Handle()
	if err != nil {
		t.Fatal(err)
	}
	lo, err := h.LinkByName("lo")
	h.Close()
	if err != nil {
		t.Fatal(err)
	}
	if lo.Attrs().Flags&net.FlagUp == 0 {
		t.Errorf("lo flags %v: not up", lo.Attrs().Flags)
	}

	// Do runs inside, on a thread that is not the caller's.
	var doIno uint64
	if err := n.Do(func() error { doIno = nsInode(t); return nil }); err != nil {
		t.Fatal(err)
	}
	if doIno != inside {
		t.Errorf("inside Do: netns inode %d, want %d (the namespace's)", doIno, inside)
	}
	if got := nsInode(t); got != host {
		t.Errorf("Do moved the calling thread: netns inode %d, was %d", got, host)
	}
	if bad := threadsNotIn(t, host); len(bad) > 0 {
		t.Errorf("after Do, threads %v are not in the host namespace", bad)
	}

	wantErr := errors.New("from f")
	if err := n.Do(func() error { return wantErr }); err != wantErr {
		t.Errorf("Do returned %v, want f's error", err)
	}

	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(n.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Close, stat %s: %v; want not exist", n.Path(), err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := n.Do(func() error { t.Error("f ran after Close"); return nil }); err == nil {
		t.Error("Do after Close: no error")
	}
	var nilNS *NS
	if err := nilNS.Close(); err != nil {
		t.Errorf("nil Close: %v", err)
	}
}

func TestDoPanicAndGoexit(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	n := newNS(t)
	host := nsInode(t)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic from f", r)
			}
		}()
		n.Do(func() error { panic("boom") })
	}()
	if err := n.Do(func() error { runtime.Goexit(); return nil }); err == nil || !strings.Contains(err.Error(), "Goexit") {
		t.Errorf("Do(Goexit) = %v", err)
	}
	if bad := threadsNotIn(t, host); len(bad) > 0 {
		t.Errorf("threads %v are not in the host namespace", bad)
	}
}

func TestNewNameInUse(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	n := newNS(t)
	_, err := newNamed(n.Name())
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), n.Path()) {
		t.Errorf("second newNamed(%s) = %v; want an error naming %s", n.Name(), err, n.Path())
	}
	// The first one is untouched and still a namespace.
	if err := n.Do(func() error { return nil }); err != nil {
		t.Errorf("Do on the original after the clash: %v", err)
	}
}

// udpSocket opens a blocking UDP socket bound to 127.0.0.1:port and closes
// it in t.Cleanup; it returns the fd and the bound port.
func udpSocket(t *testing.T, port int) (int, int) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind 127.0.0.1:%d: %v", port, err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fd, sa.(*unix.SockaddrInet4).Port
}

// recvWithin waits up to 5 s for a datagram on fd and returns it.
func recvWithin(t *testing.T, fd int) string {
	t.Helper()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(5 * time.Second)
	for {
		ms := int(time.Until(deadline).Milliseconds())
		if ms <= 0 {
			t.Fatal("no datagram within 5s")
		}
		n, err := unix.Poll(pfd, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
	}
	buf := make([]byte, 64)
	n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func TestSocketStaysInNamespace(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	n := newNS(t)

	// A host socket on port P, and one on the same port inside: each
	// namespace has its own port space and its own 127.0.0.1.
	hostFD, port := udpSocket(t, 0)
	var nsFD int
	if err := n.Do(func() error { nsFD, _ = udpSocket(t, port); return nil }); err != nil {
		t.Fatal(err)
	}
	to := &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}

	// From the host, 127.0.0.1:P is the host socket; the one inside,
	// though used from this (host) thread, sees nothing.
	if err := unix.Sendto(hostFD, []byte("from host"), 0, to); err != nil {
		t.Fatal(err)
	}
	if got := recvWithin(t, hostFD); got != "from host" {
		t.Fatalf("host socket got %q", got)
	}
	buf := make([]byte, 64)
	if _, _, err := unix.Recvfrom(nsFD, buf, unix.MSG_DONTWAIT); err != unix.EAGAIN {
		t.Fatalf("recv inside after a host send: %v, want EAGAIN", err)
	}

	// From a socket made inside, 127.0.0.1:P is the socket inside.
	if err := n.Do(func() error {
		fd, _ := udpSocket(t, 0)
		return unix.Sendto(fd, []byte("from inside"), 0, to)
	}); err != nil {
		t.Fatal(err)
	}
	if got := recvWithin(t, nsFD); got != "from inside" {
		t.Fatalf("socket inside got %q", got)
	}
	if _, _, err := unix.Recvfrom(hostFD, buf, unix.MSG_DONTWAIT); err != unix.EAGAIN {
		t.Fatalf("recv on host after a send inside: %v, want EAGAIN", err)
	}
}

func TestDoConcurrent(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	n := newNS(t)
	var st unix.Stat_t
	if err := unix.Stat(n.Path(), &st); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 8)
	for i := 0; i < cap(errc); i++ {
		go func() {
			errc <- n.Do(func() error {
				var in unix.Stat_t
				if err := unix.Stat("/proc/thread-self/ns/net", &in); err != nil {
					return err
				}
				if in.Ino != st.Ino {
					return errors.New("Do ran outside the namespace")
				}
				return nil
			})
		}()
	}
	timeout := time.After(10 * time.Second)
	for i := 0; i < cap(errc); i++ {
		select {
		case err := <-errc:
			if err != nil {
				t.Error(err)
			}
		case <-timeout:
			t.Fatal("concurrent Do calls did not finish within 10s")
		}
	}
}

// mustNamed creates the namespace name and deletes it in t.Cleanup unless
// it is already gone.
func mustNamed(t *testing.T, name string) *NS {
	t.Helper()
	n, err := newNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	return n
}

func TestSweep(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	deadPID := testutil.DeadPID(t)
	dead := mustNamed(t, Name(deadPID, "dead0001"))
	live := mustNamed(t, Name(os.Getpid(), "5afe0001"))
	foreign := mustNamed(t, "rtltest-foreign-"+NewRunID())
	// Files named like a dead run's namespace that rtload never makes:
	// none may be touched, and a link's target least of all.
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	planted := map[string]string{} // name → what List must say
	plant := func(runID, why string, mk func(path string) error) {
		name := Name(deadPID, runID)
		path := filepath.Join(Dir, name)
		if err := mk(path); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(path) })
		planted[name] = why
	}
	plant("11a7e001", "symbolic link", func(p string) error { return os.Symlink(target, p) })
	plant("d1200001", "a directory", func(p string) error { return os.Mkdir(p, 0o700) })
	plant("f11e0001", "a file of 4 bytes", func(p string) error { return os.WriteFile(p, []byte("data"), 0o600) })
	plant("0b0d0001", "owned by uid 65534", func(p string) error {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	})

	entries, err := List()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]Entry{}
	for _, e := range entries {
		found[e.Name] = e
	}
	if _, ok := found[foreign.Name()]; ok {
		t.Errorf("List includes %s, which ParseName rejects", foreign.Name())
	}
	for _, tc := range []struct {
		n     *NS
		alive bool
		why   string
	}{{dead, false, fmt.Sprintf("owner pid %d is gone (no /proc/%d)", deadPID, deadPID)}, {live, true, "is running"}} {
		pid, runID, _ := ParseName(tc.n.Name())
		got := found[tc.n.Name()]
		want := Entry{Name: tc.n.Name(), PID: pid, RunID: runID, Alive: tc.alive, Why: got.Why}
		if diff := cmp.Diff(want, got); diff != "" || !strings.Contains(got.Why, tc.why) {
			t.Errorf("List entry (-want +got):\n%s\nWhy %q, want %q in it", diff, got.Why, tc.why)
		}
	}
	for name, why := range planted {
		if e := found[name]; !e.Foreign || e.Stale() || !strings.Contains(e.Why, why) {
			t.Errorf("planted %s listed as %+v; want Foreign, not Stale, Why saying %q", name, e, why)
		}
	}

	removed, err := Sweep()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, e := range removed {
		names[e.Name] = e.Why
	}
	if why, ok := names[dead.Name()]; !ok || !strings.Contains(why, "is gone") {
		t.Errorf("Sweep removed %v; want the dead run's %s with its reason", names, dead.Name())
	}
	for _, n := range []*NS{live, foreign} {
		if _, ok := names[n.Name()]; ok {
			t.Errorf("Sweep removed %s", n.Name())
		}
		if err := n.Do(func() error { return nil }); err != nil {
			t.Errorf("%s after Sweep: %v", n.Name(), err)
		}
	}
	for name := range planted {
		if _, ok := names[name]; ok {
			t.Errorf("Sweep removed planted %s", name)
		}
		if _, err := os.Lstat(filepath.Join(Dir, name)); err != nil {
			t.Errorf("planted %s after Sweep: %v", name, err)
		}
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep" {
		t.Errorf("link target after Sweep: %q, %v", b, err)
	}
	if _, err := os.Stat(dead.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Sweep, stat %s: %v; want not exist", dead.Path(), err)
	}
	// Close of a swept namespace is not an error (the Cleanup checks it).
}

// childEnv marks the re-executed, unprivileged test binary.
const childEnv = "RTLOAD_NETNS_TEST_UNPRIVILEGED"

// TestNewUnprivileged proves that New needs CAP_SYS_ADMIN: as nobody it
// fails with a *rt.PrivilegeError and leaves nothing in Dir. As root the
// test re-executes itself as nobody.
func TestNewUnprivileged(t *testing.T) {
	if os.Getenv(childEnv) != "" || os.Geteuid() != 0 {
		checkUnprivileged(t)
		return
	}
	testutil.RunTestAsNobody(t, "TestNewUnprivileged", childEnv)
}

func checkUnprivileged(t *testing.T) {
	if len(testutil.Unmet(testutil.Cap("CAP_SYS_ADMIN"))) == 0 {
		t.Skip("CAP_SYS_ADMIN in the effective set: New is permitted")
	}
	runID := NewRunID()
	n, err := New(runID)
	if n != nil {
		n.Close()
		t.Fatalf("New unprivileged returned %s", n.Name())
	}
	t.Logf("New as euid %d: %v", os.Geteuid(), err)
	if !errors.Is(err, rt.ErrNoPrivilege) {
		t.Fatalf("New unprivileged: %v; want ErrNoPrivilege", err)
	}
	for _, want := range []string{"needs CAP_SYS_ADMIN", "private network namespaces need root"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(Dir, Name(os.Getpid(), runID))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("New left %s behind: %v", Name(os.Getpid(), runID), err)
	}
}
