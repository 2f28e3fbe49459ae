package ansible

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// sshPort is where every test host's sshd listens (inside its own
// namespace, so the same port on each).
const sshPort = 2022

// sshdPath is sshd's absolute path: sshd re-executes itself per connection
// and refuses a relative one.
const sshdPath = "/usr/sbin/sshd"

// nsHost is one "host" of the fleet test: sshd started in a network
// namespace of its own (clone(CLONE_NEWNET)), reached from the root
// namespace through a veth pair; with own, in a mount namespace of its
// own too.
type nsHost struct {
	name string
	dir  string         // this host's files: keys, sshd_config, install and results dirs
	addr netip.Addr     // the host's address (namespace side of the veth)
	veth string         // root-namespace end of the veth pair
	pub  string         // host public key line, "ssh-ed25519 AAAA… comment"
	own  *ownFS         // nil: the host shares the machine's filesystem
	vars map[string]any // inventory variables beyond the common ones (a nil value removes one)

	sshd *exec.Cmd
	log  *syncBuffer // sshd's log (-e: to stderr)
	ns   vnetns.NsHandle
}

// ownFS makes a host's filesystem partly its own: sshd starts in a new
// mount namespace (made private first, so nothing propagates back) with a
// tmpfs over each of Tmpfs and each of Binds' files mounted over its
// target, then Setup (sh) runs there as root. Everything vanishes with the
// namespace's last process: nothing is mounted on the machine itself.
type ownFS struct {
	Tmpfs []string    // e.g. /var/lib, /var/tmp (mode 1777 for a tmp dir)
	Binds [][2]string // {source on the test's filesystem, target in the host}
	Setup string      // shell commands, after the mounts
	SSHD  string      // lines added at the end of sshd_config (Match blocks)
}

// script is the sh -c text that builds the namespace and execs sshd.
func (o *ownFS) script(cfg string) string {
	var b strings.Builder
	b.WriteString("set -eu\nmount --make-rprivate /\n")
	for _, d := range o.Tmpfs {
		mode := "0755"
		if strings.HasSuffix(d, "/tmp") {
			mode = "1777"
		}
		fmt.Fprintf(&b, "mount -t tmpfs -o mode=%s,size=256m rtload-fleet-test %s\n", mode, shellQuote(d))
	}
	for _, bd := range o.Binds {
		fmt.Fprintf(&b, "mount --bind %s %s\n", shellQuote(bd[0]), shellQuote(bd[1]))
	}
	b.WriteString(o.Setup)
	fmt.Fprintf(&b, "\nexec %s -D -e -f %s\n", sshdPath, shellQuote(cfg))
	return b.String()
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// root is the host's / as the test sees it: its own mounts through
// /proc/PID/root of sshd, else the machine's.
func (h *nsHost) root() string {
	if h.own == nil {
		return "/"
	}
	return fmt.Sprintf("/proc/%d/root", h.sshd.Process.Pid)
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// keygen writes a throwaway ed25519 key pair to path and path.pub and
// returns the public key line.
func keygen(t *testing.T, path string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rtload-fleet-test", "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen %s: %v\n%s", path, err, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(pub))
}

// privsepDir makes sure /run/sshd (sshd's compiled-in privilege separation
// chroot) exists, and removes it afterwards when this test created it.
func privsepDir(t *testing.T) {
	t.Helper()
	const dir = "/run/sshd"
	if _, err := os.Stat(dir); err == nil {
		return
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("sshd needs %s: %v", dir, err)
	}
	t.Cleanup(func() { os.Remove(dir) }) // only if still empty
}

// freeSubnet returns a /24 in 198.19.0.0/16 that no address of the root
// namespace falls into, trying at most 50, starting from one derived from
// the pid so that concurrent test binaries pick different ones.
func freeSubnet(t *testing.T) netip.Prefix {
	t.Helper()
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatalf("list addresses: %v", err)
	}
	for i := 0; i < 50; i++ {
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, byte(200 + (os.Getpid()+i)%50), 0}), 24)
		used := false
		for _, a := range addrs {
			if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok && p.Contains(ip) {
				used = true
				break
			}
		}
		if !used {
			return p
		}
	}
	t.Fatal("no free /24 in 198.19.200.0–198.19.249.0")
	return netip.Prefix{}
}

