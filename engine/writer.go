package engine

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/noise"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// trialWriter is the non-real-time side of a trial: every 50 ms it drains
// the readers' wakeup rings into their logs (and spikes.jsonl), takes the
// Recorders the readers handed over at interval ends, merges them into the
// trial totals, and emits interval records. It is the only goroutine that
// touches the totals while the trial runs.
type trialWriter struct {
	trial   int
	variant string
	round   int
	// members are an interleaved trial's variants (nil: alone).
	members   []scenario.Trial
	readers   []*reader
	senders   []*sender
	noises    []noiseSource
	intervals *safeio.JSONL
	spikes    *safeio.JSONL
	onIv      func(results.Interval)
	// onCheckpoint receives the trial so far after intervals (soak), so
	// summary.json survives a SIGKILL; base carries the trial's identity.
	onCheckpoint func(results.Trial) error
	base         results.Trial
	scenario     string
	// yield and heapBase drive the soak run's own garbage collection.
	yield    *probe.Flag
	heapBase uint64
	headroom uint64
	// Collections counts the collections the writer ran.
	Collections    int
	lastCheckpoint time.Time
	exporter       *exporter.Server
	// err is the first interval or spike log or checkpoint error; failed is closed at
	// the first write error of any results file (fail), which ends the
	// trial: a soak on a full disk stops instead of running on.
	err        error
	failed     chan struct{}
	failedOnce sync.Once
	// quit ends the polling goroutine; done is closed when it has ended.
	quit, done chan struct{}
	// proc and stats read /proc and the runtime's metrics into buffers
	// they keep; spikeNoise, ivRec and spikeRec are reused for each record
	// encoded (JSONL.Write encodes before it returns). A soak
	// samples them every interval for hours, with GC off (issue 12).
	proc       *sysinfo.ProcReader
	stats      *runtimeStats
	spikeNoise []results.NoiseInterval
	ivRec      results.Interval // the record being encoded
	spikeRec   results.Spike
	// log is Options.Log: the writer says there when breaktrace stopped
	// tracing.
	log io.Writer
	// kernel is the trial's kernel watch: each interval record carries
	// its clocksource and, once the trial is invalid, why.
	kernel *sysinfo.KernelWatch
	// self marks interval records rtload's own process disturbed (its GC,
	// its RSS, its metrics endpoint; selfmark.go); nil without intervals.
	self *selfWatch
}

// writerPoll is how often the writer drains the readers' rings and takes
// their handed-over sets.
const writerPoll = 50 * time.Millisecond

// newTrialWriter is the writer of trial t, whose readers, senders and
// noise are built: it opens the run's interval log (soak runs) and spike
// log (a reader with a threshold) on first use (a profiled trial writes
// neither, nor interval records, live lines or checkpoints), and for a soak collects
// garbage itself once the heap grew by Options.GCHeadroom.
func newTrialWriter(t *trial) (*trialWriter, error) {
	opt := &t.run.opt
	w := &trialWriter{trial: t.tr.Index, variant: t.tr.Variant, round: t.tr.Round, members: t.members, readers: t.readers, senders: t.senders,
		onIv: opt.OnInterval, onCheckpoint: t.run.checkpointer(), base: *t.res, scenario: t.sp.Name, exporter: opt.Exporter,
		failed: make(chan struct{}), proc: sysinfo.NewProcReader(), stats: newRuntimeStats(), log: opt.Log, kernel: t.kw}
	if w.log == nil {
		w.log = io.Discard
	}
	if opt.Exporter != nil {
		opt.Exporter.SetTrial(t.tr.Index)
	}
	if t.tr.Profiled { // measured under the sampler: no interval records, live lines or checkpoints
		w.onIv, w.onCheckpoint, w.exporter = nil, nil, nil
	}
	if t.sp.Interval > 0 {
		w.yield, w.heapBase, w.headroom = t.yield, t.heapBase, soakHeadroom(opt.GCHeadroom)
	}
	for _, n := range t.noises {
		w.noises = append(w.noises, noiseView{n})
	}
	var err error
	if t.sp.Interval > 0 && !t.tr.Profiled {
		if w.intervals, err = t.run.intervalLog(); err != nil {
			return nil, err
		}
		w.self = newSelfWatch(w, t.run, t.res.GCBefore)
	}
	if hasThreshold(t.sp) && !t.tr.Profiled {
		if w.spikes, err = t.run.spikeLog(); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// soakHeadroom is the heap growth (bytes) after which a soak's writer
// collects garbage: headroom, or SoakHeapHeadroom for 0.
func soakHeadroom(headroom uint64) uint64 {
	if headroom == 0 {
		return SoakHeapHeadroom
	}
	return headroom
}

// writerSched is the writer's thread: named rt.WriterName so that ps,
// perf and ftrace tell it apart, and not exempt from housekeeping (it is
// rtload's machinery), at SCHED_OTHER nice 0 (when the process runs at a
// nice it may not leave, without CAP_SYS_NICE, it stays at that one).
var writerSched = rt.Sched{Name: rt.WriterName, AllowDegraded: true}

// start runs the writer's polling loop (every writerPoll) until stop, on
// a locked OS thread of its own (writerSched).
func (w *trialWriter) start() error {
	w.quit, w.done = make(chan struct{}), make(chan struct{})
	_, _, err := rt.Start(writerSched, nil, func(rt.Applied) {
		defer close(w.done)
		tick := time.NewTicker(writerPoll)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				w.poll()
			case <-w.quit:
				return
			}
		}
	})
	if err != nil {
		w.quit = nil // nothing to stop
		return fmt.Errorf("writer thread: %w", err)
	}
	return nil
}

