package tap_test

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/net/tap"
	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/rt"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// testNS is a private network namespace made for one test, with a
// NETLINK_ROUTE handle bound to it (usable from any thread).
type testNS struct {
	tb testing.TB
	ns vnetns.NsHandle
	h  *netlink.Handle
}

// newNS creates the namespace; t.Cleanup closes it (it is destroyed when
// the last device fd and socket in it close).
func newNS(tb testing.TB) *testNS {
	tb.Helper()
	testutil.Requires(tb, testutil.Root, testutil.DevNetTun)
	n := &testNS{tb: tb}
	if err := n.run(func() error {
		var err error
		if n.ns, err = vnetns.New(); err != nil { // unshare(CLONE_NEWNET)
			return fmt.Errorf("new netns: %w", err)
		}
		n.h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
		return err
	}, false); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if n.h != nil {
			n.h.Close()
		}
		n.ns.Close()
	})
	return n
}

// do runs f on a locked OS thread inside the namespace.
func (n *testNS) do(f func() error) error { return n.run(f, true) }

// run runs f on a locked OS thread, inside n.ns when enter is set, and
// restores the thread's namespace afterwards. A thread whose namespace
// cannot be restored is never unlocked: it exits with its goroutine.
func (n *testNS) run(f func() error, enter bool) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		saved, err := vnetns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer saved.Close()
		if enter {
			if err := vnetns.Set(n.ns); err != nil {
				runtime.UnlockOSThread()
				done <- fmt.Errorf("setns: %w", err)
				return
			}
		}
		ferr := f()
		if err := vnetns.Set(saved); err != nil {
			done <- errors.Join(ferr, fmt.Errorf("restore netns: %w (thread stays locked and exits)", err))
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("namespace body did not finish in 30 s")
	}
}

// create makes a device inside n; t.Cleanup closes it.
func (n *testNS) create(cfg tap.Config) (*tap.Device, error) {
	var d *tap.Device
	err := n.do(func() (err error) { d, err = tap.Create(cfg); return err })
	if d != nil {
		n.tb.Cleanup(func() { d.Close() })
	}
	return d, err
}

// linkGone fails unless no link called name exists in n.
func (n *testNS) linkGone(t testing.TB, name string) {
	t.Helper()
	if l, err := n.h.LinkByName(name); err == nil {
		t.Errorf("link %s (index %d) left behind", name, l.Attrs().Index)
	}
}

