package exporter

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rtload/rtload/record"
)

// Interval is one reader's data for one interval of one trial: counter
// deltas since the previous Update for the same reader, and the interval's
// distributions. The zero value of every field means "nothing happened".
type Interval struct {
	// Scenario, Variant, Round and Reader label every series fed by this
	// interval. An empty Reader sends only Noise (the other fields are ignored).
	Scenario, Variant string
	Round             int
	Reader            string

	// Deltas for the interval. Calls are split by result: DataCalls returned
	// data, EAGAINCalls found nothing, ErrorCalls failed with any other errno.
	// Sent counts messages sent to this reader's sockets; Lost comes from
	// per-socket sequence gaps; Drops is the kernel's count (SO_RXQ_OVFL).
	// Overruns are overrun events (ticks whose wait began a period or more
	// late), MissedTicks the ticks skipped and never run, BacklogSkips the
	// catch-up overruns that skipped past the backlog limit.
	Wakeups, Overruns                  uint64
	MissedTicks, BacklogSkips          uint64
	DataCalls, EAGAINCalls, ErrorCalls uint64
	Received, Sent, Lost, Drops        uint64

	// WakeupLatencyNs is the interval's wakeup latency distribution in ns,
	// as (upper bound, count) pairs in any order, e.g. an HdrHistogram's
	// Distribution bars (To, Count). Each count is added to the first
	// rtload_wakeup_latency_seconds bucket whose bound is ≥ its upper bound
	// (≥ 10 s, +Inf or NaN: the +Inf bucket only).
	WakeupLatencyNs []BucketCount
	// WakeupLatencySumNs is the exact sum of the interval's wakeup latencies
	// in ns, if known (HDR mean × count); 0 = estimate it as Σ upper bound ×
	// count, which overstates by up to one input bucket per sample.
	WakeupLatencySumNs float64

	// CallCostTicks is the interval's per-call cost distribution in clock
	// ticks, as (upper bound, count) pairs: a record.Linear's buckets
	// [lo, lo+Width) as (lo+Width−1, count) and its overflow bucket as
	// +Inf.
	CallCostTicks []BucketCount
	// CallCostSumTicks is the exact sum of the interval's call costs in
	// ticks, if known (record.Snapshot Sum delta); 0 = estimate as above.
	CallCostSumTicks float64
	// CallCostLayout is the per-call histogram's layout (the scenario's
	// report section); rtload_recv_call_cost_ticks follows it (see
	// CallCostBounds). Read only on a reader's first Update in a trial.
	CallCostLayout Layout

	// IntervalMaxWakeupNs is the largest wakeup latency of the interval, in ns.
	IntervalMaxWakeupNs int64

	// Noise is the achieved work of each noise source during the interval;
	// it carries Scenario, Variant and Round but not Reader. Send it once per
	// interval (with one reader, or with Reader empty), or it is counted twice.
	Noise []NoiseWork
}

// BucketCount is one bucket of a distribution: Count samples ≤ UpperBound
// (and above the previous bucket's bound), in the unit of the field holding
// it. UpperBound is inclusive, like Prometheus's le: a record.Linear bucket
// [lo, hi) of integer ticks is UpperBound hi−1, an HdrHistogram bar's is To.
type BucketCount struct {
	UpperBound float64
	Count      uint64
}

// NoiseWork is one noise source's work in an interval: Count units of Unit
// (e.g. Kind "spin", Unit "loops").
type NoiseWork struct {
	Kind, Unit string
	Count      uint64
}

// Bucket layouts.
var (
	// wakeupBoundsSeconds: 1 µs … 10 s, 24 exponential buckets (factor ≈ 2.02).
	wakeupBoundsSeconds = exponentialBounds(1e-6, 10, 24)
)

// exponentialBounds is prometheus.ExponentialBucketsRange with the last
// bound set to exactly hi (the series ends at le="10", not le="9.999…").
func exponentialBounds(lo, hi float64, n int) []float64 {
	b := prometheus.ExponentialBucketsRange(lo, hi, n)
	b[len(b)-1] = hi
	return b
}

// Layout is a linear histogram's bucket layout in clock ticks, as
// record.NewLinear and the scenario's report section give it: buckets
// Width wide from Origin up to Overflow, [0, Origin) below, and an
// overflow bucket from Overflow on. The zero value is the scenario
// default, 128 wide from 64 to 8256 (seed 000).
type Layout struct {
	Width, Origin, Overflow uint64
}

