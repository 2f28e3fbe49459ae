package udp_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/udp"
)

// TestSelf: the socket is bound to 127.0.0.1 on an ephemeral port; each
// Send puts one datagram of its payload on its own queue, which every
// receiver reads with one call (the next finds it empty); Send and the
// receive allocate nothing; Close is idempotent and closes the fd.
func TestSelf(t *testing.T) {
	before := countFDs(t)
	for _, r := range receivers() {
		t.Run(r.name, func(t *testing.T) {
			s, err := udp.OpenSelf(64)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			sa, err := unix.Getsockname(s.FD())
			if in4, ok := sa.(*unix.SockaddrInet4); err != nil || !ok || in4.Addr != [4]byte{127, 0, 0, 1} || in4.Port == 0 {
				t.Fatalf("getsockname = %#v, %v; want 127.0.0.1 and an ephemeral port", sa, err)
			}
			var bad []string
			if a := testing.AllocsPerRun(100, func() {
				if e := s.Send(); e != 0 {
					bad = append(bad, "send: "+e.Error())
				}
				if n, bytes, e := r.rx.Recv(s.FD()); n != 1 || bytes != 64 || e != 0 {
					bad = append(bad, "data call: "+e.Error())
				}
				if _, _, e := r.rx.Recv(s.FD()); e != unix.EAGAIN {
					bad = append(bad, "EAGAIN call: "+e.Error())
				}
			}); a != 0 {
				t.Errorf("Send and Recv allocate %v a round, want 0", a)
			}
			if len(bad) > 0 {
				t.Errorf("%d rounds went wrong, first: %s", len(bad), bad[0])
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
	if after := countFDs(t); after != before {
		t.Errorf("%d fds open after, %d before", after, before)
	}
	if _, err := udp.OpenSelf(0); err == nil {
		t.Error("OpenSelf(0): no error")
	}
	var nilSelf *udp.Self
	if err := nilSelf.Close(); err != nil {
		t.Errorf("nil Close: %v", err)
	}
}
