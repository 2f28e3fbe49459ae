package engine

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/noise"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/sysinfo"
)

// trialWriter is the non-real-time side of a trial: every 50 ms it drains
// the readers' wakeup rings into their logs (and spikes.jsonl), takes the
// Recorders the readers handed over at interval ends, merges them into the
// trial totals, and emits interval records. It is the only goroutine that
// touches the totals while the trial runs.
type trialWriter struct {
	trial     int
	variant   string
	round     int
	readers   []*reader
	senders   []*sender
	noises    []noiseSource
	intervals *results.JSONL
	spikes    *results.JSONL
	onIv      func(results.Interval)
	// onCheckpoint receives the trial so far after intervals (soak), so
	// summary.json survives a SIGKILL; base carries the trial's identity.
	onCheckpoint func(results.Trial)
	base         results.Trial
	scenario     string
	// yield and heapBase drive the soak run's own garbage collection.
	yield    *atomic.Bool
	heapBase uint64
	headroom uint64
	// Collections counts the collections the writer ran.
	Collections    int
	lastCheckpoint time.Time
	exporter       *exporter.Server
	// err is the first interval or spike log error; failed is closed at
	// the first write error of any results file (fail), which ends the
	// trial: a soak on a full disk stops instead of running on.
	err        error
	failed     chan struct{}
	failedOnce sync.Once
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
		Wakeups: iv.Wakeups, Overruns: iv.Overruns, DataCalls: iv.Data, EAGAINCalls: iv.EAGAIN,
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

// collect runs a garbage collection when a soak run's heap has grown by
// SoakHeapHeadroom: it first makes every reader pass its SafePoint (the only
// place the runtime can stop them), then collects, then lets them go.
func (w *trialWriter) collect() {
	if w.yield == nil || heapBytes() < w.heapBase+w.headroom {
		return
	}
	w.yield.Store(true)
	runtime.GC()
	w.yield.Store(false)
	w.heapBase = heapBytes()
	w.Collections++
}

// poll drains rings and handoffs once.
func (w *trialWriter) poll() {
	w.collect()
	any := false
	now := rt.Monotonic()
	for _, r := range w.readers {
		w.sampleIRQs(r, now)
		w.drainRing(r)
		r.drainProfiler()
		if r.handoff != nil {
			if set := r.handoff.Take(); set != nil {
				w.interval(r, set)
				set.Set.Reset()
				r.handoff.Give(set)
				any = true
			}
		}
	}
	// Checkpoint summary.json at most every 10 s: enough for a SIGKILL to
	// lose little, cheap for hours-long runs.
	if any && w.onCheckpoint != nil && time.Since(w.lastCheckpoint) >= 10*time.Second {
		w.lastCheckpoint = time.Now()
		w.onCheckpoint(w.checkpoint())
	}
}

// checkpoint is the trial so far, built only from what the writer owns
// (the merged totals and the counters handed over with them) and from
// atomics: never from state the real-time threads are writing.
func (w *trialWriter) checkpoint() results.Trial {
	t := w.base
	t.Readers, t.Traffic = nil, nil
	for _, s := range w.senders {
		t.Traffic = append(t.Traffic, results.Traffic{Endpoint: s.spec.Endpoint, Sockets: len(s.group.FDs()), Sent: s.sentCount.Load()})
	}
	for _, r := range w.readers {
		c := r.lastCounts
		rr := results.Reader{Name: r.spec.Name, Method: r.spec.Method.String(), Sockets: len(r.drain.FDs()), Endpoint: strings.Join(r.spec.Endpoints, ","),
			Applied: appliedReport(r.applied), Calls: c.Calls, Data: c.Data, EAGAIN: c.EAGAIN, Errors: c.Errors,
			Messages: c.Messages, Bytes: c.Bytes, Lost: c.Lost, Reordered: c.Reordered, Duplicates: c.Duplicates,
			Wakeups: r.lastTicks, Overruns: r.lastOverruns, Intervals: r.intervals, Counters: r.readCounters(), CountersSkipped: r.countersSkipped}
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
		w.interval(r, r.loop.Final())
	}
}

// sampleIRQs reads the reader CPU's interrupt counts at the window's edges
// (to within one poll, 50 ms).
func (w *trialWriter) sampleIRQs(r *reader, now int64) {
	if r.loop.MeasureFrom == 0 || now < r.loop.MeasureFrom {
		return
	}
	if r.irqFrom == nil {
		if m, err := sysinfo.ReadIRQCounts(int(r.spec.CPU)); err == nil {
			r.irqFrom, r.irqLast = m, m
		}
		return
	}
	if r.irqUntil == nil && now >= r.loop.MeasureUntil {
		r.irqUntil, _ = sysinfo.ReadIRQCounts(int(r.spec.CPU))
	}
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
		if end, err = sysinfo.ReadIRQCounts(int(r.spec.CPU)); err != nil {
			return nil
		}
	}
	return cpuInterrupts(int(r.spec.CPU), end, r.irqFrom)
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

func (w *trialWriter) drainRing(r *reader) {
	r.loop.Wakeups.Drain(func(wk *record.Wakeup) {
		if r.log != nil && r.logErr == nil {
			if r.logErr = r.log.Write(wk); r.logErr != nil {
				w.fail(r.logErr) // it names the log
			}
		}
		if r.spec.Threshold > 0 && wk.LatencyNs > int64(r.spec.Threshold) && w.spikes != nil {
			sp := results.Spike{Time: time.Now(), Trial: w.trial, Variant: w.variant, Reader: r.spec.Name,
				Tick: wk.Tick, DeadlineNs: wk.DeadlineNs, LatencyNs: wk.LatencyNs, ThresholdNs: int64(r.spec.Threshold),
				DrainNs: wk.DrainNs, PrevDrainNs: r.prevDrain, Messages: wk.Messages, Calls: wk.Calls, EAGAIN: wk.EAGAIN,
				Missed: wk.Missed, Noise: w.noiseStates(), BrokeTrace: r.loop.BrokeAt.Load() == wk.DeadlineNs && wk.DeadlineNs != 0}
			before := w.spikes.Dropped()
			w.fail(w.spikes.Write(sp))
			r.spikesDropped += w.spikes.Dropped() - before
		}
		r.prevDrain = wk.DrainNs
	})
}

func (w *trialWriter) noiseStates() []results.NoiseInterval {
	var out []results.NoiseInterval
	for _, n := range w.noises {
		out = append(out, results.NoiseInterval{Kind: n.Kind(), Unit: n.Unit(), State: n.State()})
	}
	return out
}

// interval merges set into r's totals and, in interval mode, writes its record.
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
		Calls: c.Calls - prev.Calls, Data: c.Data - prev.Data, EAGAIN: c.EAGAIN - prev.EAGAIN,
		Messages: c.Messages - prev.Messages, Lost: c.Lost - min(prev.Lost, c.Lost),
		PerCallTicks:  results.TickStatsOf(set.Set.HDR(record.CallAll), false),
		WakeupLatency: results.LatencyOf(set.Set.HDR(record.WakeupLatency), false),
		Drain:         results.LatencyOf(set.Set.HDR(record.DrainTime), false),
		LateHandoffs:  r.handoff.Late.Load(),
		Goroutines:    runtime.NumGoroutine(), GCCycles: gcCycles(),
	}
	// 0 when /proc cannot be read: the soak's memory trend then shows a gap.
	iv.RSSBytes, _ = sysinfo.RSS()
	iv.FDs, _ = sysinfo.OpenFDs()
	iv.Spikes = set.Spikes - r.lastSpikes
	if r.irqLast != nil {
		if m, err := sysinfo.ReadIRQCounts(int(r.spec.CPU)); err == nil {
			iv.CPUInterrupts = cpuInterrupts(int(r.spec.CPU), m, r.irqLast)
			r.irqLast = m
		}
	}
	if now := r.readCounters(); now != nil {
		for i, c := range now {
			iv.Counters = append(iv.Counters, results.Counter{Name: c.Name, Value: c.Value - r.lastCtr[i]})
			r.lastCtr[i] = c.Value
		}
	}
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
	if len(r.lastNoise) < len(w.noises) {
		r.lastNoise = make([]uint64, len(w.noises))
	}
	for i, n := range w.noises {
		c := n.Count()
		iv.Noise = append(iv.Noise, results.NoiseInterval{Kind: n.Kind(), Unit: n.Unit(), Count: c - r.lastNoise[i], State: n.State()})
		r.lastNoise[i] = c
	}
	r.lastCounts, r.lastTicks, r.lastOverruns, r.lastSpikes = c, set.Ticks, set.Overruns, set.Spikes
	r.intervals++
	if w.intervals != nil {
		w.fail(w.intervals.Write(iv))
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

// noiseView adapts a running noise source for the writer.
type noiseView struct{ n *noise.Noise }

func (v noiseView) Kind() string  { return v.n.Config().Kind }
func (v noiseView) Unit() string  { return noise.Unit(v.n.Config().Kind) }
func (v noiseView) Count() uint64 { return v.n.Report().Count }
func (v noiseView) State() string { return v.n.State() }
