package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/noise"
	"github.com/rtload/rtload/pace"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/profile/sampler"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// Options control a run.
type Options struct {
	// AllowDegraded runs without a missing privilege (SCHED_OTHER instead of
	// FIFO, unpinned, memory unlocked) and marks results degraded.
	AllowDegraded bool
	// Unmet are the scenario's requirements this machine does not meet
	// (Requirements, as Unmet.String()), when --allow-degraded runs it
	// anyway: Run marks the summary degraded with one reason each,
	// "requirement not met: …".
	Unmet []string
	// OutDir is the results directory (must exist); per-wakeup logs go there.
	OutDir string
	// Results, when set, is OutDir already open (results.CreateDir): every
	// file goes through it. Otherwise Run opens OutDir with results.OpenDir.
	Results *results.Dir
	// Log receives one line per trial phase; nil discards.
	Log io.Writer
	// Progress, when set, is called about 5 times a second during a trial
	// with the trial index, the number of trials and the fraction done.
	Progress func(trial, trials int, frac float64)
	// NoWakeupLog skips the per-wakeup CSV files.
	NoWakeupLog bool
	// TaskPerfCounters attaches perf_event_open software counters
	// (context-switches, cpu-migrations, page-faults, task-clock) and
	// cycles/instructions where the PMU allows to each reader thread, as
	// before, instead of reading the same quantities from procfs. Task-bound
	// events run perf_event_task_sched_in on every switch onto the reader,
	// inside every wakeup latency (+4–6 µs at p50 measured, bench/GAPS.md):
	// results say so in counters_source.
	TaskPerfCounters bool
	// OnInterval, when set, receives every interval record (soak runs) on
	// the writer goroutine: keep it short.
	OnInterval func(results.Interval)
	// OnCheckpoint, when set, receives the summary so far (InProgress set)
	// after every finished trial but the last, and during a soak trial
	// about every 10 s with the trial as measured so far, so that
	// summary.json can be rewritten and finished trials survive a kill or
	// a failure. It may be called from the trial's writer goroutine.
	OnCheckpoint func(*results.Summary)
	// GCHeadroom is how far a soak run's heap may grow before its writer
	// collects garbage (bytes); 0 means SoakHeapHeadroom.
	GCHeadroom uint64
	// Exporter, when set, receives every interval (Prometheus endpoint);
	// Kernel labels its run_info.
	Exporter *exporter.Server
	Kernel   string
	// checkpoint wraps OnCheckpoint with the run's summary so far.
	checkpoint func(results.Trial)
	// AfterRound, when set, is called after every complete round (each
	// variant of it ran) with the summary so far, on Run's goroutine;
	// returning false ends the run there, as finished (rounds: auto, whose
	// rule lives in compare.AutoStop; it may fill Summary.Auto).
	AfterRound func(*results.Summary) bool
	// profiles holds the run's profiled trials' samples (profile.go).
	profiles *profileSet
	// Run-wide interval and spike logs, opened by the first trial needing them.
	intervals, spikes *results.JSONL
}

// SoakWakeupLogLimit caps a soak run's per-wakeup log (bytes on disk, per
// reader) unless the scenario sets log_limit (scenario.SoakLogLimit, its
// default for duration 0).
const SoakWakeupLogLimit = int64(scenario.SoakLogLimit)

// SoakHeapHeadroom is how far the heap may grow during a soak trial before
// a garbage collection runs (bytes).
const SoakHeapHeadroom uint64 = 256 << 20

// ErrStopped is returned (wrapped) when ctx ended the run early; the
// summary is complete for what ran.
var ErrStopped = errors.New("run stopped")