// LinearBuckets turns a per-call histogram into CallCostTicks pairs and
// its Layout: bucket 0 [0, Origin) as Origin−1, bucket [lo, lo+Width) as
// lo+Width−1, the overflow bucket as +Inf; empty buckets are left out. It
// allocates the pairs.
func LinearBuckets(s record.Snapshot) ([]BucketCount, Layout) {
	var out []BucketCount
	for i, c := range s.Counts {
		switch {
		case c == 0:
		case i == 0:
			out = append(out, BucketCount{UpperBound: float64(s.Origin) - 1, Count: c})
		default:
			out = append(out, BucketCount{UpperBound: float64(s.Lower(i) + s.Width - 1), Count: c})
		}
	}
	if s.OverflowCount > 0 { // the report's "8256+" row
		out = append(out, BucketCount{UpperBound: math.Inf(1), Count: s.OverflowCount})
	}
	return out, Layout{Width: s.Width, Origin: s.Origin, Overflow: s.Overflow}
}

// MaxCallCostBuckets is the most finite buckets rtload_recv_call_cost_ticks
// has; a layout with more buckets is served with adjacent ones merged.
const MaxCallCostBuckets = 100

// CallCostBounds returns the le bounds of rtload_recv_call_cost_ticks for
// a layout: one per bucket of it, each the bucket's last tick (edge − 1:
// ticks are integers, and le is inclusive), so "le=8255" is every call
// below the overflow edge 8256, and the +Inf bucket holds exactly the
// overflow bucket. With more than MaxCallCostBuckets buckets, runs of k
// adjacent buckets are merged (k the smallest whole factor that fits), so
// every bound is still an edge of the layout minus one and the overflow
// edge's bound is always last.
func CallCostBounds(l Layout) []float64 {
	if l.Width == 0 {
		l = Layout{128, 64, 8256}
	}
	if l.Overflow <= l.Origin {
		l.Overflow = l.Origin + l.Width
	}
	n := (l.Overflow - l.Origin + l.Width - 1) / l.Width // buckets above Origin
	l.Overflow = l.Origin + n*l.Width
	k := (n + MaxCallCostBuckets - 2) / (MaxCallCostBuckets - 1)
	var b []float64
	if l.Origin > 0 {
		b = append(b, float64(l.Origin-1))
	}
	for i := k; i < n; i += k {
		b = append(b, float64(l.Origin+i*l.Width-1))
	}
	return append(b, float64(l.Overflow-1))
}

// hist accumulates a histogram: counts[i] samples in (bounds[i-1], bounds[i]],
// count − Σ counts in the +Inf bucket.
type hist struct {
	bounds []float64 // shared, read-only
	counts []uint64
	count  uint64
	sum    float64
}

func newHist(bounds []float64) hist {
	return hist{bounds: bounds, counts: make([]uint64, len(bounds))}
}

// add adds the pairs, with upper bounds divided by per (pair units per
// histogram unit: 1e9 for ns into seconds); exactSum (in the pairs' unit)
// replaces the estimate when ≠ 0. It does not allocate.
func (h *hist) add(pairs []BucketCount, per, exactSum float64) {
	var est float64
	for _, p := range pairs {
		if p.Count == 0 {
			continue
		}
		h.count += p.Count
		v := p.UpperBound / per
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue // +Inf bucket only, and nothing known for the sum
		}
		est += v * float64(p.Count)
		if i, _ := slices.BinarySearch(h.bounds, v); i < len(h.bounds) {
			h.counts[i] += p.Count
		}
	}
	if exactSum != 0 {
		est = exactSum / per
	}
	h.sum += est
}

// cumulative returns the buckets as client_golang wants them: upper bound → cumulative count.
func (h *hist) cumulative() map[float64]uint64 {
	m := make(map[float64]uint64, len(h.bounds))
	var c uint64
	for i, b := range h.bounds {
		c += h.counts[i]
		m[b] = c
	}
	return m
}

type readerKey struct {
	scenario, variant string
	round             int
	reader            string
}

type noiseKey struct {
	scenario, variant string
	round             int
	kind, unit        string
}

type readerSeries struct {
	created                     time.Time
	wakeups, overruns           uint64
	missed, backlogSkips        uint64
	data, eagain, errs          uint64
	received, sent, lost, drops uint64
	wakeup, cost                hist
	intervalMaxWakeupSeconds    float64
}

type noiseSeries struct {
	created time.Time
	count   uint64
}

