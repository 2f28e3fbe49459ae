package engine

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/workload"
)

// probeRunner is one measured probe of a trial, run on its own thread(s).
type probeRunner interface {
	// start launches the probe; h is a netlink handle in the run's
	// namespace (nil without one). It returns degraded-mode notes.
	start(h *netlink.Handle, allowDegraded bool) ([]string, error)
	// finished reports whether the probe is done (true if never started).
	finished() bool
	// stop asks the probe to end early (interrupt); wait waits for it.
	stop()
	wait()
	result() results.Probe
	close()
}

var (
	_ probeRunner = (*tapSend)(nil)
	_ probeRunner = (*fileWriteProbe)(nil)
	_ probeRunner = (*messagingProbe)(nil)
)

func (p *tapSend) finished() bool        { return p.thread == nil || p.done.Load() }
func (p *tapSend) stop()                 {} // a tap sweep is bounded by its packet count
func (p *tapSend) result() results.Probe { return p.res }

// newProbe builds the probe of spec ps (on a thread inside the namespace
// when the run has one: tap_send binds a sink socket there).
// Its threads are exempt from housekeeping hk (nil: none).
func newProbe(ps scenario.Probe, eps map[string]*endpoint, clock *rt.Clock, rep scenario.Report, hk *rt.Housekeeping) (probeRunner, error) {
	switch ps.Kind {
	case scenario.ProbeTapSend:
		return newTapSend(ps, eps[ps.Endpoint], clock.ForThread(), rep, hk)
	case scenario.ProbeFileWrite:
		return newFileWriteProbe(ps, clock.ForThread(), rep, hk)
	case scenario.ProbeMessaging:
		return newMessagingProbe(ps, hk)
	}
	return nil, fmt.Errorf("probe kind %q not supported", ps.Kind)
}

// degradedNotes are the notes of what probe name's thread runs without.
func degradedNotes(name string, a rt.Applied) []string {
	var d []string
	for _, x := range a.Degraded {
		d = append(d, fmt.Sprintf("probe %s: %s", name, x))
	}
	return d
}

// fileWriteProbe is seed 002's fstime loop on its own thread.
type fileWriteProbe struct {
	spec   scenario.Probe
	fw     *workload.FileWrite
	clock  *rt.Clock
	hist   *record.Linear
	hdr    *record.HDR
	thread *rt.Thread
	done   atomic.Bool
	halt   atomic.Bool
	res    results.Probe
	out    workload.FileWriteResult
	hk     *rt.Housekeeping
}

func newFileWriteProbe(ps scenario.Probe, clock *rt.Clock, rep scenario.Report, hk *rt.Housekeeping) (*fileWriteProbe, error) {
	p := &fileWriteProbe{spec: ps, clock: clock, hk: hk,
		hist: record.NewLinear(rep.BucketWidth, rep.BucketOrigin, rep.Overflow), hdr: record.NewHDR(int64(time.Second))}
	fw, err := workload.NewFileWrite(workload.FileWriteConfig{Dir: ps.Dir, Block: int(ps.Block), Blocks: ps.Blocks, Clock: clock, Hist: p.hist, HDR: p.hdr})
	if err != nil {
		return nil, err
	}
	p.fw = fw
	p.res = results.Probe{Name: ps.Name, Kind: ps.Kind.String()}
	return p, nil
}

func (p *fileWriteProbe) start(_ *netlink.Handle, allowDegraded bool) ([]string, error) {
	bind := func(rt.Applied) error { return p.clock.Bind() } // the thread's own cycle counter, now that it is pinned
	th, a, err := rt.Start(probeSched(p.spec, p.hk, allowDegraded), bind, func(rt.Applied) {
		defer p.done.Store(true)
		defer p.clock.Close()
		p.out = p.fw.Run(rt.Monotonic()+int64(p.spec.Duration), &p.halt)
	})
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", p.spec.Name, err)
	}
	p.thread = th
	p.res.Applied = a
	return degradedNotes(p.spec.Name, a), nil
}

func (p *fileWriteProbe) finished() bool { return p.thread == nil || p.done.Load() }
func (p *fileWriteProbe) stop()          { p.halt.Store(true) }
func (p *fileWriteProbe) wait() {
	if p.thread != nil {
		p.thread.Wait()
	}
}

func (p *fileWriteProbe) result() results.Probe {
	r := p.res
	o := p.out
	r.FileWrite = &results.FileWriteResult{BlockBytes: int(p.spec.Block), Blocks: p.spec.Blocks, DurationNs: o.ElapsedNs,
		Passes: o.Passes, Writes: o.Writes, Bytes: o.Bytes, ShortWrites: o.ShortWrites, Errors: o.Errors,
		KBps: o.KBps, WritesPerSec: o.WritesPerSec, FileSize: o.FileSize,
		PerWrite: results.LatencyOf(p.hdr, true), Hist: p.hist.Snapshot(p.clock.Info().TickUnit())}
	return r
}

func (p *fileWriteProbe) close() { p.fw.Close() }

// messagingProbe is seed 001's hackbench model.
type messagingProbe struct {
	spec scenario.Probe
	m    *workload.Messaging
	halt atomic.Bool
	done atomic.Bool
	ch   chan struct{}
	out  workload.MessagingResult
	res  results.Probe
}

func newMessagingProbe(ps scenario.Probe, hk *rt.Housekeeping) (*messagingProbe, error) {
	m, err := workload.NewMessaging(messagingProbeConfig(ps, hk))
	if err != nil {
		return nil, err
	}
	return &messagingProbe{spec: ps, m: m, res: results.Probe{Name: ps.Name, Kind: ps.Kind.String()}}, nil
}

func (p *messagingProbe) start(*netlink.Handle, bool) ([]string, error) {
	p.ch = make(chan struct{})
	go func() {
		defer close(p.ch)
		defer p.done.Store(true)
		p.out = p.m.Run(&p.halt)
	}()
	return nil, nil
}

func (p *messagingProbe) finished() bool { return p.ch == nil || p.done.Load() }
func (p *messagingProbe) stop()          { p.halt.Store(true) }
func (p *messagingProbe) wait() {
	if p.ch != nil {
		<-p.ch
	}
}

func (p *messagingProbe) result() results.Probe {
	r := p.res
	o := p.out
	r.Messaging = &results.MessagingResult{Groups: p.spec.Groups, FDs: p.spec.FDs, Loops: p.spec.Loops, Size: int(p.spec.Size[0]),
		Transport: p.spec.Transport.String(), Workers: o.Workers, ElapsedNs: o.ElapsedNs, UserNs: o.UserNs, SysNs: o.SysNs,
		Sent: o.Sent, Received: o.Received, Bytes: o.Bytes, Stopped: o.Stopped}
	return r
}

func (p *messagingProbe) close() { p.m.Close() }
