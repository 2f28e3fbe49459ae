package engine

import (
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/tap"
	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
)

// sinkPort is the UDP port of the sink socket behind a tap_send device.
const sinkPort = 9

// tapSend is the tap_send probe of seed 004: write Packets frames of each
// size into a tap device, timing every write(2).
type tapSend struct {
	spec  scenario.Probe
	hk    *rt.Housekeeping // its thread is exempt from it
	dev   *tap.Device
	ep    scenario.Endpoint
	clock *rt.Clock
	sink  *udp.Group
	bld   []*tap.Builder // one per size
	hist  []*record.Linear
	hdr   []*record.HDR
	res   results.Probe
	// sink drain
	sinkStop atomic.Bool
	sinkWG   sync.WaitGroup
	sinkRecv atomic.Uint64
	thread   *rt.Thread
	done     atomic.Bool
}

// newTapSend prepares the probe: a sink socket on the device address (in
// the namespace: call on a thread inside it) and one prebuilt frame per size.
func newTapSend(ps scenario.Probe, ep *endpoint, clock *rt.Clock, rep scenario.Report, hk *rt.Housekeeping) (p *tapSend, err error) {
	if ep == nil || len(ep.devices) == 0 {
		return nil, fmt.Errorf("endpoint %s has no tap device", ps.Endpoint)
	}
	dev := ep.devices[0]
	p = &tapSend{spec: ps, dev: dev, ep: ep.spec, clock: clock, hk: hk}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	p.sink, err = udp.Open(udp.Config{Count: 1, Addr: dev.Addr().Addr(), Port: sinkPort, RcvBuf: 64 << 20, Namespaced: true})
	if err != nil {
		return p, fmt.Errorf("sink socket: %w", err)
	}
	src := netip.AddrPortFrom(dev.Addr().Addr().Next(), 40000)
	flow := tap.Flow{SrcMAC: frameSrcMAC, DstMAC: dev.MAC(), Src: src, Dst: p.sink.Addrs()[0]}
	for _, sz := range ps.Size {
		payload := int(sz) - 14 - 20 - 8
		b, err := tap.NewBuilder([]tap.Flow{flow}, payload, ep.spec.VnetHdr)
		if err != nil {
			return p, fmt.Errorf("frame of %d B: %w", sz, err)
		}
		p.bld = append(p.bld, b)
		// Writes of a few µs: 128-tick buckets would need thousands of rows;
		// the probe histogram is 64 buckets up to 16× the table's overflow.
		w := max(rep.BucketWidth, rep.Overflow*16/64)
		p.hist = append(p.hist, record.NewLinear(w, 0, w*64))
		p.hdr = append(p.hdr, record.NewHDR(int64(time.Second)))
	}
	p.res = results.Probe{Name: ps.Name, Kind: ps.Kind.String(), Device: dev.Name(), VnetHdr: ep.spec.VnetHdr, Queues: ep.spec.Queues, MTU: dev.MTU()}
	return p, nil
}

// start runs the probe on its own thread; stats reads device counters
// through h (a netlink handle in the namespace).
func (p *tapSend) start(h *netlink.Handle, allowDegraded bool) ([]string, error) {
	p.sinkWG.Add(1)
	go p.drainSink()
	bind := func(rt.Applied) error { return p.clock.Bind() } // the thread's own cycle counter, now that it is pinned
	th, a, err := rt.Start(probeSched(p.spec, p.hk, allowDegraded), bind, func(rt.Applied) {
		defer p.clock.Close()
		p.run(h)
	})
	if err != nil {
		p.sinkStop.Store(true)
		p.sinkWG.Wait()
		return nil, fmt.Errorf("probe %s: %w", p.spec.Name, err)
	}
	p.thread = th
	p.res.Applied = a
	return degradedNotes(p.spec.Name, a), nil
}