var (
	readerLabels = []string{"scenario", "variant", "round", "reader"}
	noiseLabels  = []string{"scenario", "variant", "round", "kind", "unit"}

	descWakeups = prometheus.NewDesc("rtload_wakeups_total",
		"Real-time reader wakeups (ticks run).", readerLabels, nil)
	descOverruns = prometheus.NewDesc("rtload_overruns_total",
		"Real-time reader overrun events: ticks whose wait began a period or more after their deadline.", readerLabels, nil)
	descMissed = prometheus.NewDesc("rtload_missed_ticks_total",
		"Real-time reader ticks skipped and never run (skip mode, or a catch-up backlog skip).", readerLabels, nil)
	descBacklogSkips = prometheus.NewDesc("rtload_backlog_skips_total",
		"Catch-up overruns that found more ticks due than the backlog limit and skipped them.", readerLabels, nil)
	descCalls = prometheus.NewDesc("rtload_recv_calls_total",
		"Receive calls by result: data, eagain (found nothing) or error (any other errno).",
		append(slices.Clone(readerLabels), "result"), nil)
	descReceived = prometheus.NewDesc("rtload_messages_received_total",
		"Messages received by the reader.", readerLabels, nil)
	descSent = prometheus.NewDesc("rtload_messages_sent_total",
		"Messages sent to the reader's sockets.", readerLabels, nil)
	descLost = prometheus.NewDesc("rtload_messages_lost_total",
		"Messages missing from per-socket sequence numbers.", readerLabels, nil)
	descDrops = prometheus.NewDesc("rtload_kernel_drops_total",
		"Messages the kernel dropped on the reader's sockets (SO_RXQ_OVFL).", readerLabels, nil)
	descWakeupLatency = prometheus.NewDesc("rtload_wakeup_latency_seconds",
		"Wakeup latency of the real-time reader (how late after its deadline it ran).", readerLabels, nil)
	descCallCost = prometheus.NewDesc("rtload_recv_call_cost_ticks",
		"Cost of one receive call in clock ticks (see rtload_run_info's clock label: tsc ticks are not core cycles).",
		readerLabels, nil)
	descIntervalMax = prometheus.NewDesc("rtload_interval_wakeup_latency_max_seconds",
		"Largest wakeup latency of the last interval.", readerLabels, nil)
	descNoise = prometheus.NewDesc("rtload_noise_work_total",
		"Work done by a background noise source, in its unit.", noiseLabels, nil)
	descRunInfo = prometheus.NewDesc("rtload_run_info",
		"Constant 1, labelled with the run's scenario, per-call clock (tsc or monotonic) and kernel release.",
		[]string{"scenario", "clock", "kernel"}, nil)
	descTrial = prometheus.NewDesc("rtload_trial",
		"Index of the trial (variant × round) running now.", nil, nil)
)

// collector holds every series; Update writes and Collect reads under mu.
type collector struct {
	mu       sync.Mutex
	readers  map[readerKey]*readerSeries
	noise    map[noiseKey]*noiseSeries
	callCost map[Layout][]float64 // bucket bounds by layout, shared between series
	runInfo  []string             // nil until SetRunInfo
	trial    int
	trialSet bool
}

var _ prometheus.Collector = (*collector)(nil)

func newCollector() *collector {
	return &collector{
		readers:  make(map[readerKey]*readerSeries),
		noise:    make(map[noiseKey]*noiseSeries),
		callCost: make(map[Layout][]float64),
	}
}

// Update adds one interval of one reader. It allocates only the first time
// it sees a reader (or noise source) in a trial; the engine calls it from
// its interval writer, never from a real-time thread.
func (s *Server) Update(iv Interval) { s.c.update(iv) }

// SetRunInfo sets rtload_run_info{scenario, clock, kernel} = 1, replacing
// any earlier labels. clock is the per-call clock kind ("tsc" or "monotonic").
func (s *Server) SetRunInfo(scenario, clock, kernel string) {
	s.c.mu.Lock()
	s.c.runInfo = []string{scenario, clock, kernel}
	s.c.mu.Unlock()
}

// SetTrial sets rtload_trial to the index of the trial now running. The
// gauge is absent until the first call.
func (s *Server) SetTrial(i int) {
	s.c.mu.Lock()
	s.c.trial, s.c.trialSet = i, true
	s.c.mu.Unlock()
}

func (c *collector) update(iv Interval) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if iv.Reader != "" {
		c.updateReader(iv)
	}
	for _, w := range iv.Noise {
		nk := noiseKey{iv.Scenario, iv.Variant, iv.Round, w.Kind, w.Unit}
		n := c.noise[nk]
		if n == nil {
			for old := range c.noise {
				if old.scenario == nk.scenario && old.variant == nk.variant && old.kind == nk.kind && old.unit == nk.unit && old.round <= nk.round-RoundsKept {
					delete(c.noise, old)
				}
			}
			n = &noiseSeries{created: time.Now()}
			c.noise[nk] = n
		}
		n.count += w.Count
	}
}

