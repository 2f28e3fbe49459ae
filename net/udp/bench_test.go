package udp_test

import (
	"testing"

	"github.com/rtload/rtload/net/udp"
)

// BenchmarkRecv times one bare recv call on an empty socket (EAGAIN, the
// seed's common case) per method. What the drain adds around it (clock
// reads, the sample, the derived histograms) is probe's BenchmarkOverhead,
// which times the drain itself against these calls in one run.
func BenchmarkRecv(b *testing.B) {
	for _, r := range receivers() {
		b.Run(r.name, func(b *testing.B) {
			g := openGroup(b, udp.Config{Count: 1})
			fd := g.FDs()[0]
			b.Run("raw", func(b *testing.B) {
				b.ReportAllocs()
				calls := 0
				for b.Loop() {
					r.rx.Recv(fd)
					calls++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/call")
			})
		})
	}
}