// drainSink reads the sink socket off the measured thread so that the
// frames written are delivered, not dropped for a full receive queue.
func (p *tapSend) drainSink() {
	defer p.sinkWG.Done()
	rx := udp.NewRecvFrom(65536)
	fd := p.sink.FDs()[0]
	for !p.sinkStop.Load() {
		n, _, errno := rx.Recv(fd)
		if errno == unix.EAGAIN {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		p.sinkRecv.Add(uint64(n))
	}
	for {
		n, _, errno := rx.Recv(fd)
		if errno != 0 {
			return
		}
		p.sinkRecv.Add(uint64(n))
	}
}

// run is the probe thread: for each size, 100 unmeasured writes, then
// Packets timed writes; device counters and the sink are read around it.
func (p *tapSend) run(h *netlink.Handle) {
	defer p.done.Store(true)
	fd := p.dev.FDs()[0]
	for i, b := range p.bld {
		frame := b.Frame(0, 0, rt.Monotonic())
		for w := 0; w < 100; w++ {
			tap.WriteFrame(fd, frame)
		}
		time.Sleep(20 * time.Millisecond) // let the warm-up frames land
		st0, err0 := p.dev.Stats(h)
		recv0 := p.sinkRecv.Load()
		drops0, _ := p.sink.Drops()
		r := results.ProbeSize{Size: int(p.spec.Size[i]), Packets: uint64(p.spec.Packets)}
		var sum uint64
		for n := 0; n < p.spec.Packets; n++ {
			frame = b.Frame(0, uint64(n), rt.Monotonic())
			t0 := p.clock.Now()
			w, errno := tap.WriteFrame(fd, frame)
			t1 := p.clock.Now()
			dt := uint64(t1 - t0)
			sum += dt
			p.hist[i].Record(dt)
			p.hdr[i].Record(uint64(float64(dt) * 1e9 / p.clock.Info().Hz))
			switch {
			case errno != 0:
				r.Errors++
				r.LastError = errno.Error()
			case w == len(frame):
				r.Written++
			}
		}
		// Wait until the sink has read (or its socket dropped) every frame
		// written, at most sinkWait: the drain is an ordinary goroutine,
		// and in a make test run it had read 798 and 938 of 2000 frames
		// 50 ms after the last write (none dropped). A frame lost before the socket
		// (RxDropped, or the IP layer) ends the wait at sinkWait.
		drops1 := p.waitSink(recv0, drops0, r.Written)
		st1, err1 := p.dev.Stats(h)
		if err0 == nil && err1 == nil {
			r.RxPackets, r.RxDropped = st1.RxPackets-st0.RxPackets, st1.RxDropped-st0.RxDropped
		}
		r.SinkReceived = p.sinkRecv.Load() - recv0
		r.SinkDrops = drops1 - drops0
		r.MeanNs = float64(sum) / float64(p.spec.Packets) * 1e9 / p.clock.Info().Hz
		r.Hist = p.hist[i].Snapshot(p.clock.Info().TickUnit())
		r.PerWrite = results.LatencyOf(p.hdr[i], true)
		p.res.Sizes = append(p.res.Sizes, r)
	}
}

// sinkWait bounds how long the probe waits for the sink to read the
// frames of one size.
const sinkWait = 2 * time.Second

// waitSink polls (every millisecond, at most sinkWait) until the sink has
// received or dropped written frames since recv0 and drops0, and returns
// the socket's drop count (sk_drops) at the end.
func (p *tapSend) waitSink(recv0, drops0, written uint64) uint64 {
	deadline := time.Now().Add(sinkWait)
	for {
		drops, _ := p.sink.Drops()
		if p.sinkRecv.Load()-recv0+drops-drops0 >= written || time.Now().After(deadline) {
			return drops
		}
		time.Sleep(time.Millisecond)
	}
}

func (p *tapSend) wait() {
	if p.thread != nil {
		p.thread.Wait()
	}
	p.sinkStop.Store(true)
	p.sinkWG.Wait()
}

func (p *tapSend) close() {
	if p.sink != nil {
		p.sink.Close()
	}
}