// startHost starts host i named name: sshd in a new network namespace
// (and with own a mount namespace) listening on sshPort, with hostKey and
// clients' keys in authorizedKeys, then a veth pair with
// 198.19.x.(16i+1)/30 on the root side and .(16i+2)/30 inside.
// Everything is removed in t.Cleanup: the veth, sshd's process group and
// any process left in its namespace (and with it the mount namespace).
func startHost(t *testing.T, i int, name string, own *ownFS, subnet netip.Prefix, top, authorizedKeys string) *nsHost {
	t.Helper()
	h := &nsHost{name: name, dir: filepath.Join(top, name), own: own,
		veth: fmt.Sprintf("rtlf%dh%d", os.Getpid()%100000, i), log: &syncBuffer{}}
	base := subnet.Addr().As4()
	base[3] = byte(16*i + 1)
	rootAddr := netip.PrefixFrom(netip.AddrFrom4(base), 30)
	base[3]++
	h.addr = netip.AddrFrom4(base)
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(h.dir, "ssh_host_ed25519_key")
	h.pub = keygen(t, key)
	cfg := filepath.Join(h.dir, "sshd_config")
	conf := strings.Join([]string{
		fmt.Sprintf("Port %d", sshPort),
		"ListenAddress 0.0.0.0", // the namespace's own addresses only
		"HostKey " + key,
		"AuthorizedKeysFile " + authorizedKeys,
		"PidFile none",
		"UsePAM no",
		"StrictModes no", // the keys live in a test temp dir
		"PermitRootLogin prohibit-password",
		"AuthenticationMethods publickey",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UseDNS no",
		"PrintMotd no",
		"MaxStartups 50",
		"Subsystem sftp internal-sftp",
		"LogLevel INFO",
	}, "\n") + "\n"
	if own != nil {
		conf += own.SSHD
	}
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	h.startSSHD(t, cfg)
	h.link(t, rootAddr)
	return h
}

// startSSHD runs sshd -D -e in a new network namespace (with h.own, and
// mount namespace, built first) and process group and waits (at most
// 20 s) for "Server listening".
func (h *nsHost) startSSHD(t *testing.T, cfg string) {
	t.Helper()
	cmd := exec.Command(sshdPath, "-D", "-e", "-f", cfg)
	// Pdeathsig: a test binary killed before its cleanups (SIGKILL, a
	// timeout) takes sshd, and with it the namespace and the veth, along;
	// reapLeftovers finds what an older binary left all the same.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if h.own != nil {
		cmd = exec.Command("/bin/sh", "-c", h.own.script(cfg))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	}
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C.UTF-8"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start sshd: %v", h.name, err)
	}
	h.sshd = cmd
	waited := make(chan struct{})
	t.Cleanup(func() { h.stop(t, waited) })

	ready := make(chan struct{})
	go func() {
		// Copy sshd's log until it exits, signalling the listening line.
		defer close(waited)
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			fmt.Fprintln(h.log, sc.Text())
			if !signalled && strings.Contains(sc.Text(), "Server listening") {
				close(ready)
				signalled = true
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
	}()
	select {
	case <-ready:
	case <-waited:
		t.Fatalf("%s: sshd exited before listening:\n%s", h.name, h.log)
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: sshd not listening after 20s:\n%s", h.name, h.log)
	}
	ns, err := vnetns.GetFromPid(cmd.Process.Pid)
	if err != nil {
		t.Fatalf("%s: sshd's namespace: %v", h.name, err)
	}
	h.ns = ns
}

// link creates the veth pair (its peer, eth0, inside the namespace),
// addresses both ends and sets them and the namespace's lo up.
func (h *nsHost) link(t *testing.T, rootAddr netip.Prefix) {
	t.Helper()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: h.veth}, PeerName: "eth0", PeerNamespace: netlink.NsFd(h.ns)}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatalf("%s: add veth %s: %v", h.name, h.veth, err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(h.veth); err == nil {
			if err := netlink.LinkDel(l); err != nil {
				t.Errorf("%s: delete veth %s: %v", h.name, h.veth, err)
			}
		}
	})
	root, err := netlink.LinkByName(h.veth)
	if err != nil {
		t.Fatal(err)
	}
	if err := netlink.AddrAdd(root, &netlink.Addr{IPNet: prefixNet(rootAddr)}); err != nil {
		t.Fatalf("%s: address %s: %v", h.name, rootAddr, err)
	}
	if err := netlink.LinkSetUp(root); err != nil {
		t.Fatal(err)
	}
	nh, err := netlink.NewHandleAt(h.ns)
	if err != nil {
		t.Fatalf("%s: netlink in the namespace: %v", h.name, err)
	}
	defer nh.Close()
	for _, name := range []string{"lo", "eth0"} {
		l, err := nh.LinkByName(name)
		if err != nil {
			t.Fatalf("%s: %s in the namespace: %v", h.name, name, err)
		}
		if name == "eth0" {
			p := netip.PrefixFrom(h.addr, rootAddr.Bits())
			if err := nh.AddrAdd(l, &netlink.Addr{IPNet: prefixNet(p)}); err != nil {
				t.Fatalf("%s: address %s: %v", h.name, p, err)
			}
		}
		if err := nh.LinkSetUp(l); err != nil {
			t.Fatalf("%s: %s up: %v", h.name, name, err)
		}
	}
}

