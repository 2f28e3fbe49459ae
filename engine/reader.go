package engine

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/profile/sampler"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/rt/seccomp"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// reader is one real-time reader's state in a trial.
type reader struct {
	spec    scenario.Reader
	drain   *probe.Drain
	loop    *probe.Loop
	groups  []*udp.Group
	thread  *rt.Thread
	applied rt.Applied
	// clock times the drain's calls (a cycles clock is bound on the
	// reader's thread); clockStatus is its state when the loop ended.
	clock       *rt.Clock
	clockStatus rt.PerfStatus
	// perCall are the per-call hardware counters (readers[].counters; nil
	// without), opened by the drain on the reader's thread; perCallStatus
	// is their state when the loop ended.
	perCall       *rt.Counters
	perCallStatus []rt.PerfStatus
	// filter is the reader's seccomp filter (readers[].seccomp),
	// installed on its thread in start; seccomp is what the kernel showed
	// of it there (nil: no filter and none inherited).
	filter  *seccomp.Filter
	seccomp *results.Seccomp
	// Per-wakeup log (chunked when the scenario sets log_chunk); when
	// interleaved, vlogs holds one per variant (vlogs[0] is log) and the
	// writer routes each wakeup to its variant's.
	log     *wakelog.Writer
	vlogs   []*wakelog.Writer
	logBase string
	logErr  error
	// il alternates the variants of an interleaved trial (nil: alone).
	il *probe.Interleave
	// Interval mode: the thread hands full Recorders over; total holds the
	// trial's merged histograms (the writer's alone while the trial runs).
	intervalNs int64
	handoff    *probe.Handoff
	total      *record.Set
	// The reader thread's counters, read by the writer: from procfs by
	// default (taskBase at start, taskEnd stored by the thread itself just
	// before it exits, since its /proc entry goes with it), or with
	// Options.TaskPerfCounters perf_event_open counters on the thread (nil
	// when none opened). countersSkipped says why for each event not
	// counted, countersSource where they come from; lastCtr is their value
	// at the last interval. proc reads procfs into a buffer it keeps (the
	// writer reads the counters every interval of a soak).
	counters        *probe.Counters
	countersSkipped []string
	countersSource  string
	haveTask        bool
	taskBase        sysinfo.TaskStats
	taskEnd         atomic.Pointer[sysinfo.TaskStats]
	lastCtr, ctrBuf []uint64
	proc            *sysinfo.ProcReader
	// Interrupts and softirqs on the reader's CPU, read by the writer:
	// irqFrom at its first poll in the measured window, irqUntil at its
	// first poll after it, irqLast at the last interval; irqCur is read
	// into at the next one, then the two swap.
	irqFrom, irqUntil, irqLast, irqCur sysinfo.IRQCounts
	// machine follows the reader CPU's steal time and interrupts poll by
	// poll in the measured window (machine.go); pollLatest is the largest
	// wakeup latency drained since the writer's last poll.
	machine    *machineWatch
	pollLatest int64
	// Writer state for interval deltas and spikes.
	lastCounts                                      probe.Counts
	lastTicks, lastOverruns, lastMissed, lastSpikes uint64
	lastBacklogSkips                                uint64
	lastSent, lastNoise                             []uint64
	intervals                                       int
	prevDrain                                       int64
	spikesDropped                                   uint64 // spikes the spikes.jsonl cap kept out
	traceFiles                                      []*os.File
	traceDir                                        string // tracefs directory breaktrace writes to
	traceNoted                                      bool   // the writer said tracing stopped
	// sampler samples the reader's call chains in a profiled trial.
	sampler *sampler.Sampler
	// gate holds the thread before its loop until the trial set its
	// window (arm); atGate says the thread got there.
	gate   *probe.Gate
	atGate probe.Flag
}

// cpu is the CPU the reader is pinned to.
func (r *reader) cpu() int { return int(r.spec.CPU) }

// wakeupRingSize is how many wakeup records a reader's ring holds between
// two writer polls (50 ms apart): 1<<14 covers a 3 µs period.
const wakeupRingSize = 1 << 14

