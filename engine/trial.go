package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/noise"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// trial is one trial of a run, carried through named phases by exec:
// build (kernel objects: endpoints, senders, probes, readers), start
// (quiet the machine and the runtime, then noise, readers, senders, probes
// and the writer), wait (the measured window), stop (every thread, in the
// order stop gives), collect (the results) and close (every kernel object,
// on every path). Only the goroutine calling exec touches it; the writer
// goroutine owns what trialWriter says it owns.
type trial struct {
	run *run
	tr  scenario.Trial
	sp  *scenario.Spec // the trial's own copy (&tr.Spec)
	ns  *netns.NS      // the run's namespace, when this trial uses it
	res *results.Trial
	// members are the trials of an interleaved group (tr is the first;
	// nil for a trial alone): they run as this one trial, whose window
	// measures every member's duration in turn.
	members []scenario.Trial
	// degraded collects the notes of what ran without a privilege.
	degraded []string

	// Kernel objects and threads, made by build and start, released by close.
	eps     map[string]*endpoint
	senders []*sender
	probes  []probeRunner
	readers []*reader
	noises  []*noise.Noise
	// recvSelf is each reader's recv-control socket (readers that time controls,
	// by reader index; nil: none), opened with the endpoints.
	recvSelf []*udp.Self
	// hk confines rtload's own threads to the housekeeping CPUs for the
	// trial (nil: not confined); the trial's threads exempt themselves.
	hk *rt.Housekeeping
	// kw watches the kernel's clocksource and RT throttling from start to
	// stop (nil: not started).
	kw    *sysinfo.KernelWatch
	dma   io.Closer       // /dev/cpu_dma_latency held open (nil: not held)
	nlh   *netlink.Handle // netlink handle in the namespace, for probes
	gcOff bool            // start turned GC off; close restores oldGC
	oldGC int
	// heapBase is the heap (bytes) right after start's collection: a soak's
	// writer collects again once it has grown by the headroom.
	heapBase uint64

	// steal is each CPU's steal time when the trial started.
	steal sysinfo.CPUSteal
	// rate0 is a tsc clock's reading paired with CLOCK_MONOTONIC at the
	// window's start (rateOK: taken), for the trial's rate check
	// (checkClockRate).
	rate0  rt.RatePoint
	rateOK bool
	// shared watches the readers' CPUs for other processes' threads that
	// can take them, from start to stop (nil: none started).
	shared *sharedWatch
	// gate holds the readers' and senders' threads before their loops
	// until the window is set (start); stop turns them away when the
	// trial never opened it.
	gate  probe.Gate
	win   window
	yield *probe.Flag // set by a soak's writer to collect garbage (probe.Loop.Yield)
	w     *trialWriter
	// stopped: the trial ended before its window did (ctx, a results file
	// that cannot be written, or a start that failed); stopAt is when wait
	// saw that (CLOCK_MONOTONIC ns).
	stopped bool
	stopAt  int64
}

// newTrial prepares trial tr of run r, or with members (≥ 2, tr the
// first) the interleaved trial of tr's group; nothing is built yet.
func newTrial(r *run, tr scenario.Trial, members []scenario.Trial) *trial {
	t := &trial{run: r, tr: tr, eps: map[string]*endpoint{}, yield: &probe.Flag{}}
	t.sp = &t.tr.Spec
	if len(members) > 1 {
		t.members = members
		t.sp.Duration *= scenario.Duration(len(members)) // each member's duration in turn
	}
	if t.sp.Network.Namespace == scenario.NamespacePrivate {
		t.ns = r.ns
	}
	t.res = &results.Trial{Index: tr.Index, Process: r.opt.Process, Round: tr.Round, Variant: tr.Variant, Profiled: tr.Profiled, Overrides: variantSet(t.sp, tr.Variant)}
	if t.ns != nil {
		t.res.Namespace = t.ns.Name()
	}
	return t
}

// exec carries the trial through its phases and returns its results (one
// per member of an interleaved trial; nil when nothing was measured: a
// build or start that failed leaves no partial trial), the notes of what
// ran degraded, and the first error. Kernel objects are closed on every
// path.
func (t *trial) exec(ctx context.Context) ([]*results.Trial, []string, error) {
	defer t.close()
	if err := t.build(); err != nil {
		return nil, t.degraded, err
	}
	if err := t.start(); err != nil {
		t.stopped = true
		t.stop()
		t.discard()
		return nil, t.degraded, err
	}
	t.wait(ctx)
	t.stop()
	return t.collect()
}

