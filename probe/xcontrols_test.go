package probe_test

import (
	"slices"
	"testing"

	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// xDrain is a drain of no sockets with k controls a tick, the cache-line
// ping on p and the memory chase.
func xDrain(clk *rt.Clock, k int, p *probe.PingLines) *probe.Drain {
	return probe.NewDrain(probe.DrainConfig{Receiver: &fakeRx{q: map[int][][]byte{}}, Clock: clk, Set: record.NewSet(seedLayout),
		Controls: k, Ping: p, Chase: true})
}

// TestPingChaseRecorded: a tick records one ping sample per line written
// since the last tick (none when the writer wrote nothing, all of them
// after a full round), k chase runs, and allocates nothing.
func TestPingChaseRecorded(t *testing.T) {
	const k = 8
	p := probe.NewPingLines()
	d := xDrain(clock(t), k, p)
	d.Measure = true
	far := rt.Monotonic() + 3600e9
	ping, chase := d.Set().HDR(record.CacheLine), d.Set().HDR(record.MemChase)
	d.ControlTick(rt.Monotonic(), far)
	if ping.Count() != 0 || chase.Count() != probe.ChaseRuns {
		t.Fatalf("nothing written: %d ping samples, %d chase runs; want 0 and %d", ping.Count(), chase.Count(), probe.ChaseRuns)
	}
	for range 5 {
		p.Touch()
	}
	d.ControlTick(rt.Monotonic(), far)
	if ping.Count() != 5 {
		t.Fatalf("5 lines written: %d ping samples, want 5", ping.Count())
	}
	for range 3 * probe.PingLineCount {
		p.Touch()
	}
	d.ControlTick(rt.Monotonic(), far)
	if ping.Count() != 5+probe.PingLineCount || chase.Count() != 3*probe.ChaseRuns {
		t.Fatalf("every line written: %d ping samples, %d chase runs; want %d and %d", ping.Count(), chase.Count(), 5+probe.PingLineCount, 3*probe.ChaseRuns)
	}
	if a := testing.AllocsPerRun(50, func() {
		for range probe.PingLineCount {
			p.Touch()
		}
		d.ControlTick(rt.Monotonic(), far)
	}); a != 0 {
		t.Errorf("allocs %v, want 0", a)
	}
	var nilLines *probe.PingLines
	nilLines.Touch() // a sender without a ping: nothing
}

// BenchmarkPingChase reports the cache-line ping's and the memory chase's
// cost a tick (k = 64 null syscalls and loops, every ping line written since the last
// tick by another goroutine's Touch, wherever it runs; ChaseRuns chase
// runs), by median over
// ticks: ping-us and chase-us for the two, with the recording.
func BenchmarkPingChase(b *testing.B) {
	const k = 64
	clk := clock(b)
	p := probe.NewPingLines()
	d := xDrain(clk, k, p)
	d.Measure = true
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				p.Touch()
			}
		}
	}()
	var ticks []float64
	far := rt.Monotonic() + 3600e9
	for b.Loop() {
		t0 := rt.Monotonic()
		d.ControlTick(t0, far)
		if len(ticks) < 1<<16 {
			ticks = append(ticks, float64(rt.Monotonic()-t0))
		}
	}
	close(stop)
	<-done
	slices.Sort(ticks)
	b.ReportMetric(ticks[len(ticks)/2]/1e3, "tick-us")
	ns := 1e9 / clk.Info().Hz
	b.ReportMetric(float64(d.Set().HDR(record.CacheLine).Quantile(0.5))*ns, "ping-ns")
	b.ReportMetric(float64(d.Set().HDR(record.MemChase).Quantile(0.5))*ns, "chase-run-ns")
}
