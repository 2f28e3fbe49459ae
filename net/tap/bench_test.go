package tap_test

import (
	"fmt"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/tap"
	"github.com/rtload/rtload/net/udp"
)

// BenchmarkWriteFrame measures one write(2) of a frame of the given total
// length (Ethernet header included) into a tap in a private namespace.
// Frames go to a bound UDP socket (8 MiB SO_RCVBUFFORCE), drained with the
// timer stopped every 64 frames, so each write runs the full receive path:
// tun_get_user → skb (linear below about a page, as in seed 004's
// 4096/4097 boundary) → netif_rx/napi → IPv4 → UDP socket queue.
func BenchmarkWriteFrame(b *testing.B) {
	for _, size := range []int{64, 1500, 4096, 4097, 9000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			n := newNS(b)
			d, err := n.create(tap.Config{Name: "rtlb0", MTU: 9000, Addr: netip.MustParsePrefix("198.18.0.1/24")})
			if err != nil {
				b.Fatal(err)
			}
			fds, bound := n.socketsIn(b, d.Addr().Addr(), 1, 8<<20)
			payload := size - 14 - 20 - 8
			bl, err := tap.NewBuilder([]tap.Flow{{SrcMAC: srcMAC, DstMAC: d.MAC(), Src: netip.MustParseAddrPort("198.18.0.2:9"), Dst: bound[0]}}, payload, false)
			if err != nil {
				b.Fatal(err)
			}
			fd := d.FDs()[0]
			buf := make([]byte, 65536)
			drain := func() (got int) {
				for {
					if _, _, err := unix.Recvfrom(fds[0], buf, unix.MSG_DONTWAIT); err != nil {
						return got
					}
					got++
				}
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			received := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				frame := bl.Frame(0, uint64(i), 0)
				if _, errno := tap.WriteFrame(fd, frame); errno != 0 {
					b.Fatalf("write: %v", errno)
				}
				if i%64 == 63 {
					b.StopTimer()
					received += drain()
					b.StartTimer()
				}
			}
			b.StopTimer()
			received += drain()
			if received != b.N {
				b.Fatalf("socket received %d of %d frames", received, b.N)
			}
			if _, ok := udp.ReadHeader(buf); !ok {
				b.Fatal("no header")
			}
		})
	}
}