// newReader builds reader i of the trial (spec rs) over the sockets of
// eps (self: its recv-control socket, nil for none): its receiver, drain, loop and, with intervals, the handoff; with
// breaktrace the ftrace files (a failure is a warning on log: the run goes
// on without); and its wakeup log in dir (nil: none; a profiled trial
// writes none). bufSize is the receive buffer per message; allowDegraded
// leaves out per-call counters the PMU cannot give (Skipped, noted at
// start); opt gives the log, AllowDegraded and the log names' process
// prefix; bufOffset is the receive buffers' offset (Setup.BufOffset).
func newReader(tr scenario.Trial, i int, eps map[string]*endpoint, self *udp.Self, bufSize int, clock *rt.Clock, dir *store.Dir, opt Options, bufOffset int) (*reader, error) {
	log, allowDegraded := opt.Log, opt.AllowDegraded
	sp := &tr.Spec
	rs := sp.Readers[i]
	rx, err := udp.NewReceiverAt(receiverMethod(rs.Method), bufSize, rs.Batch, bufOffset)
	if err != nil {
		return nil, fmt.Errorf("reader %s: %w", rs.Name, err)
	}
	// Per-call counters (readers[].counters): opened by the drain on the
	// reader's own thread in start, recorded per call class in every set.
	var ctr *rt.Counters
	if len(rs.Counters) > 0 {
		if ctr, err = rt.NewCounters(rt.CountersConfig{Events: rs.Counters, AllowDegraded: allowDegraded}); err != nil {
			return nil, fmt.Errorf("reader %s: %w", rs.Name, err)
		}
	}
	filter, err := seccomp.New(seccompConfig(rs.Seccomp))
	if err != nil {
		return nil, fmt.Errorf("reader %s: %w", rs.Name, err)
	}
	lay := bucketLayout(sp.Report)
	cur := readerRecorders(lay, rs.Counters)
	clk := clock.ForThread() // cycles: bound on the reader's own thread in start
	cfg := drainConfig(rs, eps, rx, clk, cur.Set)
	cfg.Counters = ctr
	cfg.Recv = self
	d := probe.NewDrain(cfg)
	r := &reader{spec: rs, drain: d, clock: clk, perCall: ctr, filter: filter, groups: readerGroups(rs, eps), total: readerRecorders(lay, rs.Counters).Set,
		intervalNs: int64(sp.Interval), proc: sysinfo.NewProcReader(),
		loop: &probe.Loop{Probe: d, Drain: d, Rec: cur, Interval: int64(sp.Interval),
			Wakeups: record.NewRing[record.Wakeup](wakeupRingSize), Threshold: int64(rs.Threshold)}}
	if sp.Interval > 0 {
		r.handoff = probe.NewHandoff(readerRecorders(lay, rs.Counters))
		r.loop.Handoff = r.handoff
	}
	if rs.BreakTrace {
		if err := r.openTrace(i); err != nil {
			fmt.Fprintf(log, "warning: reader %s: breaktrace: %v\n", rs.Name, err)
		}
	}
	if dir != nil && !tr.Profiled {
		cfg := wakeupLogConfig(dir, tr, rs, opt.logPrefix())
		r.logBase = cfg.Base
		if r.log, err = wakelog.Create(cfg); err != nil {
			r.close()
			return nil, err
		}
	}
	return r, nil
}

// readerRecorders is a reader's Recorders: every class in layout lay,
// with the per-call counter events it records.
func readerRecorders(lay record.Layout, events []string) *probe.Recorders {
	rec := probe.NewRecorders(lay)
	rec.Set.AddEvents(events)
	return rec
}