// stop ends the polling goroutine and, the readers being done, writes what
// is left (finish) and syncs the interval and spike logs.
func (w *trialWriter) stop() {
	if w.quit == nil {
		return
	}
	close(w.quit)
	<-w.done
	w.quit = nil
	w.finish()
	if w.intervals != nil {
		w.intervals.Sync()
	}
	if w.spikes != nil {
		w.spikes.Sync()
	}
}

// fail records that a results file could not be written.
func (w *trialWriter) fail(err error) {
	if err == nil {
		return
	}
	if w.err == nil {
		w.err = err
	}
	if w.failed != nil {
		w.failedOnce.Do(func() { close(w.failed) })
	}
}

// export feeds one interval to the Prometheus endpoint: counters as deltas,
// the interval's wakeup latency and per-call cost distributions as buckets.
func (w *trialWriter) export(r *reader, set *probe.Recorders, iv results.Interval) {
	x := exporter.Interval{Scenario: w.scenario, Variant: w.variant, Round: w.round, Reader: r.spec.Name,
		Wakeups: iv.Wakeups, Overruns: iv.Overruns, MissedTicks: iv.MissedTicks, BacklogSkips: iv.BacklogSkips,
		DataCalls: iv.Data, EAGAINCalls: iv.EAGAIN,
		Received: iv.Messages, Sent: iv.Sent, Lost: iv.Lost, IntervalMaxWakeupNs: iv.WakeupLatency.MaxNs,
	}
	set.Set.HDR(record.WakeupLatency).Buckets(func(lo, width, count uint64) {
		x.WakeupLatencyNs = append(x.WakeupLatencyNs, exporter.BucketCount{UpperBound: float64(lo + width - 1), Count: count})
	})
	x.WakeupLatencySumNs = iv.WakeupLatency.MeanNs * float64(iv.WakeupLatency.Count)
	snap := set.Set.Snapshot(record.CallAll, "")
	x.CallCostTicks, x.CallCostLayout = exporter.LinearBuckets(snap)
	x.CallCostSumTicks = float64(snap.Sum)
	for _, n := range iv.Noise {
		x.Noise = append(x.Noise, exporter.NoiseWork{Kind: n.Kind, Unit: n.Unit, Count: n.Count})
	}
	w.exporter.Update(x)
}

// noiseSource is what the writer reads of a running noise source.
type noiseSource interface {
	Kind() string
	Unit() string
	Count() uint64
	State() string
}

// runtimeStats reads the runtime's heap size and GC count without
// stopping the world (runtime/metrics) into samples it keeps: metrics.Read
// then allocates nothing (a fresh []metrics.Sample escapes to the heap, and
// the writer reads the heap every poll).
type runtimeStats struct{ samples []metrics.Sample }

func newRuntimeStats() *runtimeStats {
	return &runtimeStats{samples: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}}
}

// heapBytes is the bytes of live and not yet swept heap objects.
func (s *runtimeStats) heapBytes() uint64 { return s.read(0) }

// gcCycles is the number of GC cycles completed.
func (s *runtimeStats) gcCycles() uint32 { return uint32(s.read(1)) }

