package probe_test

import (
	"slices"
	"testing"
	"time"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// openSelf opens a recv control's socket, closed when t ends.
func openSelf(t testing.TB) *udp.Self {
	t.Helper()
	s, err := udp.OpenSelf(probe.RecvBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// recvReceivers are the workload's receivers the recv control runs with.
func recvReceivers() []struct {
	name string
	rx   udp.Receiver
} {
	return []struct {
		name string
		rx   udp.Receiver
	}{{"recvfrom", udp.NewRecvFrom(2048)}, {"recvmsg", udp.NewRecvMsg(2048)}, {"recvmmsg8", udp.NewRecvMMsg(2048, 8)}}
}

// TestRecvControlRecorded: with each receiver and clock source, a tick's
// recv control records RecvRounds data calls and RecvRounds EAGAIN calls
// on the drain's own socket (a datagram left on it before the tick
// changes nothing: the untimed first call empties it), nothing when not
// measured, nothing into any other class but the other controls', and
// allocates nothing. With the fake cycles clock (100 a read) each call
// costs exactly 100 ticks: the reads sit around the recv call alone.
func TestRecvControlRecorded(t *testing.T) {
	var cycles uint64
	fake := rt.FakeCyclesClock(func() uint64 { cycles += 100; return cycles })
	mono, err := rt.NewClock(rt.ClockMonotonic)
	if err != nil {
		t.Fatal(err)
	}
	clocks := []*rt.Clock{fake, mono}
	if c := clock(t); c.Source() == rt.SourceTSC || c.Source() == rt.SourceTSCFenced {
		clocks = append(clocks, c)
	}
	const k = 4
	for _, r := range recvReceivers() {
		for _, clk := range clocks {
			t.Run(r.name+"/"+clk.Info().Kind, func(t *testing.T) {
				s := openSelf(t)
				d := probe.NewDrain(probe.DrainConfig{Receiver: r.rx, Clock: clk, Set: record.NewSet(seedLayout), Controls: k, Recv: s})
				data, eagain := d.Set().HDR(record.RecvData), d.Set().HDR(record.RecvEAGAIN)
				far := rt.Monotonic() + 3600e9
				d.ControlTick(rt.Monotonic(), far) // not measured: runs, records nothing
				if data.Count() != 0 || eagain.Count() != 0 {
					t.Fatalf("unmeasured tick recorded %d data and %d EAGAIN calls", data.Count(), eagain.Count())
				}
				d.Measure = true
				for range 3 {
					s.Send() // left over: the tick's untimed first call takes it
				}
				d.ControlTick(rt.Monotonic(), far)
				if data.Count() != probe.RecvRounds || eagain.Count() != probe.RecvRounds {
					t.Fatalf("one tick with 3 datagrams left over: %d data and %d EAGAIN calls; want %d of each", data.Count(), eagain.Count(), probe.RecvRounds)
				}
				if a := testing.AllocsPerRun(50, func() { d.ControlTick(rt.Monotonic(), far) }); a != 0 {
					t.Errorf("ControlTick allocs %v, want 0", a)
				}
				const want = 52 * probe.RecvRounds
				if data.Count() != want || eagain.Count() != want || d.Counts().ControlSkips != 0 {
					t.Fatalf("%d data and %d EAGAIN calls (%d skips); want %d of each, no skip", data.Count(), eagain.Count(), d.Counts().ControlSkips, want)
				}
				if clk == fake && (data.Min() != 100 || data.Max() != 100 || eagain.Min() != 100 || eagain.Max() != 100) {
					t.Errorf("fake cycles: data [%d, %d], EAGAIN [%d, %d] ticks; want exactly 100", data.Min(), data.Max(), eagain.Min(), eagain.Max())
				}
				if clk != fake && (data.Min() == 0 || eagain.Min() == 0 || data.Max() > 1e12 || eagain.Max() > 1e12) {
					t.Errorf("%s: data [%d, %d], EAGAIN [%d, %d] ticks", clk.Info().Kind, data.Min(), data.Max(), eagain.Min(), eagain.Max())
				}
				for cl := range record.NumClasses {
					switch cl {
					case record.NullSyscall, record.UserLoop, record.RecvData, record.RecvEAGAIN:
						continue
					}
					if h := d.Set().HDR(cl); h != nil && h.Count() != 0 {
						t.Errorf("%s got %d samples from the controls", cl, h.Count())
					}
				}
				if c := d.Counts(); c.Calls != 0 || c.Messages != 0 {
					t.Errorf("the recv control counted as the workload's: %+v", c)
				}
			})
		}
	}
}

// TestRecvControlOff: without Controls the recv control's socket is not
// used (a datagram on it stays there), and without the socket a drain with
// controls records no recv-control call.
func TestRecvControlOff(t *testing.T) {
	s := openSelf(t)
	d := probe.NewDrain(probe.DrainConfig{Receiver: udp.NewRecvFrom(2048), Clock: clock(t), Set: record.NewSet(seedLayout), Recv: s})
	d.Measure = true
	s.Send()
	d.ControlTick(rt.Monotonic(), rt.Monotonic()+3600e9)
	if n, _, e := udp.NewRecvFrom(2048).Recv(s.FD()); n != 1 || e != 0 {
		t.Errorf("controls 0: the datagram left on the socket is gone (%d, %v)", n, e)
	}
	d = probe.NewDrain(probe.DrainConfig{Receiver: udp.NewRecvFrom(2048), Clock: clock(t), Set: record.NewSet(seedLayout), Controls: 4})
	d.Measure = true
	d.ControlTick(rt.Monotonic(), rt.Monotonic()+3600e9)
	if n := d.Set().HDR(record.RecvData).Count() + d.Set().HDR(record.RecvEAGAIN).Count(); n != 0 {
		t.Errorf("no socket: %d recv-control calls recorded", n)
	}
}

// TestLoopRecvControl runs a Loop (a 1 ms catch-up ticker on a plain
// goroutine) draining 8 real, empty loopback sockets with the recv
// control on a real socket of its own: every measured tick that ran its
// controls (all but the skipped ones) recorded exactly RecvRounds data and
// RecvRounds EAGAIN calls, and the warm-up and tail ticks (which run them
// unrecorded) none; the workload's calls are the 8 sockets' alone.
func TestLoopRecvControl(t *testing.T) {
	const k, socks = 4, 8
	ms := int64(time.Millisecond)
	g, _ := openGroup(t, socks)
	rec := probe.NewRecorders(seedLayout)
	d := probe.NewDrain(probe.DrainConfig{FDs: g.FDs(), Receiver: udp.NewRecvFrom(2048), Clock: clock(t), Set: rec.Set, Controls: k, Recv: openSelf(t)})
	tk := rt.NewTicker(rt.Monotonic()+2*ms, ms, true)
	tk.SetMaxBacklog(1 << 40)
	l := &probe.Loop{Ticker: tk, Probe: d, Drain: d, Rec: rec,
		MeasureFrom: tk.Deadline(10), MeasureUntil: tk.Deadline(60), HardStop: tk.Deadline(70),
		Wakeups: record.NewRing[record.Wakeup](128)}
	runBoundedLoop(t, l)
	c := d.Counts()
	ran := l.MeasuredTicks - c.ControlSkips
	data, eagain := uint64(rec.Set.HDR(record.RecvData).Count()), uint64(rec.Set.HDR(record.RecvEAGAIN).Count())
	if l.MeasuredTicks != 50 || c.NullCalls != k*ran {
		t.Fatalf("%d measured ticks, %d skipped their controls, %d null calls; want 50 ticks, %d calls a tick that ran them", l.MeasuredTicks, c.ControlSkips, c.NullCalls, k)
	}
	if data != probe.RecvRounds*ran || eagain != probe.RecvRounds*ran {
		t.Errorf("%d data and %d EAGAIN recv-control calls over %d measured ticks that ran their controls; want %d of each (%d a tick)",
			data, eagain, ran, probe.RecvRounds*ran, probe.RecvRounds)
	}
	if ran == 0 {
		t.Error("no measured tick ran its controls")
	}
	if c.Calls != socks*l.MeasuredTicks || c.EAGAIN != c.Calls || c.Messages != 0 {
		t.Errorf("workload counts %+v; want one EAGAIN call per socket and measured tick (%d)", c, socks*l.MeasuredTicks)
	}
}

// BenchmarkRecvControl reports the recv control's cost a tick (k = 64
// null syscalls and loops, RecvRounds rounds of the recv control with
// recvfrom on loopback) by median over ticks (tick-us, with the
// recording), and the data and EAGAIN calls' medians (recv-data-ns,
// recv-eagain-ns).
func BenchmarkRecvControl(b *testing.B) {
	const k = 64
	clk := clock(b)
	d := probe.NewDrain(probe.DrainConfig{Receiver: udp.NewRecvFrom(2048), Clock: clk, Set: record.NewSet(seedLayout), Controls: k, Recv: openSelf(b)})
	d.Measure = true
	var ticks []float64
	far := rt.Monotonic() + 3600e9
	for b.Loop() {
		t0 := rt.Monotonic()
		d.ControlTick(t0, far)
		if len(ticks) < 1<<16 {
			ticks = append(ticks, float64(rt.Monotonic()-t0))
		}
	}
	slices.Sort(ticks)
	b.ReportMetric(ticks[len(ticks)/2]/1e3, "tick-us")
	ns := 1e9 / clk.Info().Hz
	b.ReportMetric(float64(d.Set().HDR(record.RecvData).Quantile(0.5))*ns, "recv-data-ns")
	b.ReportMetric(float64(d.Set().HDR(record.RecvEAGAIN).Quantile(0.5))*ns, "recv-eagain-ns")
}