// build confines rtload's own threads to the housekeeping CPUs (confine),
// then makes the trial's kernel objects: endpoints, senders and probes
// (on a thread inside the namespace, when private, so that sockets and tap
// fds stay in it), then the readers with their wakeup logs.
func (t *trial) build() error {
	if err := t.confine(); err != nil {
		return err
	}
	bufSize := recvBufSize(t.sp.Traffic)
	var err error
	if t.ns != nil {
		err = t.ns.Do(t.buildNet)
	} else {
		err = t.buildNet()
	}
	if err != nil {
		return err
	}
	var dir *store.Dir
	if !t.run.opt.NoWakeupLog {
		dir = t.run.opt.Results
	}
	for i := range t.sp.Readers {
		r, err := newReader(t.tr, i, t.eps, t.recvControl(i), bufSize, t.run.clock, dir, t.run.opt, t.run.opt.Setup.BufOffset(i))
		if err != nil {
			return err
		}
		t.readers = append(t.readers, r)
		if t.members != nil {
			if err := r.interleave(t.members, i, bufSize, t.run.opt.Setup.BufOffset(i), int64(t.sp.Duration), dir, t.run.opt.logPrefix()); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildNet opens the endpoints (tap devices numbered across them), a
// sender per traffic entry, the probes and the
// readers' recv-control sockets.
func (t *trial) buildNet() error {
	dev := 0
	for i, e := range t.sp.Endpoints {
		ep, err := openEndpoint(e, t.ns, dev, t.run.opt.Setup.SocketOrder(i, e.Count))
		if err != nil {
			return err
		}
		dev += len(ep.devices)
		t.eps[e.Name] = ep
	}
	for _, tf := range t.sp.Traffic {
		ep := t.eps[tf.Endpoint]
		tx, err := newInjector(ep, int(tf.Size))
		if err != nil {
			return fmt.Errorf("traffic to %s: %w", tf.Endpoint, err)
		}
		s := newSender(tf, ep.group, tx, t.tr.Index)
		s.ping = ep.ping
		s.yield = t.yield
		t.senders = append(t.senders, s)
	}
	for _, ps := range t.sp.Probes {
		p, err := newProbe(ps, t.eps, t.run.clock, t.sp.Report, t.hk)
		if err != nil {
			return fmt.Errorf("probe %s: %w", ps.Name, err)
		}
		t.probes = append(t.probes, p)
	}
	return t.openRecvControls()
}

// openRecvControls opens a socket for the recv control (probe's xrecv.go)
// of each reader that times controls (readers[].controls > 0) and reads
// sockets: in the endpoints' namespace, never one of the workload's
// sockets. A profiled trial has none: its calls are receive system calls,
// which the profile's phase rule counts as the drain's.
func (t *trial) openRecvControls() error {
	if t.tr.Profiled {
		return nil
	}
	t.recvSelf = make([]*udp.Self, len(t.sp.Readers))
	for i, rs := range t.sp.Readers {
		if rs.Controls == 0 || len(rs.Endpoints) == 0 {
			continue
		}
		s, err := udp.OpenSelf(probe.RecvBytes)
		if err != nil {
			return fmt.Errorf("reader %s: recv control: %w", rs.Name, err)
		}
		t.recvSelf[i] = s
	}
	return nil
}

// recvControl is reader i's recv-control socket (nil: none).
func (t *trial) recvControl(i int) *udp.Self {
	if i < len(t.recvSelf) {
		return t.recvSelf[i]
	}
	return nil
}

// start quiets the machine and the runtime (quiet), starts the noise,
// the kernel watch, then the readers (their ticks begin at the window's
// t0), the senders, the probes and the writer, and lists every thread. A
// failure returns at once: exec then stops what started.
func (t *trial) start() error {
	if err := t.quiet(); err != nil {
		return err
	}
	if err := t.startNoise(); err != nil {
		return err
	}
	t.steal, _ = sysinfo.ReadCPUSteal() // nil without /proc/stat: no steal said
	// The readers' and senders' threads first, each held at the trial's
	// gate once set up; the window only when every one is there.
	for _, r := range t.readers {
		d, err := r.start(&t.gate, t.yield, t.hk, t.run.opt.AllowDegraded, t.run.opt.TaskPerfCounters)
		t.degraded = append(t.degraded, d...)
		if err != nil {
			return err
		}
	}
	for _, s := range t.senders {
		d, err := s.launch(&t.gate, t.hk, t.run.opt.AllowDegraded)
		t.degraded = append(t.degraded, d...)
		if err != nil {
			return err
		}
	}
	if err := t.awaitGate(); err != nil {
		return err
	}
	t.win = trialWindow(t.sp, rt.Monotonic())
	t.rate0, t.rateOK = t.run.clock.RatePoint()
	t.watchKernel()
	for _, r := range t.readers {
		r.arm(t.win)
	}
	// Senders run from t0 to the end of the measured window.
	for _, s := range t.senders {
		s.arm(t.win.t0, t.win.until)
	}
	t.gate.Open()
	if t.tr.Profiled {
		for _, r := range t.readers {
			if err := r.startProfiler(t.run.profiles, t.sp.Profile.Frequency, t.win.from, t.win.until); err != nil {
				return fmt.Errorf("reader %s: %w", r.spec.Name, err)
			}
		}
	}
	if err := t.startProbes(); err != nil {
		return err
	}
	w, err := newTrialWriter(t)
	if err != nil {
		return err
	}
	t.w = w
	if err := w.start(); err != nil {
		return err
	}
	t.watchShared()
	t.res.ThreadsStart = t.threads()
	if t.shared != nil {
		t.shared.start()
	}
	return nil
}

// gateWait bounds how long a trial waits for its real-time threads to
// reach their gate (their setup done).
const gateWait = 60 * time.Second

// awaitGate waits until every reader's and sender's thread is at the
// trial's gate, set up and past its last preemption point, checked every
// millisecond for at most gateWait. How long it takes is the machine's
// (a thread's setup can wait on the Go runtime's SCHED_OTHER threads);
// the window starts after it, so no trial loses its first ticks to it.
func (t *trial) awaitGate() error {
	there := func() bool {
		for _, r := range t.readers {
			if !r.atGate.Load() {
				return false
			}
		}
		for _, s := range t.senders {
			if !s.atGate.Load() {
				return false
			}
		}
		return true
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(gateWait); !there(); <-tick.C {
		if time.Now().After(deadline) {
			var late []string
			for _, r := range t.readers {
				if !r.atGate.Load() {
					late = append(late, "reader "+r.spec.Name)
				}
			}
			for _, s := range t.senders {
				if !s.atGate.Load() {
					late = append(late, "sender to "+s.spec.Endpoint)
				}
			}
			return fmt.Errorf("%s: set up but not at its loop %v after starting", strings.Join(late, ", "), gateWait)
		}
	}
	return nil
}

// quiet keeps the CPUs out of deep idle states, as cyclictest does
// (/dev/cpu_dma_latency, held until close), and quiets the Go runtime for
// the measured window: it collects now, then turns GC off until the trial
// ends (the GC count before and after goes in the results). GC cannot stop
// a reader inside a timed call (the measured path has no preemption
// point). A soak run (intervals) allocates a little per interval (records,
// logs): its writer collects garbage itself once the heap has grown by
// Options.GCHeadroom, first asking the readers to pass their SafePoint
// (probe.Loop.Yield), since nothing else can stop them; no automatic GC
// can start behind their back.
func (t *trial) quiet() error {
	t.res.CPUDMALatencyUs = -1
	if t.sp.CPUDMALatency >= 0 {
		f, err := rt.HoldCPUDMALatency(int32(t.sp.CPUDMALatency))
		switch {
		case err == nil:
			t.dma = f
			t.res.CPUDMALatencyUs = t.sp.CPUDMALatency
		case errors.Is(err, rt.ErrNoPrivilege) && t.run.opt.AllowDegraded:
			t.degraded = append(t.degraded, err.Error())
		default:
			return err
		}
	}
	runtime.GC()
	t.oldGC, t.gcOff = debug.SetGCPercent(-1), true
	t.heapBase = heapBytes()
	t.res.GCBefore = gcCycles()
	return nil
}

// startNoise starts every noise source, warning on log about what a
// source's configuration makes of it.
func (t *trial) startNoise() error {
	for _, nz := range t.sp.Noise {
		cfg := noiseConfig(nz, t.sp.AllowRTNoise, t.run.opt.AllowDegraded)
		cfg.Name, cfg.Exempt = noiseName(t.sp.Noise, len(t.noises)), t.hk
		for _, w := range noise.Warnings(cfg) {
			fmt.Fprintf(t.run.opt.Log, "warning: noise %s: %s\n", nz.Kind, w)
		}
		src, err := noise.New(cfg)
		if err != nil {
			return fmt.Errorf("noise %s: %w", nz.Kind, err)
		}
		if err := src.Start(); err != nil {
			return fmt.Errorf("noise %s: %w", nz.Kind, err)
		}
		t.noises = append(t.noises, src)
	}
	return nil
}

// startProbes starts the probes (tap_send, file_write, messaging) on their
// own threads; tap_send reads device counters through a netlink handle in
// the namespace.
func (t *trial) startProbes() error {
	if len(t.probes) == 0 {
		return nil
	}
	if t.ns != nil {
		h, err := t.ns.Handle()
		if err != nil {
			return fmt.Errorf("netlink handle in %s: %w", t.ns.Name(), err)
		}
		t.nlh = h
	}
	for _, p := range t.probes {
		d, err := p.start(t.nlh, t.run.opt.AllowDegraded)
		if err != nil {
			return err
		}
		t.degraded = append(t.degraded, d...)
	}
	return nil
}

// wait blocks until the measured window has ended and every probe has
// finished, ctx is done, or a results file cannot be written (a full
// disk: the trial ends now and its error says why). It reports progress
// about 5 times a second (not for a soak, which has no end).
func (t *trial) wait(ctx context.Context) {
	opt := &t.run.opt
	progress := time.NewTicker(200 * time.Millisecond)
	defer progress.Stop()
	for {
		now := rt.Monotonic()
		if now >= t.win.until && t.probesDone() {
			break
		}
		if opt.Progress != nil && !t.win.forever && !t.run.sliced {
			t.progress(math.Max(0, float64(now-t.win.t0)) / float64(t.win.until-t.win.t0))
		}
		select {
		case <-ctx.Done():
			t.stopped, t.stopAt = true, rt.Monotonic()
			return
		case <-t.w.failed:
			t.stopped, t.stopAt = true, rt.Monotonic()
			return
		case <-progress.C:
		}
	}
	if opt.Progress != nil && !t.run.sliced {
		t.progress(1)
	}
}

// progress reports fraction frac of the trial done: an interleaved trial
// moves through its members' trials in turn.
func (t *trial) progress(frac float64) {
	n := max(1, len(t.members))
	at := min(frac*float64(n), float64(n))
	i := min(int(at), n-1)
	t.run.opt.Progress(t.tr.Index-t.run.base+i, t.run.ntrials, at-float64(i))
}

func (t *trial) probesDone() bool {
	for _, p := range t.probes {
		if !p.finished() {
			return false
		}
	}
	return true
}

// stop ends the trial's threads. The order is what the results need:
//
//  1. Probes: measured work of their own. wait returned only once they
//     finished, unless the trial was stopped, when they are asked to end
//     early (file_write, messaging; a tap sweep is bounded). Their
//     results are taken here.
//  2. Senders: after the window nothing more is sent.
//  3. A pause of three periods of the first reader (tailPause): messages
//     still in flight land, and the readers' tail ticks read them
//     (counted as in flight at the end, not lost).
//  4. Readers: each ends at its next tick. Only now are their rings,
//     counters and last sets stable.
//  5. The writer: its last poll drains the rings and takes the last,
//     partial interval, which needs the readers ended and the noise still
//     running (that interval's noise work runs up to the readers' end).
//     The GC count is read after it, as it may have collected.
//  6. Noise: it runs to the very end, so the readers see one background
//     through the window and the tail; its achieved work is read as it
//     stops.
//  7. munlockall(2): the threads that needed locked memory are gone.
//  8. The kernel watch and the housekeeping confinement: every thread of
//     the trial has ended.
//
// Before anything stops it lists every thread once more (ThreadsEnd),
// unless the trial was stopped: its readers go on measuring until step 4,
// so it lists them once they ended. (The listing reads every thread of
// every process, for real-time ones on the readers' CPUs: 0.15–0.8 s
// under load, from the housekeeping CPU. Done first, it kept a stopped
// trial measuring that long past the stop, often past its window's end:
// a soak slice stopped half way had run all 100 of its ticks.) It stops
// only what start started, so it also ends a trial whose start failed
// part way.
func (t *trial) stop() {
	if t.w != nil && !t.stopped {
		t.res.ThreadsEnd = t.threads()
	}
	for _, p := range t.probes {
		if t.stopped {
			p.stop()
		}
		p.wait()
		t.res.Probes = append(t.res.Probes, p.result())
	}
	t.gate.Abort() // a start that failed before opening it: the threads there end
	for _, s := range t.senders {
		s.halt()
	}
	for _, s := range t.senders {
		s.wait()
	}
	if len(t.readers) > 0 {
		time.Sleep(tailPause(t.sp))
	}
	for _, r := range t.readers {
		r.halt()
	}
	for _, r := range t.readers {
		r.wait()
		r.loop.FinishInterleave()                   // the block the loop ended in
		if why := r.clockStatus.Reason; why != "" { // the cycles clock counted only part of the window: the trial is marked
			t.degraded = append(t.degraded, fmt.Sprintf("reader %s: cycles clock: %s", r.spec.Name, why))
		}
		for _, st := range r.perCallStatus {
			if st.Reason != "" { // counted only part of the calls: the trial is marked
				t.degraded = append(t.degraded, fmt.Sprintf("reader %s: per-call counter %s: %s", r.spec.Name, st.Event, st.Reason))
			}
		}
	}
	if t.w != nil && t.stopped {
		t.res.ThreadsEnd = t.threads()
	}
	if t.steal != nil {
		if now, err := sysinfo.ReadCPUSteal(); err == nil {
			t.res.StealNs = stealNs(now.Sub(t.steal))
		}
	}
	if t.w != nil {
		t.w.stop()
	}
	for _, r := range t.readers {
		// Said by the writer when it logged the spike; otherwise now.
		if note := r.tracingStopped(); note != "" && !r.traceNoted {
			r.traceNoted = true
			fmt.Fprintf(t.run.opt.Log, "warning: %s\n", note)
		}
	}
	t.res.GCAfter = gcCycles()
	t.res.GCDuring = t.res.GCAfter - t.res.GCBefore
	t.stopNoise()
	if err := rt.Munlockall(); err != nil {
		fmt.Fprintf(t.run.opt.Log, "warning: %v\n", err)
	}
	t.checkClockRate()
	t.unwatchShared()
	t.unwatchKernel()
	if t.w != nil {
		t.res.Marks = append(t.res.Marks, t.w.self.trialMarks()...)
	}
	t.unconfine()
}

// stopNoise stops every noise source and records its achieved work.
func (t *trial) stopNoise() {
	for i, nz := range t.noises {
		wk, _ := nz.Stop()
		rep := nz.Report()
		n := results.Noise{Unit: wk.Unit, Count: wk.Count, Seconds: float64(wk.Elapsed) / 1e9, PerSec: wk.PerSec(), Duty: rep.Duty, CPUShare: rep.CPUShare}
		if i < len(t.sp.Noise) {
			n.Kind, n.Threads = t.sp.Noise[i].Kind.String(), t.sp.Noise[i].WorkerThreads()
		}
		t.res.Noise = append(t.res.Noise, n)
	}
}

// discard removes what a trial that measured nothing wrote: its readers'
// wakeup logs.
func (t *trial) discard() {
	for _, r := range t.readers {
		r.discardLog(t.run.opt.Results)
	}
}

// collect turns what the stopped threads counted into the trial's results
// and returns the first error the trial met: a reader's clock_nanosleep,
// a wakeup log, or the interval or spike log.
func (t *trial) collect() ([]*results.Trial, []string, error) {
	out, err := t.collectOne()
	if out != nil && t.members != nil {
		return t.split(out), t.degraded, err
	}
	return []*results.Trial{out}, t.degraded, err
}

// collectOne is collect for the trial as run: one results.Trial (an
// interleaved trial's trial-wide values, which split divides).
func (t *trial) collectOne() (*results.Trial, error) {
	res := t.res
	res.DurationNs = int64(t.sp.Duration)
	if t.stopped {
		res.DurationNs = t.stoppedWindow()
	}
	for _, r := range t.readers {
		r.closeLog()
	}
	collect(res, t.sp, t.senders, t.readers)
	t.markEmpty()
	if t.tr.Profiled {
		t.run.profiles.add(res, t.readers) // the readers and the writer have ended
	}
	for _, r := range t.readers {
		if r.loop.Errno != 0 {
			return res, fmt.Errorf("reader %s: clock_nanosleep: %w", r.spec.Name, unix.Errno(r.loop.Errno))
		}
		if r.logErr != nil {
			return res, r.logErr // results names the log
		}
	}
	if t.w.err != nil {
		return res, fmt.Errorf("results: %w", t.w.err) // an interval or spike log, or a checkpoint; each names its file
	}
	return res, nil
}

// stoppedWindow is a stopped trial's measured time in ns: from the
// window's start to where measuring ended, never past the window's end.
// Measuring ends where the readers' loops did (each measures up to the
// tick after its halt), the latest of them; with no reader, at the stop.
// The stop's own work after that (senders, the tail pause, noise, logs)
// is not measured time: counted in, a stop that took 700 ms under load
// gave a 1 s soak slice a duration of 1.26 s.
func (t *trial) stoppedWindow() int64 {
	end := t.stopAt
	if len(t.readers) > 0 {
		end = 0
		for _, r := range t.readers {
			end = max(end, r.loop.EndNs)
		}
	}
	return min(max(0, end-t.win.from), t.win.until-t.win.from)
}

// close releases everything the trial opened, on every path: the netlink
// handle, GC back on, the CPU idle-state hold, then injectors, probes,
// endpoints (sockets, tap devices) and the readers' files and counters.
func (t *trial) close() {
	if t.kw != nil {
		t.kw.Stop() // idempotent: stop did it, unless build failed
	}
	if t.hk != nil {
		t.hk.Stop()
	}
	if t.nlh != nil {
		t.nlh.Close()
	}
	if t.gcOff {
		debug.SetGCPercent(t.oldGC)
	}
	if t.dma != nil {
		t.dma.Close()
	}
	for _, s := range t.senders {
		s.tx.Close()
	}
	for _, p := range t.probes {
		p.close()
	}
	for _, e := range t.eps {
		e.Close()
	}
	for _, r := range t.readers {
		r.close()
	}
	for _, s := range t.recvSelf {
		s.Close()
	}
}

// window is a trial's timeline (CLOCK_MONOTONIC ns): readers tick and
// senders send from t0; the measured window is [from, until), after a
// warm-up from t0 to from; a reader never told to stop ends at hardStop.
// A soak (duration 0) is forever: until is far enough never to come.
type window struct {
	t0, from, until, hardStop int64
	forever                   bool
}

// trialStartDelay is how long after start the threads' first tick comes:
// time for every thread to be started and settled before it.
const trialStartDelay = 200 * time.Millisecond

// trialWindow is sp's timeline for a trial started at now.
func trialWindow(sp *scenario.Spec, now int64) window {
	w := window{t0: now + int64(trialStartDelay)}
	w.from = w.t0 + int64(sp.Warmup)
	w.until = w.from + int64(sp.Duration)
	if sp.Duration == 0 {
		w.forever, w.until = true, math.MaxInt64/4 // a soak: until stopped
	}
	w.hardStop = w.until + int64(5*time.Second)
	return w
}

// stealNs is d in ns per CPU, or nil when no CPU had any.
func stealNs(d sysinfo.CPUSteal) []int64 {
	if d.On(nil) == 0 {
		return nil
	}
	out := make([]int64, len(d))
	for i, v := range d {
		out[i] = int64(v)
	}
	return out
}

// tailPause is how long stop waits between the last send and the readers'
// stop: three periods of the first reader (10 ms without one), for the
// messages in flight to land and be read.
func tailPause(sp *scenario.Spec) time.Duration {
	period := 10 * time.Millisecond
	if len(sp.Readers) > 0 {
		period = time.Duration(sp.Readers[0].Period)
	}
	return 3 * period
}

// recvBufSize is a receiver's buffer per message: the largest traffic
// payload, at least 2048 bytes.
func recvBufSize(traffic []scenario.Traffic) int {
	n := 2048
	for _, t := range traffic {
		n = max(n, int(t.Size))
	}
	return n
}

// noiseName names the threads of noise entry i of noise: its kind, with
// the entry's count among those of its kind from the second one on
// ("spin", "spin2"), so that two entries of one kind differ.
func noiseName(noise []scenario.Noise, i int) string {
	kind, n := noise[i].Kind.String(), 1
	for _, nz := range noise[:i] {
		if nz.Kind == noise[i].Kind {
			n++
		}
	}
	if n == 1 {
		return kind
	}
	return kind + strconv.Itoa(n)
}

// variantSet is the --set overrides of variant name (nil for none).
func variantSet(sp *scenario.Spec, name string) map[string]string {
	for _, v := range sp.Variants {
		if v.Name == name {
			return v.Set
		}
	}
	return nil
}

// hasThreshold reports whether any reader logs spikes.
func hasThreshold(sp *scenario.Spec) bool {
	for _, r := range sp.Readers {
		if r.Threshold > 0 {
			return true
		}
	}
	return false
}