func (s *runtimeStats) read(i int) uint64 {
	metrics.Read(s.samples[i : i+1])
	if s.samples[i].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.samples[i].Value.Uint64()
}

// heapBytes and gcCycles read once, for the trial's edges.
func heapBytes() uint64 { return newRuntimeStats().heapBytes() }
func gcCycles() uint32  { return newRuntimeStats().gcCycles() }

// collect runs a garbage collection when a soak run's heap has grown by
// SoakHeapHeadroom: it first makes every reader pass its SafePoint (the only
// place the runtime can stop them), then collects, then lets them go.
func (w *trialWriter) collect() {
	if w.yield == nil || w.stats.heapBytes() < w.heapBase+w.headroom {
		return
	}
	w.yield.Store(true)
	runtime.GC()
	w.yield.Store(false)
	w.heapBase = w.stats.heapBytes()
	w.Collections++
}

// poll drains rings and handoffs once.
func (w *trialWriter) poll() {
	w.collect()
	handed := false
	now := rt.Monotonic()
	for _, r := range w.readers {
		w.sampleIRQs(r, now)
		w.drainRing(r)
		w.watchMachine(r, now)
		r.drainProfiler()
		if r.handoff != nil {
			if set := r.handoff.Take(); set != nil {
				w.handover(r, set)
				handed = true
			}
		}
	}
	if handed {
		w.maybeCheckpoint(time.Now())
	}
}

// handover is the writer's work on a set r's thread handed over at an
// interval end: the interval record, then the set reset and given back as
// the next spare.
func (w *trialWriter) handover(r *reader, set *probe.Recorders) {
	w.interval(r, set)
	set.Set.Reset()
	r.handoff.Give(set)
}

// checkpointEvery is how often a soak's writer checkpoints the trial so
// far: a SIGKILL loses little, and it stays cheap for hours-long runs.
const checkpointEvery = 10 * time.Second

// maybeCheckpoint hands the trial so far to onCheckpoint when the last
// checkpoint is checkpointEvery old at now. A checkpoint that cannot be
// written ends the trial (fail), as any results file does: a soak whose
// summary.json cannot be rewritten does not run on.
func (w *trialWriter) maybeCheckpoint(now time.Time) {
	if w.onCheckpoint != nil && now.Sub(w.lastCheckpoint) >= checkpointEvery {
		w.lastCheckpoint = now
		w.fail(w.onCheckpoint(w.checkpoint()))
	}
}

// checkpoint is the trial so far, built only from what the writer owns
// (the merged totals and the counters handed over with them) and from
// atomics: never from state the real-time threads are writing.
func (w *trialWriter) checkpoint() results.Trial {
	t := w.base
	t.Readers, t.Traffic = nil, nil
	if w.kernel != nil {
		if why := w.kernel.Report().Invalid(); why != "" {
			t.Marks = append(slices.Clone(t.Marks), results.Mark{Kind: results.MarkInvalid, Text: why})
		}
	}
	for _, s := range w.senders {
		t.Traffic = append(t.Traffic, results.Traffic{Endpoint: s.spec.Endpoint, Sockets: len(s.group.FDs()), Sent: s.sentCount.Load()})
	}
	for _, r := range w.readers {
		c := r.lastCounts
		rr := results.Reader{Name: r.spec.Name, Method: r.spec.Method.String(), Sockets: len(r.drain.FDs()), Endpoint: strings.Join(r.spec.Endpoints, ","),
			Applied: r.applied, Calls: c.Calls, Data: c.Data, EAGAIN: c.EAGAIN, Errors: c.Errors,
			Messages: c.Messages, Bytes: c.Bytes, Lost: c.Lost, Reordered: c.Reordered, Duplicates: c.Duplicates,
			Wakeups: r.lastTicks, Overruns: r.lastOverruns, MissedTicks: r.lastMissed, BacklogSkips: r.lastBacklogSkips,
			OverrunMode: overrunMode(r.spec), MaxBacklog: r.spec.MaxBacklog, Intervals: r.intervals, Counters: r.readCounters(), CountersSkipped: r.countersSkipped,
			Seccomp: r.seccomp}
		setHistograms(&rr, r.total, "ticks", false) // no HDR encodings in checkpoints: they must stay cheap
		if r.log != nil {
			st := r.log.Stats()
			rr.WakeupLog = st.Files
			rr.WakeupLogRows, rr.WakeupLogDropped, rr.WakeupLogLimit = st.Rows, st.RowsDropped, r.log.Limit()
		}
		t.Readers = append(t.Readers, rr)
	}
	return t
}

