package probe_test

import (
	"math"
	"slices"
	"testing"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// overheadBlock is the calls per block of BenchmarkOverhead (≤
// probe.SampleBuffer, so the measured path never flushes inside a block).
const overheadBlock = 1000

// maxBlocks bounds the per-block values BenchmarkOverhead keeps (allocated
// before the timed loop).
const maxBlocks = 1 << 16

// BenchmarkOverhead reports what the drain adds to a recv call, measured
// within one run on one empty socket (every call EAGAIN, the seed's common
// case). Each iteration makes, in alternating order, a block of 1000 bare
// Recv calls (raw), the drain's measured path over the same socket listed
// 1000 times (timed: per call the counters check, two clock reads at the
// call site, the recv call, one stored sample), the flush that derives the
// histograms from those samples (derive: after the tick's last call, off
// the measured path), and 1000 pairs of back-to-back clock reads as the
// drain makes them (two-reads: the floor of any timing). Every metric is a
// median over the blocks, per call, so preemptions on a loaded machine do
// not move it:
//
//	overhead-ns/call        timed − raw: what the measured path adds per call
//	excess-ns/call          timed − raw − two-reads: what it adds beyond the two reads,
//	                        with excess-lo and excess-hi, the 95% CI of that median
//	derive-ns/call          the flush, per call
//	total-overhead-ns/call  timed + derive − raw: all the reader spends per call on measuring
func BenchmarkOverhead(b *testing.B) {
	for _, r := range []struct {
		name string
		rx   udp.Receiver
	}{{"recvfrom", udp.NewRecvFrom(2048)}, {"recvmsg", udp.NewRecvMsg(2048)}, {"recvmmsg8", udp.NewRecvMMsg(2048, 8)}} {
		b.Run(r.name, func(b *testing.B) {
			g, _ := openGroup(b, 1)
			fd := g.FDs()[0]
			fds := make([]int, overheadBlock)
			for i := range fds {
				fds[i] = fd
			}
			clk := clock(b)
			d := probe.NewDrain(probe.DrainConfig{FDs: fds, Receiver: r.rx, Clock: clk, Set: record.NewSet(seedLayout)})
			d.Measure = true
			reads := twoReads(clk)
			raw, timed, derive, floor := make([]float64, 0, maxBlocks), make([]float64, 0, maxBlocks), make([]float64, 0, maxBlocks), make([]float64, 0, maxBlocks)
			per := func(ns int64) float64 { return float64(ns) / overheadBlock }
			rawBlock := func() float64 {
				t0 := rt.Monotonic()
				for i := 0; i < overheadBlock; i++ {
					r.rx.Recv(fd)
				}
				return per(rt.Monotonic() - t0)
			}
			b.ReportAllocs()
			for n := 0; b.Loop(); n++ {
				var a float64
				if n%2 == 0 {
					a = rawBlock()
				}
				t1 := rt.Monotonic()
				d.StepCalls()
				t2 := rt.Monotonic()
				d.Flush()
				t3 := rt.Monotonic()
				reads()
				t4 := rt.Monotonic()
				if n%2 == 1 {
					a = rawBlock()
				}
				if len(raw) < maxBlocks {
					raw, timed = append(raw, a), append(timed, per(t2-t1))
					derive, floor = append(derive, per(t3-t2)), append(floor, per(t4-t3))
				}
			}
			if c := d.Counts(); c.EAGAIN != c.Calls || c.Calls%overheadBlock != 0 {
				b.Fatalf("drain made %d calls, %d EAGAIN: want whole blocks of EAGAIN calls", c.Calls, c.EAGAIN)
			}
			diff := func(f func(i int) float64) []float64 {
				out := make([]float64, len(raw))
				for i := range out {
					out[i] = f(i)
				}
				return out
			}
			excess := diff(func(i int) float64 { return timed[i] - raw[i] - floor[i] })
			lo, hi := medianCI(excess)
			b.ReportMetric(median(raw), "raw-ns/call")
			b.ReportMetric(median(timed), "timed-ns/call")
			b.ReportMetric(median(diff(func(i int) float64 { return timed[i] - raw[i] })), "overhead-ns/call")
			b.ReportMetric(median(floor), "two-reads-ns")
			b.ReportMetric(median(excess), "excess-ns/call")
			b.ReportMetric(lo, "excess-lo")
			b.ReportMetric(hi, "excess-hi")
			b.ReportMetric(median(derive), "derive-ns/call")
			b.ReportMetric(median(diff(func(i int) float64 { return timed[i] + derive[i] - raw[i] })), "total-overhead-ns/call")
		})
	}
}

// twoReads returns a block of overheadBlock pairs of back-to-back reads
// of clk as the drain reads it (rt.TSC, rt.TSCFenced, (*Clock).Cycles or rt.Monotonic at
// the call site).
func twoReads(clk *rt.Clock) func() {
	var sink rt.Ticks
	switch clk.Source() {
	case rt.SourceTSC:
		return func() {
			for i := 0; i < overheadBlock; i++ {
				t0 := rt.TSC()
				sink += rt.TSC() - t0
			}
		}
	case rt.SourceTSCFenced:
		return func() {
			for i := 0; i < overheadBlock; i++ {
				t0 := rt.TSCFenced()
				sink += rt.TSCFenced() - t0
			}
		}
	case rt.SourceCycles:
		return func() {
			for i := 0; i < overheadBlock; i++ {
				t0 := clk.Cycles()
				sink += clk.Cycles() - t0
			}
		}
	}
	return func() {
		for i := 0; i < overheadBlock; i++ {
			t0 := rt.Monotonic()
			sink += rt.Ticks(rt.Monotonic() - t0)
		}
	}
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

// medianCI is the distribution-free 95% CI of the median of x: the order
// statistics k and n−k+1 with k = ⌊n/2 − 1.96·√n/2⌋ (normal approximation
// of the binomial), NaN for fewer than 6 values.
func medianCI(x []float64) (lo, hi float64) {
	n := len(x)
	k := int(math.Floor(float64(n)/2 - 1.96*math.Sqrt(float64(n))/2))
	if n < 6 || k < 1 {
		return math.NaN(), math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return s[k-1], s[n-k]
}