// Run executes trials in order and returns the summary of what ran. When
// ctx is cancelled it stops the current trial cleanly, marks the summary
// Stopped and returns it with an error wrapping ErrStopped. Kernel objects
// are closed on every path.
func Run(ctx context.Context, spec *scenario.Spec, trials []scenario.Trial, opt Options) (*results.Summary, error) {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if err := Preflight(trials, opt.AllowDegraded); err != nil {
		return nil, err
	}
	for _, tr := range trials {
		rep := tr.Spec.Report
		if err := results.CheckLayout(rep.BucketWidth, rep.BucketOrigin, rep.Overflow, -1); err != nil {
			return nil, fmt.Errorf("scenario report layout: %w", err)
		}
	}
	if opt.Results == nil && opt.OutDir != "" {
		d, err := results.OpenDir(opt.OutDir)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		opt.Results = d
	}
	defer func() {
		opt.intervals.Close()
		opt.spikes.Close()
	}()
	clock, err := rt.NewClock(spec.Clock.String())
	if err != nil {
		return nil, fmt.Errorf("clock: %w", err)
	}
	ci := clock.Info()
	profs, trials, profDegraded, err := newProfileSet(trials, ci.Hz, opt.AllowDegraded)
	if err != nil {
		return nil, err
	}
	opt.profiles = profs
	if opt.Exporter != nil {
		opt.Exporter.SetRunInfo(spec.Name, fmt.Sprintf("%s %.0f Hz", ci.Kind, ci.Hz), opt.Kernel)
	}
	sum := &results.Summary{Version: results.SummaryVersion, Scenario: spec.Name, File: spec.File, Start: time.Now(),
		Clock: results.ClockInfo{Kind: ci.Kind, Unit: ci.Unit(), Hz: ci.Hz, Invariant: ci.Invariant, Note: ci.Note, Fallbacks: ci.Fallbacks}}
	if profDegraded != "" {
		sum.Degraded, sum.DegradedReasons = true, []string{profDegraded}
	}
	for _, u := range opt.Unmet {
		sum.Degraded = true
		sum.DegradedReasons = appendUnique(sum.DegradedReasons, "requirement not met: "+u)
	}
	// Every locked thread of a trial (readers sleep in raw syscalls and keep
	// their P) gets a P of its own, so the Go scheduler never multiplexes
	// them: the kernel alone schedules our threads.
	need := runtime.NumCPU() + 4
	for _, tr := range trials {
		n := runtime.NumCPU() + 4 + len(tr.Spec.Readers) + len(tr.Spec.Traffic)
		for _, nz := range tr.Spec.Noise {
			n += nz.WorkerThreads() + 1 // + messaging's round runner (one spare otherwise)
		}
		// hackbench's workers block in read/write by the hundred: with a P
		// each, they never queue for the runtime's scheduler slots.
		for _, p := range tr.Spec.Probes {
			n++
			if p.Kind == scenario.ProbeMessaging {
				n += 2 * p.Groups * p.FDs
			}
		}
		need = max(need, n)
	}
	if runtime.GOMAXPROCS(0) < need {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(need))
	}
	// A private namespace serves the whole run; leftovers of dead runs are
	// swept first (a SIGKILLed run cannot clean up after itself).
	var ns *netns.NS
	for _, tr := range trials {
		if tr.Spec.Network.Namespace != scenario.NamespacePrivate {
			continue
		}
		if removed, err := netns.Sweep(); err != nil {
			fmt.Fprintf(opt.Log, "warning: sweeping leftover namespaces: %v\n", err)
		} else {
			for _, e := range removed {
				fmt.Fprintf(opt.Log, "removed namespace %s left by a dead run: %s\n", e.Name, e.Why)
			}
		}
		if ns, err = netns.New(netns.NewRunID()); err != nil {
			return nil, fmt.Errorf("private network namespace: %w", err)
		}
		defer ns.Close()
		fmt.Fprintf(opt.Log, "network namespace %s\n", ns.Name())
		break
	}
	if opt.OnCheckpoint != nil {
		// Called on a trial's writer goroutine; sum.Trials only grows
		// between trials, on this goroutine, so reading it here is safe.
		opt.checkpoint = func(t results.Trial) {
			s := *sum
			s.Trials = append(slices.Clone(sum.Trials), t)
			s.InProgress = true
			s.End = time.Now()
			opt.OnCheckpoint(&s)
		}
	}
	// finished checkpoints the trials done so far, before the next one.
	finished := func() {
		if opt.OnCheckpoint != nil {
			s := *sum
			s.Trials = slices.Clone(sum.Trials)
			s.InProgress, s.End = true, time.Now()
			opt.OnCheckpoint(&s)
		}
	}
	for i, tr := range trials {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(opt.Log, "trial %d/%d: variant %s, round %d\n", i+1, len(trials), tr.Variant, tr.Round+1)
		var tns *netns.NS
		if tr.Spec.Network.Namespace == scenario.NamespacePrivate {
			tns = ns
		}
		res, degraded, err := runTrial(ctx, tr, len(trials), clock, tns, &opt)
		switch {
		case res != nil && tr.Profiled:
			sum.ProfiledTrials = append(sum.ProfiledTrials, *res)
			if perr := profs.writeInto(sum, opt.Results); perr != nil && err == nil {
				err = perr
			}
		case res != nil:
			sum.Trials = append(sum.Trials, *res)
		}
		for _, d := range degraded {
			sum.Degraded = true
			sum.DegradedReasons = appendUnique(sum.DegradedReasons, d)
		}
		if err != nil {
			sum.End = time.Now()
			return sum, fmt.Errorf("trial %d (%s, round %d): %w", i+1, tr.Variant, tr.Round+1, err)
		}
		if opt.AfterRound != nil && ctx.Err() == nil && (i+1 == len(trials) || trials[i+1].Round != tr.Round) && !opt.AfterRound(sum) {
			break
		}
		if i < len(trials)-1 && ctx.Err() == nil {
			finished()
		}
	}
	sum.End = time.Now()
	if ctx.Err() != nil {
		now := time.Now()
		sum.Stopped, sum.StoppedAt = true, &now
		return sum, fmt.Errorf("%w: %v", ErrStopped, context.Cause(ctx))
	}
	return sum, nil
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

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
	// Per-wakeup log (chunked when the scenario sets log_chunk).
	log     *results.WakeupLog
	logBase string
	logErr  error
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
	// at the last interval.
	counters        *probe.Counters
	countersSkipped []string
	countersSource  string
	haveTask        bool
	taskBase        sysinfo.TaskStats
	taskEnd         atomic.Pointer[sysinfo.TaskStats]
	lastCtr, ctrBuf []uint64
	// Interrupts and softirqs on the reader's CPU, read by the writer:
	// irqFrom at its first poll in the measured window, irqUntil at its
	// first poll after it, irqLast at the last interval.
	irqFrom, irqUntil, irqLast sysinfo.IRQCounts
	// Writer state for interval deltas and spikes.
	lastCounts                          probe.Counts
	lastTicks, lastOverruns, lastSpikes uint64
	lastSent, lastNoise                 []uint64
	intervals                           int
	prevDrain                           int64
	spikesDropped                       uint64 // spikes the spikes.jsonl cap kept out
	traceFiles                          []*os.File
	// sampler samples the reader's call chains in a profiled trial.
	sampler *sampler.Sampler
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
// when none opened or the read failed).
func (r *reader) readCounters() []results.Counter {
	if r.haveTask {
		end := r.taskEnd.Load()
		if end == nil {
			s, err := sysinfo.ReadTaskStats(r.applied.TID)
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

// bucketLayout is the scenario's per-call bucket layout.
func bucketLayout(rep scenario.Report) record.Layout {
	return record.Layout{Width: rep.BucketWidth, Origin: rep.BucketOrigin, Overflow: rep.Overflow}
}

// sender is one traffic entry's paced sender.
type sender struct {
	spec      scenario.Traffic
	group     *udp.Group
	tx        Injector
	pacer     pace.Pacer
	lag       *record.HDR
	thread    *rt.Thread
	stop      chanFlag
	sent      uint64
	sentCount atomic.Uint64 // sent, readable by the writer while the sender runs
	errs      uint64
	err       error
	start     int64
	end       int64
	ended     int64
}

// chanFlag is a stop flag for non-real-time loops.
type chanFlag struct {
	mu   sync.Mutex
	done bool
}

func (f *chanFlag) set() { f.mu.Lock(); f.done = true; f.mu.Unlock() }
func (f *chanFlag) get() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}

// heapBytes reads the bytes of live and not yet swept heap objects without
// stopping the world (runtime/metrics).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// gcCycles reads the GC count without stopping the world (runtime/metrics).
func gcCycles() uint32 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return uint32(s[0].Value.Uint64())
}

func runTrial(ctx context.Context, tr scenario.Trial, ntrials int, clock *rt.Clock, ns *netns.NS, opt *Options) (res *results.Trial, degraded []string, err error) {
	sp := &tr.Spec // the trial's own copy
	res = &results.Trial{Index: tr.Index, Round: tr.Round, Variant: tr.Variant, Profiled: tr.Profiled, Overrides: variantSet(sp, tr.Variant)}

	// Kernel objects, closed on every path.
	groups := map[string]*udp.Group{}
	eps := map[string]*endpoint{}
	var senders []*sender
	var readers []*reader
	var probes []probeRunner
	var noises []*noise.Noise
	defer func() {
		for _, s := range senders {
			s.tx.Close()
		}
		for _, p := range probes {
			p.close()
		}
		for _, e := range eps {
			e.Close()
		}
		for _, r := range readers {
			if r.log != nil {
				r.log.Close()
			}
			for _, f := range r.traceFiles {
				f.Close()
			}
			if r.counters != nil {
				r.counters.Close()
			}
			r.closeProfiler()
		}
	}()
	if ns != nil {
		res.Namespace = ns.Name()
	}

	bufSize := 2048
	for _, t := range sp.Traffic {
		bufSize = max(bufSize, int(t.Size))
	}
	// Endpoints and senders are created on a thread inside the run's
	// namespace (when private): sockets and tap fds stay in it.
	txs := make([]Injector, len(sp.Traffic))
	build := func() error {
		dev := 0
		for _, e := range sp.Endpoints {
			ep, err := openEndpoint(e, ns, dev)
			if err != nil {
				return err
			}
			dev += len(ep.devices)
			eps[e.Name] = ep
			groups[e.Name] = ep.group
		}
		for i, t := range sp.Traffic {
			tx, err := newInjector(eps[t.Endpoint], int(t.Size))
			if err != nil {
				return fmt.Errorf("traffic to %s: %w", t.Endpoint, err)
			}
			txs[i] = tx
		}
		for _, ps := range sp.Probes {
			p, err := newProbe(ps, eps, clock, sp.Report)
			if err != nil {
				return fmt.Errorf("probe %s: %w", ps.Name, err)
			}
			probes = append(probes, p)
		}
		return nil
	}
	var berr error
	if ns != nil {
		berr = ns.Do(build)
	} else {
		berr = build()
	}
	for i, tx := range txs {
		if tx != nil {
			senders = append(senders, &sender{spec: sp.Traffic[i], group: groups[sp.Traffic[i].Endpoint], tx: tx})
		}
	}
	if berr != nil {
		return res, nil, berr
	}
	for _, s := range senders {
		t, g := s.spec, s.group
		interval := time.Duration(t.Interval)
		if interval <= 0 && t.Rate > 0 {
			interval = time.Duration(float64(time.Second) / t.Rate)
		}
		var p pace.Pacer
		switch t.Spread {
		case scenario.SpreadBurst:
			p = pace.Burst{Count: len(g.FDs()), Interval: interval}
		case scenario.SpreadPoisson:
			p = pace.NewPoisson(len(g.FDs()), interval, uint64(tr.Index)+1)
		default:
			p = pace.Even{Count: len(g.FDs()), Interval: interval}
		}
		s.pacer, s.lag = p, record.NewHDR(int64(10*time.Second))
	}
	rep := sp.Report
	for i, rs := range sp.Readers {
		var fds []int
		var gs []*udp.Group
		for _, name := range rs.Endpoints {
			fds = append(fds, groups[name].FDs()...)
			gs = append(gs, groups[name])
		}
		rx, err := udp.NewReceiver(rs.Method.String(), bufSize, rs.Batch)
		if err != nil {
			return res, nil, fmt.Errorf("reader %s: %w", rs.Name, err)
		}
		// Per-call counters (readers[].counters): opened by the drain on the
		// reader's own thread below, recorded per call class in every set.
		var ctr *rt.Counters
		if len(rs.Counters) > 0 {
			if ctr, err = rt.NewCounters(rt.CountersConfig{Events: rs.Counters, AllowDegraded: opt.AllowDegraded}); err != nil {
				return res, nil, fmt.Errorf("reader %s: %w", rs.Name, err)
			}
		}
		newRecorders := func() *probe.Recorders {
			rec := probe.NewRecorders(bucketLayout(rep))
			rec.Set.AddEvents(rs.Counters)
			return rec
		}
		cur := newRecorders()
		clk := clock.ForThread() // cycles: bound on the reader's own thread below
		d := probe.NewDrain(probe.DrainConfig{FDs: fds, Receiver: rx, Clock: clk, Set: cur.Set, Counters: ctr})
		r := &reader{spec: rs, drain: d, clock: clk, perCall: ctr, groups: gs, total: newRecorders().Set, intervalNs: int64(sp.Interval),
			loop: &probe.Loop{Probe: d, Drain: d, Rec: cur, Interval: int64(sp.Interval),
				Wakeups: record.NewRing[record.Wakeup](1 << 14), Threshold: int64(rs.Threshold)}}
		if sp.Interval > 0 {
			r.handoff = probe.NewHandoff(newRecorders())
			r.loop.Handoff = r.handoff
		}
		if rs.BreakTrace {
			if err := r.openTrace(i); err != nil {
				fmt.Fprintf(opt.Log, "warning: reader %s: breaktrace: %v\n", rs.Name, err)
			}
		}
		if !opt.NoWakeupLog && opt.Results != nil && !tr.Profiled {
			r.logBase = results.WakeupLogBase(tr.Index, tr.Variant, tr.Round, rs.Name)
			r.log, err = results.CreateWakeupLog(results.WakeupLogConfig{Dir: opt.Results, Base: r.logBase,
				ChunkBytes: int64(sp.LogChunk), LimitBytes: int64(sp.LogLimit), Compress: sp.LogChunk > 0})
			if err != nil {
				return res, nil, err
			}
		}
		readers = append(readers, r)
	}

	// Keep CPUs out of deep idle states, as cyclictest does.
	res.CPUDMALatencyUs = -1
	if sp.CPUDMALatency >= 0 {
		f, err := rt.HoldCPUDMALatency(int32(sp.CPUDMALatency))
		switch {
		case err == nil:
			defer f.Close()
			res.CPUDMALatencyUs = sp.CPUDMALatency
		case errors.Is(err, rt.ErrNoPrivilege) && opt.AllowDegraded:
			degraded = append(degraded, err.Error())
		default:
			return nil, degraded, err
		}
	}

	// Quiet the runtime for the measured window: collect now, then no GC
	// until the trial ends (GC count before/after goes in the results).
	// A run with intervals (soak) keeps GC on instead: over hours the
	// writer's small allocations would otherwise grow the heap without
	// bound. GC cannot stop a reader inside a timed call (the measured path
	// has no preemption point), and its cycles are counted per interval.
	runtime.GC()
	oldGC := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(oldGC)
	// A soak run allocates a little per interval (records, logs): its
	// writer collects garbage itself once the heap has grown by
	// SoakHeapHeadroom (hours apart at rtload's rate), first asking the
	// readers to pass their SafePoint (Loop.Yield), since nothing else can
	// stop them. No automatic GC can start behind their back.
	yield := &atomic.Bool{}
	heapBase := heapBytes()
	res.GCBefore = gcCycles()

	for _, nz := range sp.Noise {
		cfg := noise.Config{Kind: nz.Kind.String(), Threads: max(nz.Threads, 1), CPUs: nz.CPUs, Policy: schedPolicy(nz.Policy), Priority: nz.Priority, Nice: nz.Nice,
			On: time.Duration(nz.Duty.On), Off: time.Duration(nz.Duty.Off), AllowRT: sp.AllowRTNoise, AllowDegraded: opt.AllowDegraded,
			Size: int(nz.Size), Rate: nz.Rate, Syscall: nz.Syscall.String(), Dir: nz.Dir, Blocks: nz.Blocks, Groups: nz.Groups, FDs: nz.FDs, Loops: nz.Loops}
		for _, w := range noise.Warnings(cfg) {
			fmt.Fprintf(opt.Log, "warning: noise %s: %s\n", nz.Kind, w)
		}
		src, err := noise.New(cfg)
		if err != nil {
			stopNoise(noises)
			return res, degraded, fmt.Errorf("noise %s: %w", nz.Kind, err)
		}
		if err := src.Start(); err != nil {
			stopNoise(noises)
			return res, degraded, fmt.Errorf("noise %s: %w", nz.Kind, err)
		}
		noises = append(noises, src)
	}

	period0 := int64(10 * time.Millisecond)
	if len(sp.Readers) > 0 {
		period0 = int64(sp.Readers[0].Period)
	}
	t0 := rt.Monotonic() + int64(200*time.Millisecond)
	measureFrom := t0 + int64(sp.Warmup)
	measureUntil := measureFrom + int64(sp.Duration)
	forever := sp.Duration == 0
	if forever {
		measureUntil = math.MaxInt64 / 4 // a soak: until stopped
	}

	// Real-time readers.
	var startErr error
	for _, r := range readers {
		r.loop.Ticker = rt.NewTicker(t0, int64(r.spec.Period), r.spec.Overrun == scenario.OverrunCatchUp)
		r.loop.MeasureFrom, r.loop.MeasureUntil = measureFrom, measureUntil
		r.loop.Yield = yield
		r.loop.Rec.FromNs = measureFrom
		r.loop.HardStop = measureUntil + int64(5*time.Second)
		loop, r := r.loop, r
		applied := &r.applied
		ready := make(chan struct{})
		var bindErr error
		th, err := rt.Start(rt.Sched{CPUs: []int{int(r.spec.CPU)}, Policy: schedPolicy(r.spec.Policy), Priority: r.spec.Priority,
			Mlock: true, AllowDegraded: opt.AllowDegraded}, func(a rt.Applied) {
			*applied = a
			bindErr = r.clock.Bind() // the thread's own cycle counter, now that it is pinned
			if bindErr == nil {
				bindErr = r.drain.OpenCounters() // per-call counters, after the clock: the thread's own too
			}
			close(ready)
			if bindErr != nil {
				r.clock.Close()
				return
			}
			loop.Run()
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
			startErr = fmt.Errorf("reader %s: %w", r.spec.Name, err)
			break
		}
		<-ready
		r.thread = th
		if bindErr != nil {
			startErr = fmt.Errorf("reader %s: %w", r.spec.Name, bindErr)
			break
		}
		r.openCounters(opt.TaskPerfCounters)
		if tr.Profiled {
			if err := r.startProfiler(opt.profiles, sp.Profile.Frequency, measureFrom, measureUntil); err != nil {
				startErr = fmt.Errorf("reader %s: %w", r.spec.Name, err)
				break
			}
		}
		for _, d := range r.applied.Degraded {
			degraded = append(degraded, fmt.Sprintf("reader %s: %s", r.spec.Name, d))
		}
		if r.perCall != nil {
			for _, s := range r.perCall.Skipped() { // --allow-degraded: left out and marked
				degraded = append(degraded, fmt.Sprintf("reader %s: per-call counter left out: %s", r.spec.Name, s))
			}
		}
	}
	// Senders run from t0 to the end of the measured window.
	if startErr == nil {
		for _, s := range senders {
			s.start, s.end = t0, measureUntil
			sched := rt.Sched{Policy: rt.Other, TimerSlackNs: 1, AllowDegraded: true}
			if s.spec.CPU != nil {
				sched.CPUs = []int{*s.spec.CPU}
			}
			th, err := rt.Start(sched, s.run)
			if err != nil {
				startErr = fmt.Errorf("sender to %s: %w", s.spec.Endpoint, err)
				break
			}
			s.thread = th
		}
	}

	// Probes (tap_send) on their own threads.
	if startErr == nil && len(probes) > 0 {
		var h *netlink.Handle
		if ns != nil {
			if h, err = ns.Handle(); err != nil {
				startErr = fmt.Errorf("netlink handle in %s: %w", ns.Name(), err)
			} else {
				defer h.Close()
			}
		}
		for _, p := range probes {
			if startErr != nil {
				break
			}
			d, err := p.start(h, opt.AllowDegraded)
			if err != nil {
				startErr = err
				break
			}
			degraded = append(degraded, d...)
		}
	}
	probesDone := func() bool {
		for _, p := range probes {
			if !p.finished() {
				return false
			}
		}
		return true
	}

	// Writer: streams per-wakeup records to disk off the real-time
	// threads, merges interval handoffs, writes intervals and spikes.
	w := &trialWriter{trial: tr.Index, variant: tr.Variant, round: tr.Round, readers: readers, senders: senders,
		onIv: opt.OnInterval, onCheckpoint: opt.checkpoint, base: *res, scenario: sp.Name, exporter: opt.Exporter}
	if opt.Exporter != nil {
		opt.Exporter.SetTrial(tr.Index)
	}
	if tr.Profiled { // measured under the sampler: no interval records, live lines or checkpoints
		w.onIv, w.onCheckpoint, w.exporter = nil, nil, nil
	}
	if sp.Interval > 0 {
		w.yield, w.heapBase, w.headroom = yield, heapBase, opt.GCHeadroom
		if w.headroom == 0 {
			w.headroom = SoakHeapHeadroom
		}
	}
	for _, n := range noises {
		w.noises = append(w.noises, noiseView{n})
	}
	if opt.Results != nil && sp.Interval > 0 && !tr.Profiled {
		if opt.intervals == nil {
			if opt.intervals, err = opt.Results.CreateJSONL(results.IntervalsFile, 0); err != nil {
				startErr = err
			}
		}
		w.intervals = opt.intervals
	}
	if opt.Results != nil && hasThreshold(sp) && !tr.Profiled {
		if opt.spikes == nil {
			if opt.spikes, err = opt.Results.CreateJSONL(results.SpikesFile, results.SpikesLimit); err != nil {
				startErr = err
			}
		}
		w.spikes = opt.spikes
	}
	w.failed = make(chan struct{})
	writerDone := make(chan struct{})
	writerStop := make(chan struct{})
	go func() {
		defer close(writerDone)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				w.poll()
			case <-writerStop:
				return
			}
		}
	}()

	stopped := false
	if startErr == nil {
		progress := time.NewTicker(200 * time.Millisecond)
	wait:
		for {
			now := rt.Monotonic()
			if now >= measureUntil && probesDone() {
				break
			}
			if opt.Progress != nil && !forever {
				opt.Progress(tr.Index, ntrials, math.Max(0, float64(now-t0))/float64(measureUntil-t0))
			}
			select {
			case <-ctx.Done():
				stopped = true
				break wait
			case <-w.failed:
				// A results file cannot be written (a full disk): end
				// the trial now; its error says why.
				stopped = true
				break wait
			case <-progress.C:
			}
		}
		progress.Stop()
		if opt.Progress != nil && !stopped {
			opt.Progress(tr.Index, ntrials, 1)
		}
	}
	// Stop senders, let in-flight messages land, then stop readers: their
	// tail ticks read what was in flight at the end of the window.
	for _, p := range probes {
		if stopped {
			p.stop() // file_write and messaging end early; a tap sweep is bounded
		}
		p.wait()
		res.Probes = append(res.Probes, p.result())
	}
	for _, s := range senders {
		s.stop.set()
	}
	for _, s := range senders {
		if s.thread != nil {
			s.thread.Wait()
		}
	}
	time.Sleep(3 * time.Duration(period0))
	for _, r := range readers {
		r.loop.Stop.Store(true)
	}
	for _, r := range readers {
		if r.thread != nil {
			r.thread.Wait()
		}
		if why := r.clockStatus.Reason; why != "" { // TODO(issue 15): a results field marking the trial
			fmt.Fprintf(opt.Log, "warning: reader %s: per-call %s\n", r.spec.Name, why)
		}
		for _, st := range r.perCallStatus {
			if st.Reason != "" { // counted only part of the calls: the trial is marked
				degraded = append(degraded, fmt.Sprintf("reader %s: per-call counter %s: %s", r.spec.Name, st.Event, st.Reason))
			}
		}
	}
	close(writerStop)
	<-writerDone
	w.finish() // the readers are done: the last, partial interval
	if w.intervals != nil {
		w.intervals.Sync()
	}
	if w.spikes != nil {
		w.spikes.Sync()
	}
	res.GCAfter = gcCycles()
	res.GCDuring = res.GCAfter - res.GCBefore
	for _, nz := range noises {
		wk, _ := nz.Stop()
		res.Noise = append(res.Noise, results.Noise{Unit: wk.Unit, Count: wk.Count, Seconds: float64(wk.Elapsed) / 1e9,
			PerSec: wk.PerSec(), Duty: nz.DutyObserved()})
	}
	for i, nz := range sp.Noise {
		if i < len(res.Noise) {
			res.Noise[i].Kind, res.Noise[i].Threads = nz.Kind.String(), nz.WorkerThreads()
		}
	}
	if r := rt.Munlockall(); r != nil {
		fmt.Fprintf(opt.Log, "warning: %v\n", r)
	}
	res.DurationNs = int64(sp.Duration)
	if stopped {
		res.DurationNs = max(0, rt.Monotonic()-measureFrom)
	}
	if startErr != nil {
		// Nothing was measured: leave no partial trial and no empty logs.
		for _, r := range readers {
			if r.log != nil {
				r.log.Close()
				for _, f := range r.log.Stats().Files {
					opt.Results.Remove(f)
				}
				r.log = nil
			}
		}
		return nil, degraded, startErr
	}
	for _, r := range readers {
		if r.log != nil {
			if err := r.log.Close(); err != nil && r.logErr == nil {
				r.logErr = err
			}
		}
	}
	collect(res, sp, senders, readers)
	if tr.Profiled {
		opt.profiles.add(res, readers) // the readers and the writer have ended
	}
	for _, r := range readers {
		if r.loop.Errno != 0 {
			return res, degraded, fmt.Errorf("reader %s: clock_nanosleep: %w", r.spec.Name, unix.Errno(r.loop.Errno))
		}
		if r.logErr != nil {
			return res, degraded, r.logErr // results names the log
		}
	}
	if w.err != nil {
		return res, degraded, fmt.Errorf("interval or spike log: %w", w.err)
	}
	return res, degraded, nil
}