// stop kills sshd's process group and then whatever is left in its
// namespace (per-connection children sshd moved into sessions of their
// own), and waits at most 10 s for the log copier to see sshd exit.
func (h *nsHost) stop(t *testing.T, waited <-chan struct{}) {
	if err := syscall.Kill(-h.sshd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Errorf("%s: kill sshd group: %v", h.name, err)
	}
	if h.ns.IsOpen() {
		// Bounded: a process forked while one round ran is found by the next.
		for round := 0; round < 5; round++ {
			if killNamespace(t, h.ns) == 0 {
				break
			}
		}
	}
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Errorf("%s: sshd (pid %d) or a child holding its log did not exit 10s after SIGKILL", h.name, h.sshd.Process.Pid)
	}
	if h.ns.IsOpen() {
		h.ns.Close()
	}
	if t.Failed() {
		t.Logf("%s sshd log:\n%s", h.name, h.log)
	}
}

// killNamespace sends SIGKILL to every process whose network namespace is
// ns (same device and inode as /proc/<pid>/ns/net) and returns how many
// it found.
func killNamespace(t *testing.T, ns vnetns.NsHandle) int {
	var want unix.Stat_t
	if err := unix.Fstat(int(ns), &want); err != nil {
		t.Errorf("fstat namespace: %v", err)
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	n := 0
	for _, p := range procs {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil || st.Dev != want.Dev || st.Ino != want.Ino {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(p, "/proc/%d/ns/net", &pid); err == nil && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}

// prefixNet converts p to the *net.IPNet netlink takes.
func prefixNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// reapLeftovers kills what an earlier run of the fleet test left when it
// was killed before its cleanups: the processes of its hosts and its
// playbook (sshd -f <its temp dir>/…/sshd_config, ansible-playbook, their
// children, ssh's ControlPersist master), found by their command line
// naming a TestPlaybookOverSSH or TestBootsOverSSH temporary directory,
// that are not this process's own. Their network
// namespaces, and the veth pairs into them, end with them. No two fleet
// tests run at once (the real-time test lock), so any such process is a
// leftover. Each one killed is logged.
func reapLeftovers(t *testing.T) {
	t.Helper()
	marks := []string{filepath.Join(os.TempDir(), "TestPlaybookOverSSH"), filepath.Join(os.TempDir(), "TestBootsOverSSH")}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		var pid int
		if _, err := fmt.Sscanf(p, "/proc/%d/cmdline", &pid); err != nil || pid == os.Getpid() || descends(pid, os.Getpid()) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil || !slices.ContainsFunc(marks, func(m string) bool { return strings.Contains(string(b), m) }) {
			continue
		}
		// A host's sshd: every process of its namespace goes (its
		// per-connection children renamed themselves).
		if ns, err := vnetns.GetFromPid(pid); err == nil {
			if self, err := vnetns.Get(); err == nil {
				if !ns.Equal(self) {
					t.Logf("killed %d processes in the namespace of a leftover host", killNamespace(t, ns))
				}
				self.Close()
			}
			ns.Close()
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			t.Logf("killed a leftover of an earlier fleet test: pid %d: %s", pid, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "))
		}
	}
}

// descends reports whether pid is a descendant of ancestor (32
// generations at most), from /proc/<pid>/stat's ppid.
func descends(pid, ancestor int) bool {
	for i := 0; i < 32 && pid > 1; i++ {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		s := string(b)
		j := strings.LastIndexByte(s, ')')
		if j < 0 {
			return false
		}
		f := strings.Fields(s[j+1:])
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return false
		}
		if pid == ancestor {
			return true
		}
	}
	return false
}