// drainConfig is reader rs's drain: every socket of its endpoints in the
// order listed (socket index = position in that order), received with rx,
// timed with clk, recorded into set, with rs's drift controls.
func drainConfig(rs scenario.Reader, eps map[string]*endpoint, rx udp.Receiver, clk *rt.Clock, set *record.Set) probe.DrainConfig {
	var fds []int
	for _, name := range rs.Endpoints {
		fds = append(fds, eps[name].FDs()...)
	}
	cfg := probe.DrainConfig{FDs: fds, Receiver: rx, Clock: clk, Set: set, Controls: rs.Controls, Chase: xControls("chase")}
	for _, name := range rs.Endpoints {
		if p := eps[name].ping; p != nil && cfg.Ping == nil {
			cfg.Ping = p
		}
	}
	return cfg
}

// xControls reports whether RTLOAD_XCONTROLS (a comma-separated list:
// ping, chase) asks for the experimental drift control kind (probe's
// xcontrols.go; bench/DRIFT.md).
func xControls(kind string) bool {
	for _, k := range strings.Split(os.Getenv("RTLOAD_XCONTROLS"), ",") {
		if strings.TrimSpace(k) == kind {
			return true
		}
	}
	return false
}

// readerGroups is the socket group of each of rs's endpoints, in order.
func readerGroups(rs scenario.Reader, eps map[string]*endpoint) []*udp.Group {
	gs := make([]*udp.Group, 0, len(rs.Endpoints))
	for _, name := range rs.Endpoints {
		gs = append(gs, eps[name].group)
	}
	return gs
}

// start starts the reader's real-time thread (readerSched, exempt from
// hk), binds its clock and opens its per-call counters there, then
// installs its seccomp filter there (last: perf_event_open is not in the
// runtime-default list; the thread never returns to the Go runtime's
// pool, rt.Start's goroutine exits locked), and starts
// counting the thread's switches and faults (procfs, or with taskPerf
// task-bound perf events). The thread then waits at gate (gatedRun) until
// arm has set its window and the trial opens the gate (yield lets a
// soak's writer collect garbage). It returns the notes of what the thread
// runs without (--allow-degraded).
func (r *reader) start(gate *probe.Gate, yield *probe.Flag, hk *rt.Housekeeping, allowDegraded, taskPerf bool) ([]string, error) {
	r.gate = gate
	r.loop.Yield = yield
	setup := func(a rt.Applied) error {
		err := r.clock.Bind() // the thread's own cycle counter, now that it is pinned
		if err == nil {
			err = r.drain.OpenCounters() // per-call counters, after the clock: the thread's own too
		}
		if err == nil {
			// After both: the filter stays until the thread exits.
			if r.seccomp, err = r.filter.Install(a.TID); err != nil && r.perCall != nil {
				r.perCall.Close()
			}
		}
		if err != nil {
			r.clock.Close()
		}
		return err
	}
	th, a, err := rt.Start(readerSched(r.spec, hk, allowDegraded), setup, func(a rt.Applied) {
		r.gatedRun() // at the gate, then the loop; false: turned away
		r.clockStatus, _ = r.clock.Status()
		r.clock.Close()
		if r.perCall != nil {
			r.perCallStatus = r.perCall.Status()
			r.perCall.Close()
		}
		if s, err := sysinfo.ReadTaskStats(a.TID); err == nil {
			r.taskEnd.Store(&s) // the last procfs read: the thread's entry goes when it exits
		}
	})
	if err != nil {
		return nil, fmt.Errorf("reader %s: %w", r.spec.Name, err)
	}
	r.thread, r.applied = th, a
	r.openCounters(taskPerf)
	var degraded []string
	for _, d := range r.applied.Degraded {
		degraded = append(degraded, fmt.Sprintf("reader %s: %s", r.spec.Name, d))
	}
	if r.perCall != nil {
		for _, s := range r.perCall.Skipped() { // --allow-degraded: left out and marked
			degraded = append(degraded, fmt.Sprintf("reader %s: per-call counter left out: %s", r.spec.Name, s))
		}
	}
	return degraded, nil
}