func stopNoise(ns []*noise.Noise) {
	for _, n := range ns {
		n.Stop()
	}
}

func hasThreshold(sp *scenario.Spec) bool {
	for _, r := range sp.Readers {
		if r.Threshold > 0 {
			return true
		}
	}
	return false
}

// run is the sender thread: event n is due at start + pacer.Next(n) and goes
// to socket n % count; every event due now goes out in one sendmmsg batch;
// between batches the thread sleeps to the next due time (timer slack 1 ns).
func (s *sender) run(rt.Applied) {
	count := uint64(len(s.group.FDs()))
	dst := make([]int, 0, 64)
	var n uint64
	for {
		if s.stop.get() {
			break
		}
		now := rt.Monotonic()
		if now >= s.end {
			break
		}
		due := s.start + int64(s.pacer.Next(n))
		if due > now {
			wake := min(due, s.end, now+int64(10*time.Millisecond))
			rt.SleepUntil(wake)
			continue
		}
		dst = dst[:0]
		for len(dst) < cap(dst) {
			due := s.start + int64(s.pacer.Next(n))
			if due > now || due >= s.end {
				break
			}
			dst = append(dst, int(n%count))
			s.lag.RecordSigned(now - due)
			n++
		}
		sent, err := s.tx.Send(dst, rt.Monotonic())
		s.sent += uint64(sent)
		s.sentCount.Store(s.sent)
		if err != nil {
			s.errs++
			s.err = err
			// Skip the failed messages: their sequence numbers were not used.
		}
	}
	s.ended = rt.Monotonic()
}

func variantSet(sp *scenario.Spec, name string) map[string]string {
	for _, v := range sp.Variants {
		if v.Name == name {
			return v.Set
		}
	}
	return nil
}