// socketsIn binds count nonblocking UDP sockets to addr:0 inside n and
// returns their fds and bound addresses; t.Cleanup closes them.
func (n *testNS) socketsIn(t testing.TB, addr netip.Addr, count, rcvbuf int) ([]int, []netip.AddrPort) {
	t.Helper()
	fds := make([]int, 0, count)
	t.Cleanup(func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	})
	var addrs []netip.AddrPort
	err := n.do(func() error {
		domain := unix.AF_INET
		if addr.Is6() {
			domain = unix.AF_INET6
		}
		for i := 0; i < count; i++ {
			fd, err := unix.Socket(domain, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
			if err != nil {
				return os.NewSyscallError("socket", err)
			}
			fds = append(fds, fd)
			if rcvbuf > 0 {
				if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvbuf); err != nil {
					return os.NewSyscallError("setsockopt SO_RCVBUFFORCE", err)
				}
			}
			var sa unix.Sockaddr
			if addr.Is6() {
				sa = &unix.SockaddrInet6{Addr: addr.As16()}
			} else {
				sa = &unix.SockaddrInet4{Addr: addr.As4()}
			}
			if err := unix.Bind(fd, sa); err != nil {
				return os.NewSyscallError("bind", err)
			}
			got, err := unix.Getsockname(fd)
			if err != nil {
				return os.NewSyscallError("getsockname", err)
			}
			switch s := got.(type) {
			case *unix.SockaddrInet4:
				addrs = append(addrs, netip.AddrPortFrom(netip.AddrFrom4(s.Addr), uint16(s.Port)))
			case *unix.SockaddrInet6:
				addrs = append(addrs, netip.AddrPortFrom(netip.AddrFrom16(s.Addr), uint16(s.Port)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fds, addrs
}

// seedSockets is the seed family's socket count.
const seedSockets = 450

func TestDeliver(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    tap.Config
		src    netip.Addr
		rounds int
	}{
		{"ipv4", tap.Config{Name: "rtlt0", MTU: 9000, Addr: netip.MustParsePrefix("198.18.0.1/24")}, netip.MustParseAddr("198.18.0.2"), 5},
		{"ipv4 vnet_hdr", tap.Config{Name: "rtlt0", MTU: 9000, VnetHdr: true, Addr: netip.MustParsePrefix("198.18.0.1/24")}, netip.MustParseAddr("198.18.0.2"), 5},
		{"ipv4 2 queues", tap.Config{Name: "rtlt0", MTU: 9000, Queues: 2, Addr: netip.MustParsePrefix("198.18.0.1/24")}, netip.MustParseAddr("198.18.0.2"), 5},
		{"ipv4 src off-link (rp_filter off)", tap.Config{Name: "rtlt0", MTU: 9000, Addr: netip.MustParsePrefix("198.18.0.1/24")}, netip.MustParseAddr("198.19.7.7"), 5},
		{"ipv6 2001:2::/48", tap.Config{Name: "rtlt0", MTU: 9000, Addr: netip.MustParsePrefix("2001:2::1/64")}, netip.MustParseAddr("2001:2::2"), 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNS(t)
			d, err := n.create(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Read back from the kernel.
			l, err := n.h.LinkByName(tc.cfg.Name)
			if err != nil {
				t.Fatal(err)
			}
			a := l.Attrs()
			if a.Index != d.Index() || a.MTU != tc.cfg.MTU || a.Flags&(1<<0) == 0 || a.HardwareAddr.String() != d.MAC().String() {
				t.Errorf("link %+v; device index %d mac %s", a, d.Index(), d.MAC())
			}
			if len(d.FDs()) != max(tc.cfg.Queues, 1) {
				t.Errorf("%d fds for %d queues", len(d.FDs()), tc.cfg.Queues)
			}
			addrs, err := n.h.AddrList(l, netlink.FAMILY_ALL)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, ad := range addrs {
				if p, ok := netip.AddrFromSlice(ad.IP); ok && netip.PrefixFrom(p.Unmap(), tc.cfg.Addr.Bits()) == tc.cfg.Addr {
					found = true
				}
			}
			if !found {
				t.Errorf("address %s not on the link: %v", tc.cfg.Addr, addrs)
			}
			if tc.cfg.VnetHdr {
				var sz int32
				if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(d.FDs()[0]), unix.TUNGETVNETHDRSZ, uintptr(unsafe.Pointer(&sz))); e != 0 || sz != tap.VnetHdrLen {
					t.Errorf("TUNGETVNETHDRSZ = %d (errno %v), want %d", sz, e, tap.VnetHdrLen)
				}
			}

			fds, bound := n.socketsIn(t, tc.cfg.Addr.Addr(), seedSockets, 0)
			flows := make([]tap.Flow, len(bound))
			dst := make([]int, len(bound))
			for i, ap := range bound {
				flows[i] = tap.Flow{SrcMAC: srcMAC, DstMAC: d.MAC(), Src: netip.AddrPortFrom(tc.src, uint16(10000+i)), Dst: ap}
				dst[i] = i
			}
			j, err := tap.NewInjector(d.FDs(), flows, 64, tc.cfg.VnetHdr)
			if err != nil {
				t.Fatal(err)
			}
			for r := 0; r < tc.rounds; r++ {
				if n, err := j.Send(dst, int64(r)); err != nil || n != len(dst) {
					t.Fatalf("round %d: Send = %d, %v", r, n, err)
				}
			}
			if j.Sent() != uint64(tc.rounds*len(dst)) || j.SentTo(7) != uint64(tc.rounds) || j.Errors() != 0 || j.ShortWrites() != 0 {
				t.Errorf("Sent %d SentTo(7) %d Errors %d Short %d", j.Sent(), j.SentTo(7), j.Errors(), j.ShortWrites())
			}
			// Delivery is synchronous in write(2) (netif_rx/napi on the
			// writer's CPU), but drain with a bounded poll anyway.
			got := make([][]uint64, len(fds))
			buf := make([]byte, 2048)
			deadline := time.Now().Add(time.Second)
			pending := len(fds) * tc.rounds
			for pending > 0 && time.Now().Before(deadline) {
				for i, fd := range fds {
					for {
						m, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
						if err != nil {
							break
						}
						h, ok := udp.ReadHeader(buf[:m])
						if !ok || m != 64 {
							t.Errorf("socket %d: %d-byte message", i, m)
							continue
						}
						got[i] = append(got[i], h.Seq)
						pending--
					}
				}
				if pending > 0 {
					pfd := []unix.PollFd{{Fd: int32(fds[0]), Events: unix.POLLIN}}
					unix.Poll(pfd, 10)
				}
			}
			bad := 0
			for i, seqs := range got {
				ok := len(seqs) == tc.rounds
				for k := 0; ok && k < tc.rounds; k++ {
					ok = seqs[k] == uint64(k)
				}
				if !ok && bad < 5 {
					t.Errorf("socket %d (%s) got seqs %v, want 0..%d", i, bound[i], seqs, tc.rounds-1)
				}
				if !ok {
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d sockets lost or reordered messages", bad, len(fds))
				// Where the kernel dropped them: Ip6InAddrErrors (no local
				// route), softnet_stat's second column (backlog full), ….
				n.do(func() error {
					for _, f := range []string{"/proc/thread-self/net/snmp6", "/proc/thread-self/net/softnet_stat", "/proc/thread-self/net/dev_snmp6/" + tc.cfg.Name} {
						b, _ := os.ReadFile(f)
						t.Logf("%s:\n%s", f, b)
					}
					return nil
				})
			}
			st, err := d.Stats(nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("stats %+v", st)
			if st.RxPackets < uint64(tc.rounds*len(fds)) || st.RxDropped != 0 || st.RxErrors != 0 {
				t.Errorf("stats %+v, want RxPackets ≥ %d, RxDropped 0, RxErrors 0", st, tc.rounds*len(fds))
			}
			if st2, err := d.Stats(n.h); err != nil || st2.RxPackets != st.RxPackets {
				t.Errorf("Stats(handle) = %+v, %v", st2, err)
			}
		})
	}
}

// TestSysctlFollowsThread checks that /proc/sys/net resolves against the
// calling thread's namespace: Create wrote rp_filter there, and the host
// thread does not see the device's directory.
func TestSysctlFollowsThread(t *testing.T) {
	n := newNS(t)
	if _, err := n.create(tap.Config{Name: "rtlt0", Addr: netip.MustParsePrefix("198.18.0.1/24")}); err != nil {
		t.Fatal(err)
	}
	const p = "/proc/sys/net/ipv4/conf/rtlt0/rp_filter"
	if err := n.do(func() error {
		for _, f := range []string{p, "/proc/sys/net/ipv4/conf/all/rp_filter"} {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if strings.TrimSpace(string(b)) != "0" {
				return fmt.Errorf("%s = %q in the namespace, want 0", f, b)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := n.run(func() error {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("host thread: stat %s = %v, want not exist", p, err)
		}
		return nil
	}, false); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFrameAllocs(t *testing.T) {
	n := newNS(t)
	d, err := n.create(tap.Config{Name: "rtlt0", Addr: netip.MustParsePrefix("198.18.0.1/24")})
	if err != nil {
		t.Fatal(err)
	}
	fds, bound := n.socketsIn(t, d.Addr().Addr(), 1, 0)
	b, err := tap.NewBuilder([]tap.Flow{{SrcMAC: srcMAC, DstMAC: d.MAC(), Src: netip.MustParseAddrPort("198.18.0.2:9"), Dst: bound[0]}}, 64, false)
	if err != nil {
		t.Fatal(err)
	}
	frame := b.Frame(0, 0, 0)
	var errno unix.Errno
	if a := testing.AllocsPerRun(100, func() { _, errno = tap.WriteFrame(d.FDs()[0], frame) }); a != 0 {
		t.Errorf("WriteFrame allocs %v", a)
	}
	if errno != 0 {
		t.Errorf("WriteFrame errno %v", errno)
	}
	j, err := tap.NewInjector(d.FDs(), []tap.Flow{{SrcMAC: srcMAC, DstMAC: d.MAC(), Src: netip.MustParseAddrPort("198.18.0.2:9"), Dst: bound[0]}}, 64, false)
	if err != nil {
		t.Fatal(err)
	}
	dst := []int{0}
	if a := testing.AllocsPerRun(100, func() { j.Send(dst, 1) }); a != 0 {
		t.Errorf("Injector.Send allocs %v", a)
	}
	if _, errno := tap.WriteFrame(fds[0], nil); errno != unix.EINVAL {
		t.Errorf("WriteFrame(nil) errno %v, want EINVAL", errno)
	}
}

func TestCreateErrors(t *testing.T) {
	p := netip.MustParsePrefix("198.18.0.1/24")
	for _, tc := range []struct {
		name    string
		cfg     tap.Config
		wantErr string
		is      error
	}{
		{"mtu above tun's maximum", tap.Config{Name: "rtlt0", MTU: 70000, Addr: p}, "tap rtlt0: mtu 70000 out of range (allowed: 68–65521)", nil},
		{"mtu below IPv4 minimum", tap.Config{Name: "rtlt0", MTU: 67, Addr: p}, "mtu 67 out of range", nil},
		{"address outside 198.18.0.0/15", tap.Config{Name: "rtlt0", Addr: netip.MustParsePrefix("10.0.0.1/24")}, "10.0.0.1/24", tap.ErrAddress},
		{"prefix wider than the range", tap.Config{Name: "rtlt0", Addr: netip.MustParsePrefix("198.18.0.1/8")}, "198.18.0.1/8", tap.ErrAddress},
		{"no address", tap.Config{Name: "rtlt0"}, "no address", tap.ErrAddress},
		{"name without rtl prefix", tap.Config{Name: "eth9", Addr: p}, `name must start with "rtl"`, nil},
		{"name too long", tap.Config{Name: "rtl0123456789abc", Addr: p}, "16 bytes (allowed: at most 15)", nil},
		{"kernel name template", tap.Config{Name: "rtl%d", Addr: p}, "'%'", nil},
		{"queues", tap.Config{Name: "rtlt0", Queues: 257, Addr: p}, "257 queues out of range", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNS(t)
			before, _ := n.h.LinkList()
			_, err := n.create(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err %v is not %v", err, tc.is)
			}
			if after, _ := n.h.LinkList(); len(after) != len(before) {
				t.Errorf("%d links before, %d after a failed Create", len(before), len(after))
			}
			n.linkGone(t, tc.cfg.Name)
		})
	}
}

func TestCreateHostNamespaceRefused(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.DevNetTun)
	// Runs on the test's own thread, in the process's namespace: Create
	// must refuse before opening anything.
	n := &testNS{tb: t}
	err := n.run(func() error {
		d, err := tap.Create(tap.Config{Name: "rtlt9", Addr: netip.MustParsePrefix("198.18.0.1/24")})
		if d != nil {
			d.Close()
			return errors.New("device created in the host namespace")
		}
		return err
	}, false)
	if !errors.Is(err, tap.ErrHostNamespace) {
		t.Fatalf("err %v, want ErrHostNamespace", err)
	}
	if _, err := netlink.LinkByName("rtlt9"); err == nil {
		t.Fatal("rtlt9 exists in the host namespace")
	}
}

func TestNameInUse(t *testing.T) {
	n := newNS(t)
	cfg := tap.Config{Name: "rtlt0", MTU: 1400, Addr: netip.MustParsePrefix("198.18.0.1/24")}
	d, err := n.create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []tap.Config{cfg, {Name: "rtlt0", Queues: 2, VnetHdr: true, Addr: netip.MustParsePrefix("198.18.1.1/24")}} {
		if _, err := n.create(c); err == nil || !strings.Contains(err.Error(), "tap rtlt0: name in use") {
			t.Fatalf("second Create: %v, want name in use", err)
		}
	}
	l, err := n.h.LinkByName("rtlt0")
	if err != nil || l.Attrs().Index != d.Index() || l.Attrs().MTU != 1400 || l.Attrs().Flags&1 == 0 {
		t.Fatalf("first device affected: %v %+v", err, l)
	}
	if st, err := d.Stats(nil); err != nil {
		t.Fatalf("first device stats: %v", err)
	} else {
		t.Logf("stats %+v", st)
	}
}

func TestCloseIdempotent(t *testing.T) {
	n := newNS(t)
	d, err := n.create(tap.Config{Name: "rtlt0", Queues: 3, Addr: netip.MustParsePrefix("198.18.0.1/24")})
	if err != nil {
		t.Fatal(err)
	}
	before, err := testutil.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := d.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	n.linkGone(t, "rtlt0")
	after, err := testutil.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	// 3 queues (/dev/net/tun) + the device's netlink socket; the runtime
	// may close other descriptors meanwhile, so count the tun ones exactly.
	tuns := func(m map[int]string) (n int) {
		for _, target := range m {
			if target == "/dev/net/tun" {
				n++
			}
		}
		return n
	}
	if got := tuns(before) - tuns(after); got != 3 || len(before)-len(after) < 4 {
		t.Errorf("Close released %d tun fds (want 3) and %d fds in all (want ≥ 4): %v", got, len(before)-len(after), testutil.Leaked(after, before))
	}
	if _, err := d.Stats(nil); err == nil {
		t.Error("Stats after Close succeeded")
	}
}

func TestPrivilegeErrorText(t *testing.T) {
	err := error(&rt.PrivilegeError{Op: "TUNSETIFF rtlt0", Cap: "CAP_NET_ADMIN", Err: unix.EPERM})
	if want := "TUNSETIFF rtlt0: needs CAP_NET_ADMIN: operation not permitted"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
}

// TestCreateWithoutCapNetAdmin drops CAP_NET_ADMIN from the effective set
// of one thread (capset(2) is per thread) inside a private namespace: uid 0
// still opens /dev/net/tun, and TUNSETIFF fails with EPERM. The thread's
// credentials changed, so it is never unlocked and exits with its goroutine.
func TestCreateWithoutCapNetAdmin(t *testing.T) {
	n := newNS(t)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: capabilities and netns changed
		if err := vnetns.Set(n.ns); err != nil {
			done <- err
			return
		}
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			done <- os.NewSyscallError("capget", err)
			return
		}
		data[0].Effective &^= 1 << unix.CAP_NET_ADMIN
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			done <- os.NewSyscallError("capset", err)
			return
		}
		d, err := tap.Create(tap.Config{Name: "rtlt0", Addr: netip.MustParsePrefix("198.18.0.1/24")})
		if d != nil {
			d.Close()
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("timed out")
	}
	var pe *rt.PrivilegeError
	if !errors.Is(err, rt.ErrNoPrivilege) || !errors.As(err, &pe) || !errors.Is(err, unix.EPERM) {
		t.Fatalf("err %v, want a *rt.PrivilegeError wrapping EPERM", err)
	}
	if want := "TUNSETIFF rtlt0: needs CAP_NET_ADMIN: operation not permitted"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	n.linkGone(t, "rtlt0")
}
