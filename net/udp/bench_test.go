package udp_test

import (
	"sync"
	"testing"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// benchClock is the clock probe.Drain would use here ("auto": TSC when
// invariant), calibrated once per binary.
var benchClock = sync.OnceValues(func() (*rt.Clock, error) { return rt.NewClock("auto") })

// timedRecv is one recv call as probe.Drain makes it: two clock reads
// around the call and the difference recorded into a Linear (the seed's
// table layout) and an HDR histogram.
type timedRecv struct {
	clock *rt.Clock
	lin   *record.Linear
	hdr   *record.HDR
}

func newTimedRecv(b *testing.B) timedRecv {
	c, err := benchClock()
	if err != nil {
		b.Fatal(err)
	}
	return timedRecv{clock: c, lin: record.NewLinear(128, 64, 8256), hdr: record.NewHDR(1 << 30)}
}

func (tr timedRecv) recv(rx udp.Receiver, fd int) {
	t0 := tr.clock.Now()
	rx.Recv(fd)
	t1 := tr.clock.Now()
	dt := uint64(t1 - t0)
	tr.lin.Record(dt)
	tr.hdr.Record(dt)
}

// BenchmarkRecv times one recv call on an empty socket (EAGAIN, the seed's
// common case) per method, bare ("raw") and as the drain makes it
// ("timed+recorded"). Their ns/call difference is the per-call overhead
// rtload adds around a recv call; BenchmarkOverhead measures it in one run.
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
			b.Run("timed+recorded", func(b *testing.B) {
				tr := newTimedRecv(b)
				b.ReportAllocs()
				calls := 0
				for b.Loop() {
					tr.recv(r.rx, fd)
					calls++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/call")
			})
		})
	}
}

// BenchmarkOverhead reports the per-call overhead of timing and recording a
// recv call (timed+recorded minus raw, ns) measured within one run: each
// iteration makes a block of 1000 raw calls and a block of 1000 timed
// calls on the same empty socket, so drift and frequency changes hit both.
func BenchmarkOverhead(b *testing.B) {
	const block = 1000
	for _, r := range receivers() {
		b.Run(r.name, func(b *testing.B) {
			g := openGroup(b, udp.Config{Count: 1})
			fd := g.FDs()[0]
			tr := newTimedRecv(b)
			var rawNs, timedNs, blocks int64
			b.ReportAllocs()
			for b.Loop() {
				t0 := rt.Monotonic()
				for i := 0; i < block; i++ {
					r.rx.Recv(fd)
				}
				t1 := rt.Monotonic()
				for i := 0; i < block; i++ {
					tr.recv(r.rx, fd)
				}
				t2 := rt.Monotonic()
				rawNs += t1 - t0
				timedNs += t2 - t1
				blocks++
			}
			calls := float64(blocks * block)
			raw, timed := float64(rawNs)/calls, float64(timedNs)/calls
			b.ReportMetric(raw, "raw-ns/call")
			b.ReportMetric(timed, "timed-ns/call")
			b.ReportMetric(timed-raw, "overhead-ns/call")
		})
	}
}