// finish runs after every reader thread ended: the last ring records, any
// set still handed over, then the set each reader was recording into (the
// last, partial interval).
func (w *trialWriter) finish() {
	w.poll()
	for _, r := range w.readers {
		if r.il != nil {
			continue // interleaved: each variant's set is whole (no intervals); split reads them
		}
		w.interval(r, r.loop.Final())
	}
}

// sampleIRQs reads the reader CPU's interrupt counts at the window's edges
// (to within one poll, 50 ms): irqFrom at the first poll in the window
// (irqLast starts as a copy, the first interval's base), irqUntil at the
// first poll after it.
func (w *trialWriter) sampleIRQs(r *reader, now int64) {
	if r.loop.MeasureFrom == 0 || now < r.loop.MeasureFrom {
		return
	}
	if r.irqFrom == nil {
		m := sysinfo.IRQCounts{}
		if err := w.proc.IRQCounts(r.cpu(), m); err == nil {
			r.irqFrom, r.irqLast, r.irqCur = m, maps.Clone(m), sysinfo.IRQCounts{}
		}
		return
	}
	if r.irqUntil == nil && now >= r.loop.MeasureUntil {
		m := sysinfo.IRQCounts{}
		if err := w.proc.IRQCounts(r.cpu(), m); err == nil {
			r.irqUntil = m
		}
	}
}

// watchMachine polls r's CPU for its machine watch while now is in the
// measured window (one poll after it, so that its last wakeups' window
// closes), with the latest wakeup drained since the last poll.
func (w *trialWriter) watchMachine(r *reader, now int64) {
	latest := r.pollLatest
	r.pollLatest = 0
	if r.loop.MeasureFrom == 0 || now < r.loop.MeasureFrom {
		return
	}
	if r.machine == nil {
		r.machine = newMachineWatch(r.cpu())
	}
	if r.loop.MeasureUntil > 0 && now > r.loop.MeasureUntil+int64(writerPoll) {
		return
	}
	r.machine.poll(w.proc, now, latest)
}

// cpuInterrupts is the reader CPU's interrupts over the measured window
// (nil when not sampled).
func (r *reader) cpuInterrupts() *results.CPUInterrupts {
	if r.irqFrom == nil {
		return nil
	}
	end := r.irqUntil
	if end == nil {
		var err error
		if end, err = sysinfo.ReadIRQCounts(r.cpu()); err != nil {
			return nil
		}
	}
	return cpuInterrupts(r.cpu(), end, r.irqFrom)
}

// cpuInterrupts is cpu's interrupts from prev to now, largest source first.
func cpuInterrupts(cpu int, now, prev sysinfo.IRQCounts) *results.CPUInterrupts {
	src, irqs, soft := now.Delta(prev)
	out := &results.CPUInterrupts{CPU: cpu, IRQs: irqs, SoftIRQs: soft, Sources: make([]results.Counter, len(src))}
	for i, c := range src {
		out.Sources[i] = results.Counter{Name: c.Name, Value: c.Count}
	}
	return out
}

// drainRing writes every wakeup record r's thread put in its ring since
// the last poll to its wakeup log, and each one above the threshold to
// spikes.jsonl.
func (w *trialWriter) drainRing(r *reader) {
	r.loop.Wakeups.Drain(func(wk *record.Wakeup) {
		r.pollLatest = max(r.pollLatest, wk.LatencyNs)
		lg, trial, variant := r.log, w.trial, w.variant
		if r.il != nil { // interleaved: the log and names of the variant that ran the tick
			m := r.variantAt(wk.DeadlineNs)
			trial, variant = w.members[m].Index, w.members[m].Variant
			lg = nil
			if m < len(r.vlogs) {
				lg = r.vlogs[m]
			}
		}
		if lg != nil && r.logErr == nil {
			if r.logErr = lg.Write(wk); r.logErr != nil {
				w.fail(r.logErr) // it names the log
			}
		}
		if r.spec.Threshold > 0 && wk.LatencyNs > int64(r.spec.Threshold) && w.spikes != nil {
			w.spikeNoise = w.noiseStates(w.spikeNoise[:0]) // encoded by Write below, then reused
			w.spikeRec = results.Spike{Time: time.Now(), Trial: trial, Variant: variant, Reader: r.spec.Name,
				Tick: wk.Tick, DeadlineNs: wk.DeadlineNs, LatencyNs: wk.LatencyNs, ThresholdNs: int64(r.spec.Threshold),
				DrainNs: wk.DrainNs, PrevDrainNs: r.prevDrain, Messages: wk.Messages, Calls: wk.Calls, EAGAIN: wk.EAGAIN,
				Missed: wk.Missed, Noise: w.spikeNoise, BrokeTrace: r.loop.BrokeAt.Load() == wk.DeadlineNs && wk.DeadlineNs != 0}
			if w.spikeRec.BrokeTrace && !r.traceNoted {
				r.traceNoted = true // at once: a soak may run for hours after it
				fmt.Fprintf(w.log, "warning: %s\n", r.tracingStopped())
			}
			before := w.spikes.Dropped()
			w.fail(w.spikes.Write(&w.spikeRec))
			r.spikesDropped += w.spikes.Dropped() - before
		}
		r.prevDrain = wk.DrainNs
	})
}