// gatedRun says the thread is at its gate, waits there and runs the loop
// once the gate opens; it reports whether it ran. Past its prologue the
// thread meets no preemption point (the flag, the wait and the loop are
// nosplit; gatedRun itself is not, or the loop's nosplit chain would pass
// the linker's limit): the trial waits for every thread to be here
// (atGate) before it sets the window.
func (r *reader) gatedRun() bool {
	r.atGate.Store(true)
	if !r.gate.Wait() {
		return false
	}
	r.loop.Run()
	return true
}

// arm sets the reader's window w: its ticker from w.t0, its measured
// window and hard stop. Call it once the thread is at its gate and before
// the gate opens (the gate's atomic store publishes these fields).
func (r *reader) arm(w window) {
	r.loop.Ticker = newTicker(r.spec, w.t0)
	r.loop.MeasureFrom, r.loop.MeasureUntil = w.from, w.until
	r.loop.Rec.FromNs = w.from
	r.loop.HardStop = w.hardStop
}

// halt tells the loop to end at its next tick; wait waits for its thread.
func (r *reader) halt() { r.loop.Stop.Store(true) }

func (r *reader) wait() {
	if r.thread != nil {
		r.thread.Wait()
	}
}

// discardLog closes the wakeup log and removes its files (a trial that
// measured nothing leaves no empty logs).
func (r *reader) discardLog(dir *store.Dir) {
	for _, l := range r.wakeupLogs() {
		l.Close()
		for _, f := range l.Stats().Files {
			dir.Remove(f)
		}
	}
	r.log, r.vlogs = nil, nil
}

// closeLog closes the wakeup log, keeping the first log error.
func (r *reader) closeLog() {
	for _, l := range r.wakeupLogs() {
		if err := l.Close(); err != nil && r.logErr == nil {
			r.logErr = err
		}
	}
}

// close releases the reader's files and counters (the log is idempotent).
func (r *reader) close() {
	for _, l := range r.wakeupLogs() {
		l.Close()
	}
	for _, f := range r.traceFiles {
		f.Close()
	}
	if r.counters != nil {
		r.counters.Close()
	}
	r.closeProfiler()
}

// openCounters starts counting the reader thread's context switches, page
// faults, migrations and time on CPU: by default it reads their procfs
// values now (the baseline; nothing is attached to the thread), with perf
// the task-bound perf counters of Options.TaskPerfCounters (software
// events always, hardware ones where supported). What is skipped, and
// why, goes to the results.
func (r *reader) openCounters(perf bool) {
	if !perf {
		s, err := sysinfo.ReadTaskStats(r.applied.TID)
		if err != nil {
			r.countersSkipped = []string{"procfs: " + err.Error()}
			return
		}
		r.haveTask, r.taskBase, r.countersSource = true, s, CountersProcfs
		r.lastCtr = make([]uint64, len(taskCounters(sysinfo.TaskStats{HasMigrations: s.HasMigrations})))
		return
	}
	events := append(append([]rt.PerfEvent(nil), rt.PerfSoftware...), rt.PerfHardware...)
	c, err := probe.OpenCounters(r.applied.TID, events)
	if err != nil {
		r.countersSkipped = []string{err.Error()}
		return
	}
	r.counters, r.countersSkipped, r.countersSource = c, c.Skipped, CountersPerfEvent
	r.lastCtr, r.ctrBuf = make([]uint64, len(c.Names)), make([]uint64, len(c.Names))
}

// readCounters returns the counters' values now, since openCounters (nil
// when none opened or the read failed). It allocates only the slice it
// returns: procfs is read through the reader's ProcReader.
func (r *reader) readCounters() []results.Counter {
	if r.haveTask {
		end := r.taskEnd.Load()
		if end == nil {
			s, err := r.proc.TaskStats(r.applied.TID)
			if err != nil {
				return nil
			}
			end = &s
		}
		return taskCounters(end.Sub(r.taskBase))
	}
	if r.counters == nil || r.counters.Read(r.ctrBuf) != nil {
		return nil
	}
	out := make([]results.Counter, len(r.ctrBuf))
	for i, v := range r.ctrBuf {
		out[i] = results.Counter{Name: r.counters.Names[i], Value: v}
	}
	return out
}
