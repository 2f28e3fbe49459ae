package udp_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/net/udp"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// seedCount is the seed's socket count (000_b19799733a2511c2).
const seedCount = 450

func openGroup(t testing.TB, cfg udp.Config) *udp.Group {
	t.Helper()
	g, err := udp.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func newSender(t testing.TB, g *udp.Group, size, batch int) *udp.Sender {
	t.Helper()
	s, err := udp.NewSender(g, size, batch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func countFDs(t testing.TB) int {
	t.Helper()
	fds, err := testutil.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

func TestOpen450(t *testing.T) {
	g, err := udp.Open(udp.Config{Count: seedCount, Addr: netip.MustParseAddr("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fds, addrs := g.FDs(), g.Addrs()
	if len(fds) != seedCount || len(addrs) != seedCount {
		t.Fatalf("%d fds, %d addrs; want %d each", len(fds), len(addrs), seedCount)
	}
	ports := map[uint16]bool{}
	for i, a := range addrs {
		if a.Addr() != netip.MustParseAddr("127.0.0.1") || a.Port() == 0 {
			t.Errorf("socket %d bound to %s", i, a)
		}
		ports[a.Port()] = true
	}
	if len(ports) != seedCount {
		t.Errorf("%d distinct ports, want %d", len(ports), seedCount)
	}
	if g.RcvBuf() <= 0 {
		t.Errorf("RcvBuf() = %d", g.RcvBuf())
	}
	for i, fd := range fds {
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK == 0 {
			t.Fatalf("socket %d (fd %d): F_GETFL %#x, %v; want O_NONBLOCK", i, fd, fl, err)
		}
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
			t.Fatalf("socket %d (fd %d): F_GETFD %#x, %v; want FD_CLOEXEC", i, fd, fl, err)
		}
		// No SO_RXQ_OVFL: it would put __sock_recv_cmsgs on every data
		// call (drops come from SO_MEMINFO, see TestDrops).
		if v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RXQ_OVFL); err != nil || v != 0 {
			t.Fatalf("socket %d (fd %d): SO_RXQ_OVFL %d, %v; want 0", i, fd, v, err)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
			t.Fatalf("fd %d after Close: F_GETFD err %v, want EBADF", fd, err)
		}
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     udp.Config
		is      error
		wantErr string
	}{
		{"TEST-NET-1 is not loopback", udp.Config{Count: 4, Addr: netip.MustParseAddr("192.0.2.1")}, udp.ErrNotLoopback, "udp group 192.0.2.1: address is not loopback"},
		{"global IPv6 is not loopback", udp.Config{Count: 1, Addr: netip.MustParseAddr("2001:db8::1")}, udp.ErrNotLoopback, "not loopback"},
		{"count 0", udp.Config{Count: 0}, nil, "count 0 < 1"},
		{"ports past 65535", udp.Config{Count: 10, Port: 65530}, nil, "ports 65530..65539 outside 1–65535"},
		{"negative port", udp.Config{Count: 1, Port: -1}, nil, "outside 1–65535"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := countFDs(t)
			g, err := udp.Open(tc.cfg)
			if err == nil {
				g.Close()
				t.Fatalf("Open(%+v) succeeded", tc.cfg)
			}
			if g != nil {
				t.Errorf("Open returned a group with its error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not match %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q lacks %q", err, tc.wantErr)
			}
			if after := countFDs(t); after != before {
				t.Errorf("%d fds before Open, %d after its error", before, after)
			}
		})
	}
}

func TestOpenBindErrorClosesSockets(t *testing.T) {
	// Socket 3 of the second group collides with the first group's port:
	// the three sockets already made must be closed. Ports below the first
	// group's are ephemeral too, so another test may hold one of them: then
	// the error names an earlier socket, and the test tries a new port
	// (at most 10 times).
	for attempt := 0; ; attempt++ {
		first := openGroup(t, udp.Config{Count: 1})
		port := int(first.Addrs()[0].Port())
		if port < 4 {
			t.Skipf("ephemeral port %d too low", port)
		}
		before := countFDs(t)
		g, err := udp.Open(udp.Config{Count: 5, Port: port - 3})
		if err == nil {
			g.Close()
			t.Fatal("Open over a bound port succeeded")
		}
		if after := countFDs(t); after != before {
			t.Errorf("%d fds before Open, %d after its error", before, after)
		}
		if errors.Is(err, unix.EADDRINUSE) && !strings.Contains(err.Error(), "udp socket 3: bind 127.0.0.1:") && attempt < 10 {
			t.Logf("attempt %d: a port below %d is taken by someone else (%v); trying another", attempt, port, err)
			first.Close()
			continue
		}
		if !errors.Is(err, unix.EADDRINUSE) || !strings.Contains(err.Error(), "udp socket 3: bind 127.0.0.1:") {
			t.Errorf("error %v, want socket 3's bind EADDRINUSE", err)
		}
		return
	}
}

func TestOpenIPv6Loopback(t *testing.T) {
	g, err := udp.Open(udp.Config{Count: 8, Addr: netip.IPv6Loopback()})
	if errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT) {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := newSender(t, g, 64, 8)
	all := seq(len(g.FDs()))
	if n, err := s.Send(all, 42); n != len(all) || err != nil {
		t.Fatalf("Send = %d, %v", n, err)
	}
	got := drain(t, udp.NewRecvMsg(2048), g.FDs(), len(all))
	for i, hs := range got {
		if diff := cmp.Diff([]udp.Header{{Seq: 0, SentNs: 42}}, hs); diff != "" {
			t.Errorf("socket %d (%s) headers (-want +got):\n%s", i, g.Addrs()[i], diff)
		}
	}
}

// seq returns 0..n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// drain reads every socket until EAGAIN, repeating (within 2 s) until want
// messages arrived, and returns the headers received per socket.
func drain(t testing.TB, rx udp.Receiver, fds []int, want int) [][]udp.Header {
	t.Helper()
	got := make([][]udp.Header, len(fds))
	total := 0
	deadline := time.Now().Add(2 * time.Second)
	for round := 0; round < 1000 && total < want; round++ {
		if round > 0 && time.Now().After(deadline) {
			break
		}
		for i, fd := range fds {
			for calls := 0; calls < 10000; calls++ {
				n, bytes, errno := rx.Recv(fd)
				if errno == unix.EAGAIN {
					break
				}
				if errno != 0 {
					t.Fatalf("socket %d: recv: %v", i, errno)
				}
				sum := 0
				for m := 0; m < n; m++ {
					sum += len(rx.Msg(m))
					h, ok := udp.ReadHeader(rx.Msg(m))
					if !ok {
						t.Fatalf("socket %d: short message %d bytes", i, len(rx.Msg(m)))
					}
					got[i] = append(got[i], h)
				}
				if sum != bytes {
					t.Fatalf("socket %d: Recv said %d bytes, messages hold %d", i, bytes, sum)
				}
				total += n
			}
		}
	}
	if total != want {
		t.Fatalf("received %d messages, want %d", total, want)
	}
	return got
}

// receivers are the three recv methods, fresh per call.
func receivers() []struct {
	name string
	rx   udp.Receiver
} {
	return []struct {
		name string
		rx   udp.Receiver
	}{
		{"recvfrom", udp.NewRecvFrom(2048)},
		{"recvmsg", udp.NewRecvMsg(2048)},
		{"recvmmsg8", udp.NewRecvMMsg(2048, 8)},
		// Buffers offset into their allocation, as a run's processes draw
		// them (NewReceiverAt).
		{"recvfrom+offset", must(udp.NewReceiverAt(udp.MethodRecvFrom, 2048, 1, 4032))},
		{"recvmsg+offset", must(udp.NewReceiverAt(udp.MethodRecvMsg, 2048, 1, 64))},
		{"recvmmsg8+offset", must(udp.NewReceiverAt(udp.MethodRecvMMsg, 2048, 8, 192))},
	}
}

func must(r udp.Receiver, err error) udp.Receiver {
	if err != nil {
		panic(err)
	}
	return r
}

// TestOpenOrder: sockets created in a given order keep their index (and
// port), and take their fds in creation order; an order that is not a
// permutation is refused.
func TestOpenOrder(t *testing.T) {
	order := []int{2, 0, 3, 1}
	g := openGroup(t, udp.Config{Count: 4, Order: order})
	fds := g.FDs()
	for j := 1; j < len(order); j++ {
		if fds[order[j]] <= fds[order[j-1]] {
			t.Errorf("fds %v: socket %d (created %d.) has a lower fd than socket %d", fds, order[j], j+1, order[j-1])
		}
	}
	s := newSender(t, g, 64, 64)
	if n, err := s.Send(seq(4), 1); n != 4 || err != nil {
		t.Fatalf("Send = %d, %v", n, err)
	}
	got := drain(t, udp.NewRecvFrom(2048), fds, 4)
	for i, hs := range got {
		if len(hs) != 1 {
			t.Errorf("socket %d: %d messages, want 1", i, len(hs))
		}
	}
	for _, bad := range [][]int{{0, 1, 2}, {0, 1, 2, 2}, {0, 1, 2, 4}} {
		if _, err := udp.Open(udp.Config{Count: 4, Order: bad}); err == nil || !strings.Contains(err.Error(), "not a permutation") {
			t.Errorf("order %v: err = %v, want not a permutation", bad, err)
		}
	}
	if _, err := udp.NewReceiverAt(udp.MethodRecvFrom, 2048, 1, udp.MaxBufOffset); err == nil {
		t.Errorf("offset %d accepted", udp.MaxBufOffset)
	}
}

func TestSendReceive450(t *testing.T) {
	for _, r := range receivers() {
		t.Run(r.name, func(t *testing.T) {
			g := openGroup(t, udp.Config{Count: seedCount})
			s := newSender(t, g, 64, 64)
			all := seq(seedCount)
			const stamp = 1_234_567_890
			for round := uint64(0); round < 2; round++ {
				if n, err := s.Send(all, stamp+int64(round)); n != seedCount || err != nil {
					t.Fatalf("round %d: Send = %d, %v", round, n, err)
				}
				got := drain(t, r.rx, g.FDs(), seedCount)
				for i, hs := range got {
					want := []udp.Header{{Seq: round, SentNs: stamp + int64(round)}}
					if diff := cmp.Diff(want, hs); diff != "" {
						t.Fatalf("round %d socket %d (-want +got):\n%s", round, i, diff)
					}
				}
				for i, fd := range g.FDs() {
					if _, _, errno := r.rx.Recv(fd); errno != unix.EAGAIN {
						t.Fatalf("round %d socket %d drained: errno %v, want EAGAIN", round, i, errno)
					}
				}
			}
			if s.Sent() != 2*seedCount {
				t.Errorf("Sent() = %d, want %d", s.Sent(), 2*seedCount)
			}
			for i := range all {
				if s.SentTo(i) != 2 {
					t.Fatalf("SentTo(%d) = %d, want 2", i, s.SentTo(i))
				}
			}
		})
	}
}

func TestRecvMMsgBatches(t *testing.T) {
	// 20 messages to one socket come back as 8 + 8 + 4, in order.
	g := openGroup(t, udp.Config{Count: 1})
	s := newSender(t, g, 100, 64)
	if n, err := s.Send(make([]int, 20), 7); n != 20 || err != nil {
		t.Fatalf("Send = %d, %v", n, err)
	}
	rx := udp.NewRecvMMsg(2048, 8)
	var sizes []int
	var seqs []uint64
	for calls := 0; calls < 10; calls++ {
		n, bytes, errno := rx.Recv(g.FDs()[0])
		if errno == unix.EAGAIN {
			break
		}
		if errno != 0 {
			t.Fatal(errno)
		}
		if bytes != 100*n {
			t.Errorf("call %d: %d bytes for %d messages", calls, bytes, n)
		}
		sizes = append(sizes, n)
		for m := 0; m < n; m++ {
			h, _ := udp.ReadHeader(rx.Msg(m))
			seqs = append(seqs, h.Seq)
		}
	}
	if diff := cmp.Diff([]int{8, 8, 4}, sizes); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
	wantSeqs := make([]uint64, 20)
	for i := range wantSeqs {
		wantSeqs[i] = uint64(i)
	}
	if diff := cmp.Diff(wantSeqs, seqs); diff != "" {
		t.Errorf("sequence numbers (-want +got):\n%s", diff)
	}
}

func TestDrops(t *testing.T) {
	// A 2 KiB receive buffer (4 KiB after the kernel's doubling) holds a few
	// 1400-byte datagrams; the rest of 100 are dropped and counted in sk_drops.
	g := openGroup(t, udp.Config{Count: 1, RcvBuf: 2048})
	s := newSender(t, g, 1400, 64)
	const sent = 100
	if n, err := s.Send(make([]int, sent), 0); n != sent || err != nil {
		t.Fatalf("Send = %d, %v", n, err)
	}
	rx := udp.NewRecvFrom(2048)
	readable, drops := 0, uint64(0)
	deadline := time.Now().Add(2 * time.Second)
	for round := 0; round < 1000; round++ {
		for calls := 0; calls < sent; calls++ {
			if _, _, errno := rx.Recv(g.FDs()[0]); errno != 0 {
				break
			}
			readable++
		}
		var err error
		if drops, err = g.Drops(); err != nil {
			t.Fatal(err)
		}
		if uint64(readable)+drops >= sent || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("RcvBuf %d: %d readable, %d dropped of %d", g.RcvBuf(), readable, drops, sent)
	if drops == 0 {
		t.Fatal("no drops with a 4 KiB receive buffer")
	}
	if drops != uint64(sent-readable) {
		t.Errorf("Drops() = %d, want sent − readable = %d", drops, sent-readable)
	}
	if d, err := udp.SocketDrops(g.FDs()[0]); err != nil || d != drops {
		t.Errorf("SocketDrops = %d, %v; want %d", d, err, drops)
	}
}

func TestRecvAllocs(t *testing.T) {
	for _, r := range receivers() {
		t.Run(r.name+"/EAGAIN", func(t *testing.T) {
			g := openGroup(t, udp.Config{Count: 1})
			fd := g.FDs()[0]
			var bad unix.Errno
			if a := testing.AllocsPerRun(100, func() {
				if _, _, errno := r.rx.Recv(fd); errno != unix.EAGAIN {
					bad = errno
				}
			}); a != 0 {
				t.Errorf("Recv allocs %v on an empty socket, want 0", a)
			}
			if bad != 0 {
				t.Errorf("Recv on an empty socket: errno %v, want EAGAIN", bad)
			}
		})
		t.Run(r.name+"/data", func(t *testing.T) {
			// AllocsPerRun makes 1 + 100 calls; each must return data, so
			// prefill enough batches (8 messages per recvmmsg call).
			const runs = 100
			perCall := 1
			if _, ok := r.rx.(*udp.RecvMMsg); ok {
				perCall = 8
			}
			g := openGroup(t, udp.Config{Count: 1, RcvBuf: 4 << 20})
			s := newSender(t, g, 64, 64)
			want := (runs + 1) * perCall
			if n, err := s.Send(make([]int, want), 0); n != want || err != nil {
				t.Fatalf("Send = %d, %v", n, err)
			}
			fd := g.FDs()[0]
			got, calls := 0, 0
			var bad unix.Errno
			if a := testing.AllocsPerRun(runs, func() {
				n, _, errno := r.rx.Recv(fd)
				calls++
				got += n
				if errno != 0 {
					bad = errno
				}
			}); a != 0 {
				t.Errorf("Recv allocs %v with data, want 0", a)
			}
			if bad != 0 || got != want {
				t.Errorf("%d calls got %d messages (errno %v), want %d: the data path was not exercised", calls, got, bad, want)
			}
		})
	}
}

func TestHeader(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    udp.Header
	}{
		{"zero", udp.Header{}},
		{"seed-like", udp.Header{Seq: 449, SentNs: 1_700_000_000_123_456_789}},
		{"extremes", udp.Header{Seq: ^uint64(0), SentNs: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := make([]byte, 64)
			udp.PutHeader(b, tc.h)
			got, ok := udp.ReadHeader(b)
			if !ok || got != tc.h {
				t.Errorf("ReadHeader(PutHeader(%+v)) = %+v, %v", tc.h, got, ok)
			}
			if got, ok := udp.ReadHeader(b[:udp.HeaderSize]); !ok || got != tc.h {
				t.Errorf("exactly HeaderSize bytes: %+v, %v", got, ok)
			}
		})
	}
	if h, ok := udp.ReadHeader(make([]byte, udp.HeaderSize-1)); ok || h != (udp.Header{}) {
		t.Errorf("ReadHeader(15 bytes) = %+v, %v; want zero, false", h, ok)
	}
	if _, ok := udp.ReadHeader(nil); ok {
		t.Error("ReadHeader(nil) ok")
	}
}

func TestNewReceiver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		method  udp.Method
		batch   int
		wantErr string
	}{
		{"recvfrom", udp.MethodRecvFrom, 0, ""},
		{"recvmsg", udp.MethodRecvMsg, 0, ""},
		{"recvmmsg batch 8", udp.MethodRecvMMsg, 8, ""},
		{"recvmmsg batch 0", udp.MethodRecvMMsg, 0, "recvmmsg batch 0 outside 1–1024"},
		{"recvmmsg batch 1025", udp.MethodRecvMMsg, 1025, "outside 1–1024"},
		{"no method", 0, 0, `method(0) unknown (allowed: recvfrom, recvmsg, recvmmsg)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rx, err := udp.NewReceiver(tc.method, 2048, tc.batch)
			if tc.wantErr == "" {
				if err != nil || rx == nil {
					t.Fatalf("NewReceiver = %v, %v", rx, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestNewSenderErrors(t *testing.T) {
	g := openGroup(t, udp.Config{Count: 1})
	for _, size := range []int{udp.HeaderSize - 1, 65508} {
		before := countFDs(t)
		if s, err := udp.NewSender(g, size, 8); err == nil {
			s.Close()
			t.Errorf("NewSender size %d succeeded", size)
		}
		if after := countFDs(t); after != before {
			t.Errorf("size %d: %d fds before, %d after the error", size, before, after)
		}
	}
	s := newSender(t, g, 64, 8)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestSenderBoundToGroupAddress: the sending socket is bound to the
// address it sends from (here 127.0.0.7, and ::1), not to the wildcard the
// kernel picks for an unbound socket on its first send.
func TestSenderBoundToGroupAddress(t *testing.T) {
	for _, addr := range []netip.Addr{netip.MustParseAddr("127.0.0.7"), netip.IPv6Loopback()} {
		g, err := udp.Open(udp.Config{Count: 2, Addr: addr})
		if addr.Is6() && (errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT)) {
			t.Logf("no IPv6 loopback: %v", err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		s := newSender(t, g, 64, 8)
		if n, err := s.Send([]int{0, 1}, 1); n != 2 || err != nil {
			t.Fatalf("Send = %d, %v", n, err)
		}
		la, err := s.LocalAddr()
		if err != nil {
			t.Fatal(err)
		}
		if la.Addr() != addr || la.Port() == 0 {
			t.Errorf("sender bound to %v, want %v with an ephemeral port", la, addr)
		}
	}
}

// TestSenderAllocs: sending a batch allocates nothing when the socket's
// send queue has room (the netpoller path is only for a full queue).
func TestSenderAllocs(t *testing.T) {
	g, err := udp.Open(udp.Config{Count: 8, RcvBuf: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s, err := udp.NewSender(g, 64, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := []int{0, 1, 2, 3, 4, 5, 6, 7}
	rx := udp.NewRecvFrom(2048)
	allocs := testing.AllocsPerRun(100, func() {
		if n, err := s.Send(dst, 1); n != 8 || err != nil {
			t.Fatalf("Send = %d, %v", n, err)
		}
		for _, fd := range g.FDs() {
			rx.Recv(fd)
		}
	})
	if allocs != 0 {
		t.Errorf("Send allocates %v per batch, want 0", allocs)
	}
}