// RoundsKept is how many rounds (a soak's slices) of each variant keep
// their series: a new round's first Update drops the series of that
// variant's rounds RoundsKept or more before it, so /metrics stays the
// same size for a soak of days (a counter's dropped series ends, as
// Prometheus's rate() and increase() expect; sum without(round) does not
// survive it).
const RoundsKept = 2

// updateReader adds iv's reader fields; c.mu is held.
func (c *collector) updateReader(iv Interval) {
	k := readerKey{iv.Scenario, iv.Variant, iv.Round, iv.Reader}
	r := c.readers[k]
	if r == nil {
		for old := range c.readers {
			if old.scenario == k.scenario && old.variant == k.variant && old.reader == k.reader && old.round <= k.round-RoundsKept {
				delete(c.readers, old)
			}
		}
		r = &readerSeries{
			created: time.Now(),
			wakeup:  newHist(wakeupBoundsSeconds),
			cost:    newHist(c.callCostBounds(iv.CallCostLayout)),
		}
		c.readers[k] = r
	}
	r.wakeups += iv.Wakeups
	r.overruns += iv.Overruns
	r.missed += iv.MissedTicks
	r.backlogSkips += iv.BacklogSkips
	r.data += iv.DataCalls
	r.eagain += iv.EAGAINCalls
	r.errs += iv.ErrorCalls
	r.received += iv.Received
	r.sent += iv.Sent
	r.lost += iv.Lost
	r.drops += iv.Drops
	r.wakeup.add(iv.WakeupLatencyNs, 1e9, iv.WakeupLatencySumNs)
	r.cost.add(iv.CallCostTicks, 1, iv.CallCostSumTicks)
	r.intervalMaxWakeupSeconds = float64(iv.IntervalMaxWakeupNs) / 1e9
}

func (c *collector) callCostBounds(l Layout) []float64 {
	b, ok := c.callCost[l]
	if !ok {
		b = CallCostBounds(l)
		c.callCost[l] = b
	}
	return b
}

// Describe sends every family's descriptor.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descWakeups, descOverruns, descMissed, descBacklogSkips, descCalls, descReceived, descSent, descLost, descDrops,
		descWakeupLatency, descCallCost, descIntervalMax, descNoise, descRunInfo, descTrial,
	} {
		ch <- d
	}
}

// Collect sends the current totals. A series whose labels are invalid
// (not UTF-8) is sent as an invalid metric: the scrape reports it and
// serves everything else.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	counter := func(d *prometheus.Desc, v uint64, ct time.Time, lv ...string) {
		m, err := prometheus.NewConstMetricWithCreatedTimestamp(d, prometheus.CounterValue, float64(v), ct, lv...)
		if err != nil {
			m = prometheus.NewInvalidMetric(d, err)
		}
		ch <- m
	}
	histogram := func(d *prometheus.Desc, h *hist, ct time.Time, lv ...string) {
		m, err := prometheus.NewConstHistogramWithCreatedTimestamp(d, h.count, h.sum, h.cumulative(), ct, lv...)
		if err != nil {
			m = prometheus.NewInvalidMetric(d, err)
		}
		ch <- m
	}
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, lv...)
		if err != nil {
			m = prometheus.NewInvalidMetric(d, err)
		}
		ch <- m
	}

	for k, r := range c.readers {
		round := strconv.Itoa(k.round)
		lv := []string{k.scenario, k.variant, round, k.reader}
		ct := r.created
		counter(descWakeups, r.wakeups, ct, lv...)
		counter(descOverruns, r.overruns, ct, lv...)
		counter(descMissed, r.missed, ct, lv...)
		counter(descBacklogSkips, r.backlogSkips, ct, lv...)
		counter(descCalls, r.data, ct, append(lv, "data")...)
		counter(descCalls, r.eagain, ct, append(lv, "eagain")...)
		counter(descCalls, r.errs, ct, append(lv, "error")...)
		counter(descReceived, r.received, ct, lv...)
		counter(descSent, r.sent, ct, lv...)
		counter(descLost, r.lost, ct, lv...)
		counter(descDrops, r.drops, ct, lv...)
		histogram(descWakeupLatency, &r.wakeup, ct, lv...)
		histogram(descCallCost, &r.cost, ct, lv...)
		gauge(descIntervalMax, r.intervalMaxWakeupSeconds, lv...)
	}
	for k, n := range c.noise {
		counter(descNoise, n.count, n.created, k.scenario, k.variant, strconv.Itoa(k.round), k.kind, k.unit)
	}
	if c.runInfo != nil {
		gauge(descRunInfo, 1, c.runInfo...)
	}
	if c.trialSet {
		gauge(descTrial, float64(c.trial))
	}
}