// noiseStates appends each noise source's state now to out.
func (w *trialWriter) noiseStates(out []results.NoiseInterval) []results.NoiseInterval {
	for _, n := range w.noises {
		out = append(out, results.NoiseInterval{Kind: n.Kind(), Unit: n.Unit(), State: n.State()})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// interval merges set into r's totals and, in interval mode, writes its
// record: to intervals.jsonl, to OnInterval and to the exporter. The
// record's slices are its own (OnInterval may keep it); everything else it
// reads goes through buffers the writer keeps, so an interval allocates
// only the record's few slices and its encoding.
func (w *trialWriter) interval(r *reader, set *probe.Recorders) {
	r.total.Merge(set.Set)
	if r.intervalNs == 0 {
		r.lastCounts = set.Counts
		return
	}
	prev := r.lastCounts
	if r.intervals == 0 {
		prev = r.loop.StartCounts // published before the first handoff
	}
	c := set.Counts
	iv := results.Interval{Time: time.Now(), Trial: w.trial, Variant: w.variant, Round: w.round, Reader: r.spec.Name,
		Seq: r.intervals, FromNs: set.FromNs, ToNs: set.ToNs,
		Wakeups: set.Ticks - r.lastTicks, Overruns: set.Overruns - r.lastOverruns,
		MissedTicks: set.MissedTicks - r.lastMissed, BacklogSkips: set.BacklogSkips - r.lastBacklogSkips,
		Calls: c.Calls - prev.Calls, Data: c.Data - prev.Data, EAGAIN: c.EAGAIN - prev.EAGAIN,
		Messages: c.Messages - prev.Messages, Lost: c.Lost - min(prev.Lost, c.Lost),
		PerCallTicks:  results.TickStatsOf(set.Set.HDR(record.CallAll), false),
		WakeupLatency: results.LatencyOf(set.Set.HDR(record.WakeupLatency), false),
		Drain:         results.LatencyOf(set.Set.HDR(record.DrainTime), false),
		Controls:      controls(set.Set, r.drain.Controls(), c.ControlSkips-prev.ControlSkips, false),
		DataMeanTicks: linearMean(set.Set.Linear(record.CallData)), EAGAINMeanTicks: linearMean(set.Set.Linear(record.CallEAGAIN)),
		DataP50Ticks: linearQuantile(set.Set.Linear(record.CallData), 0.5), EAGAINP50Ticks: linearQuantile(set.Set.Linear(record.CallEAGAIN), 0.5),
		DataIQMTicks: linearIQM(set.Set.Linear(record.CallData)), EAGAINIQMTicks: linearIQM(set.Set.Linear(record.CallEAGAIN)),
		LateHandoffs: r.handoff.Late.Load(),
		Spikes:       set.Spikes - r.lastSpikes,
	}
	w.processState(&iv)
	w.self.mark(w.readerIndex(r), &iv)
	w.intervalKernel(&iv)
	w.intervalIRQs(r, &iv)
	r.intervalCounters(&iv)
	w.intervalSent(r, &iv)
	w.intervalNoise(r, &iv)
	r.lastCounts, r.lastTicks, r.lastOverruns, r.lastSpikes = c, set.Ticks, set.Overruns, set.Spikes
	r.lastMissed, r.lastBacklogSkips = set.MissedTicks, set.BacklogSkips
	r.intervals++
	if w.intervals != nil {
		w.ivRec = iv // encoded from the writer's own copy: no allocation for the boxing
		w.fail(w.intervals.Write(&w.ivRec))
	}
	if r.log != nil && r.logErr == nil {
		if r.logErr = r.log.Sync(); r.logErr != nil {
			w.fail(r.logErr)
		}
	}
	if w.onIv != nil {
		w.onIv(iv)
	}
	if w.exporter != nil {
		w.export(r, set, iv)
	}
}

// processState fills the process's state at the end of an interval:
// resident memory and open fds (left out, and ProcessUnknown saying why,
// when /proc cannot be read for them: never a 0 as if measured),
// goroutines and GC cycles so far.
func (w *trialWriter) processState(iv *results.Interval) {
	var rssErr, fdErr error
	iv.RSSBytes, rssErr = w.proc.RSS()
	iv.FDs, fdErr = w.proc.OpenFDs()
	if rssErr != nil || fdErr != nil {
		iv.RSSBytes, iv.FDs = 0, 0
		iv.ProcessUnknown = errors.Join(rssErr, fdErr).Error()
	}
	iv.Goroutines = runtime.NumGoroutine()
	iv.GCCycles = w.stats.gcCycles()
}

// readerIndex is r's index among the writer's readers.
func (w *trialWriter) readerIndex(r *reader) int {
	for i, x := range w.readers {
		if x == r {
			return i
		}
	}
	return -1
}

// intervalKernel fills the clocksource now and, once the kernel changed
// what the trial measures, why.
func (w *trialWriter) intervalKernel(iv *results.Interval) {
	if w.kernel == nil {
		return
	}
	rep := w.kernel.Report()
	iv.Clocksource = rep.ClocksourceEnd
	if why := rep.Invalid(); why != "" {
		iv.Invalid = "invalid: " + why
	}
}

// intervalIRQs fills what r's CPU served since the last interval; the two
// maps it reads into take turns, so a known source allocates nothing.
func (w *trialWriter) intervalIRQs(r *reader, iv *results.Interval) {
	if r.irqLast == nil {
		return
	}
	if err := w.proc.IRQCounts(r.cpu(), r.irqCur); err == nil {
		iv.CPUInterrupts = cpuInterrupts(r.cpu(), r.irqCur, r.irqLast)
		r.irqLast, r.irqCur = r.irqCur, r.irqLast
	}
}

// intervalCounters fills the deltas of r's thread counters since the last
// interval, in the slice readCounters returned (the record's own).
func (r *reader) intervalCounters(iv *results.Interval) {
	now := r.readCounters()
	if now == nil || len(now) > len(r.lastCtr) {
		return
	}
	for i := range now {
		v := now[i].Value
		now[i].Value = v - r.lastCtr[i]
		r.lastCtr[i] = v
	}
	iv.Counters = now
}

// intervalSent fills the messages sent to r's endpoints since the last
// interval.
func (w *trialWriter) intervalSent(r *reader, iv *results.Interval) {
	if len(r.lastSent) < len(w.senders) {
		r.lastSent = make([]uint64, len(w.senders))
	}
	for i, s := range w.senders {
		for _, g := range r.groups {
			if s.group == g {
				n := s.sentCount.Load()
				iv.Sent += n - r.lastSent[i]
				r.lastSent[i] = n
			}
		}
	}
}

// intervalNoise fills each noise source's work since the last interval.
func (w *trialWriter) intervalNoise(r *reader, iv *results.Interval) {
	if len(w.noises) == 0 {
		return
	}
	if len(r.lastNoise) < len(w.noises) {
		r.lastNoise = make([]uint64, len(w.noises))
	}
	iv.Noise = make([]results.NoiseInterval, len(w.noises))
	for i, n := range w.noises {
		c := n.Count()
		iv.Noise[i] = results.NoiseInterval{Kind: n.Kind(), Unit: n.Unit(), Count: c - r.lastNoise[i], State: n.State()}
		r.lastNoise[i] = c
	}
}

// noiseView adapts a running noise source for the writer.
type noiseView struct{ n *noise.Noise }

func (v noiseView) Kind() string  { return v.n.Config().Kind.String() }
func (v noiseView) Unit() string  { return v.n.Config().Kind.Unit() }
func (v noiseView) Count() uint64 { return v.n.Report().Count }
func (v noiseView) State() string { return v.n.State() }
