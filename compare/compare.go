package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// Verdicts of a Metric: stats.Decide's against Result.ThresholdPct
// (issue 24's one rule), and the baseline's own row.
const (
	VerdictBaseline  = "baseline"   // the column compared against
	VerdictSlower    = "slower"     // the whole CI lies beyond +threshold, in the worse direction
	VerdictNotSlower = "not slower" // the whole CI lies on the better side of +threshold
	VerdictSame      = "same"       // the whole CI lies within ±threshold
	// VerdictUndecided: anything else: the CI straddles a boundary, there
	// is no CI (MethodNote says why), or the column or its baseline holds
	// an invalid trial (results.Trial.Valid: the kernel changed what was
	// measured), whatever the CI says.
	VerdictUndecided = "undecided"
)

// Methods of a Metric's confidence interval.
const (
	MethodT    = "t"       // t on log ratios of independent units (processes, or rounds of one process)
	MethodRate = "poisson" // exact conditional binomial interval of a Poisson rate ratio
	MethodNone = "none"    // no interval
)

// Result is a comparison of runs, ready to render (package compare/view:
// text, JSON, CSV, markdown, LKP and the closing blocks). Its JSON form
// is stable: fields are only ever added.
type Result struct {
	// Schema is SchemaCompare, Version SchemaVersion.
	Schema  string    `json:"schema"`
	Version int       `json:"version"`
	Runs    []RunInfo `json:"runs"`
	// Warnings lists fields in which the runs differ and should not;
	// Info those expected to differ (the kernel).
	Warnings []Difference `json:"warnings"`
	Info     []Difference `json:"info"`
	// Metadata lists only the machine and kernel facts in which the runs
	// differ (facts.Metadata): the text header's mmtests-style table.
	Metadata []Difference `json:"metadata"`
	// Notes are anything else worth saying (unreadable logs, skipped tables).
	Notes []string `json:"notes,omitempty"`
	// TickUnit is the unit of per-call values ("TSC ticks", "cycles" or
	// "ns"): the first run's results.ClockInfo.TickUnit.
	TickUnit string `json:"tick_unit"`
	// Columns: one per (variant[:reader], run), each variant's runs together.
	Columns []Column `json:"columns"`
	// Metrics: the headline metrics, per column (and per probe), in column
	// order.
	Metrics []Metric `json:"metrics"`
	// ThresholdPct is the change (in %) the verdicts are read against
	// (Options.Threshold).
	ThresholdPct float64 `json:"threshold_pct"`
	// Profiles compare each profiled variant's kernel profile run against
	// run (profile.go); empty unless two runs profiled a variant.
	Profiles []ProfileDiff `json:"profiles,omitempty"`
	// Interleaved are the paired changes of interleaved variants within
	// each run, from their ABBA block pairs (interleave.go).
	Interleaved []Interleaved `json:"interleaved,omitempty"`
	// Machine is the drift controls' own change, each run's against the
	// first (or each variant's against the first within one run): the
	// machine's change (controls.go); empty when the readers timed none.
	Machine []Machine `json:"machine,omitempty"`
}

// RunInfo describes one compared run.
type RunInfo struct {
	Label    string    `json:"label"`
	Dir      string    `json:"dir"`
	Scenario string    `json:"scenario"`
	Kernel   string    `json:"kernel"`
	Start    time.Time `json:"start"`
	Trials   int       `json:"trials"`
	Degraded bool      `json:"degraded"`
	Stopped  bool      `json:"stopped"`
	// InProgress marks a checkpoint of a run that never finished (killed):
	// its data end at the checkpoint.
	InProgress bool              `json:"in_progress,omitempty"`
	Clock      results.ClockInfo `json:"clock"`
	// Foreign marks a column read from another tool's file (Run.Foreign).
	Foreign bool `json:"foreign,omitempty"`
	// Unread names each file of the run that was not read, and why
	// (Run.Unread): a wakeup log or profile refused, missing or broken.
	Unread []string `json:"unread,omitempty"`
}

// Difference is one field in which the runs differ: Values holds each
// run's value, in run order ("(none)" when a run does not record it).
type Difference struct {
	Field  string   `json:"field"`
	Values []string `json:"values"`
}

// Column is one (variant[:reader], run) column, its rounds merged.
type Column struct {
	// Label is "group/run", Group the variant (":reader" appended when a
	// trial has several readers), Run the run's label.
	Label  string `json:"label"`
	Group  string `json:"group"`
	Run    string `json:"run"`
	Rounds int    `json:"rounds"`
	// PerCall is the all-calls per-call histogram (data + EAGAIN) in clock
	// ticks, the seed's table column.
	PerCall record.Snapshot `json:"per_call_ticks"`
	// PerCallTicks are per-call cost percentiles in clock ticks;
	// WakeupUs wakeup latency percentiles in µs.
	PerCallTicks Percentiles `json:"per_call_ticks_percentiles"`
	WakeupUs     Percentiles `json:"wakeup_latency_us_percentiles"`
}

// Percentiles of one distribution, in the unit its field names.
type Percentiles struct {
	Count uint64  `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
	// Source says where they come from: "hdr" (rounds merged exactly),
	// "hdr worst round" (a round lacked its HDR encoding: each percentile
	// is the worst round's) or "linear" (bucket lower edges).
	Source string `json:"source"`
}

// Metric is one headline metric of one column against its baseline: the
// same variant in the first run (or, comparing one run, the first column).
type Metric struct {
	Name           string `json:"name"`
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higher_is_better"`
	Column         string `json:"column"`
	Baseline       string `json:"baseline"`
	// Value is the column's value (rounds merged); BaselineValue the
	// baseline's.
	Value         float64 `json:"value"`
	BaselineValue float64 `json:"baseline_value"`
	// ChangePct is the values' change, (Value − BaselineValue)/BaselineValue
	// in % (rounds merged, not the samples the interval is from: a max of
	// merged rounds can fall while the per-process maxima rise); nil for
	// the baseline itself or a zero baseline. For the mean per-call cost of
	// one run whose variants ran interleaved it is the block pairs'
	// estimate, Interval.PointPct.
	ChangePct *float64 `json:"change_pct,omitempty"`
	// Diff is Value − BaselineValue and [CILow, CIHigh] the 95% CI of the
	// change mapped onto the baseline's value (BaselineValue × CI of B/A −
	// 1), in Unit; nil without an interval.
	Diff   *float64 `json:"diff,omitempty"`
	CILow  *float64 `json:"ci_low,omitempty"`
	CIHigh *float64 `json:"ci_high,omitempty"`
	// Interval is the change B/A − 1 with its CI, n and method
	// (stats.Change), its point and bounds from one computation on the
	// samples Method names (per-process means, block pairs, event
	// counts): what the verdict judges and the headline table prints as
	// the change beside its CI. Nil for the baseline and without samples;
	// without an interval (LowPct nil) the table prints ChangePct and no
	// CI.
	Interval *Interval `json:"interval,omitempty"`
	// Variance is the variance split of this column's own samples.
	Variance *Variance `json:"variance,omitempty"`
	// MinDetectablePct is the smallest worsening (in %) the noise measured
	// would find slower at ThresholdPct with 80% power; MoreUnits how many
	// more units (Interval.Unit, per side) would decide an undecided
	// verdict if the change were what was measured (nil: none would, or
	// decided).
	MinDetectablePct *float64 `json:"min_detectable_pct,omitempty"`
	MoreUnits        *int     `json:"more_units,omitempty"`
	// Method is MethodT, MethodRate or MethodNone; MethodNote details it
	// ("paired t on per-process differences of mean logs, n = 6 processes
	// × 8 rounds, df 5") or says why there is none.
	Method     string `json:"method"`
	MethodNote string `json:"method_note"`
	Verdict    string `json:"verdict"`
	// Rounds are the column's per-round values (the seed 001 and LKP
	// layouts use them), in run order, and RoundProcesses the process each
	// came from; empty when the metric has no per-round value.
	Rounds         []float64 `json:"rounds,omitempty"`
	RoundProcesses []int     `json:"round_processes,omitempty"`
	// RoundSessions is the session each round came from, for a column
	// pooled over sessions (a sessions directory); empty otherwise.
	RoundSessions []int `json:"round_sessions,omitempty"`
	// Probe is the probe kind of a probe's metric ("messaging",
	// "file_write", "tap_send"), "" for a reader's.
	Probe string `json:"probe,omitempty"`
	// Rate is a spike rate's count, exposure and exact Poisson interval,
	// with its MTBF; nil for other metrics.
	Rate *Rate `json:"rate,omitempty"`

	// What the gate recomputes at its own level (Judge): both sides'
	// per-process samples, whether they ran in the same processes, and a
	// rate's counts.
	a, b    [][]float64
	sa, sb  [][][]float64 // both sides by session, when either pools ≥ 2 (sessions.go)
	sctl    *sessionControls
	paired  bool
	blocks  *[2][]float64 // an interleaved pair's block means (interleave.go): stats.Paired
	ra, rb  *rateSample
	invalid bool // the column or its baseline holds an invalid trial
	// ctl are the drift controls of a and b (or of blocks), value by
	// value (controls.go); nil when a side lacks them.
	ctl *controlSamples
}

// sample is one metric of one subject (a column or a probe): its value
// (rounds merged) and its per-round values with the process of each, or
// for a rate its count over its exposure.
type sample struct {
	name, unit string
	higher     bool
	value      float64
	ok         bool
	rounds     []float64
	procs      []int
	// null and loop are the drift controls of each of rounds (the mean
	// null syscall and user loop of the same reader and trial,
	// results.Reader.ControlMeans; 0 where it timed none); nil for a
	// metric that has none (everything but the per-call costs). recv is
	// the recv control's mean data call beside each round
	// (results.Controls.RecvMeanTicks; 0 where it timed none).
	null, loop, recv []float64
	rate             *rateSample
	probe            string // the probe kind, "" for a reader
}

// rateSample is a count of events over hours measured, and each round's
// share of it (procs, counts, spans: its process, events and hours), the
// units whose spread says how much the events cluster.
type rateSample struct {
	count         uint64
	hours         float64
	procs         []int
	counts, spans []float64
}

// add counts a round of process p: n events in hours.
func (r *rateSample) add(p int, n uint64, hours float64) {
	r.count += n
	r.hours += hours
	r.procs, r.counts, r.spans = append(r.procs, p), append(r.counts, float64(n)), append(r.spans, hours)
}

// units are r's counts and hours per process, or per round when there
// are not processes enough on the two sides (a and b) to estimate their
// spread (stats.RateRatioUnits: units − 2 ≥ 1).
func rateUnits(a, b *rateSample) (ca, ta, cb, tb []float64) {
	byProc := func(r *rateSample) (c, t []float64) {
		var ids []int
		for i, p := range r.procs {
			k := slices.Index(ids, p)
			if k < 0 {
				ids, c, t = append(ids, p), append(c, 0), append(t, 0)
				k = len(ids) - 1
			}
			c[k] += r.counts[i]
			t[k] += r.spans[i]
		}
		return c, t
	}
	ca, ta = byProc(a)
	cb, tb = byProc(b)
	if len(ca)+len(cb) >= 3 {
		return ca, ta, cb, tb
	}
	return a.counts, a.spans, b.counts, b.spans
}

// add appends a per-round value from process p.
func (s *sample) add(v float64, p int) {
	s.rounds = append(s.rounds, v)
	s.procs = append(s.procs, p)
}

// addControlled appends a per-round value from process p measured by
// reader r, with r's drift controls (results.Reader.ControlMeans).
func (s *sample) addControlled(v float64, p int, r *results.Reader) {
	s.add(v, p)
	null, loop, _ := r.ControlMeans()
	s.null, s.loop = append(s.null, null), append(s.loop, loop)
	s.recv = append(s.recv, r.Controls.RecvMeanTicks())
}

// controlled reports whether every round of s has both drift controls.
func (s *sample) controlled() bool {
	return allPositive(s.null, len(s.rounds)) && allPositive(s.loop, len(s.rounds))
}

// allPositive reports whether vs holds n > 0 values, each > 0.
func allPositive(vs []float64, n int) bool {
	return n > 0 && len(vs) == n && !slices.ContainsFunc(vs, func(v float64) bool { return !(v > 0) })
}

// subject is something with headline metrics: a column or a probe.
// invalid holds its trials' Invalid reasons, each once.
type subject struct {
	group, run, label string
	runIdx            int
	samples           []sample
	invalid           []string
	sessionOf         map[int]int // process → session, for a sessions directory
}

// column is a Column being built.
type column struct {
	group, label string
	runIdx       int
	clock        results.ClockInfo
	readers      []results.Reader
	procs        []int   // the process of each of readers
	durations    []int64 // each round's measured time (ns)
	all          record.Snapshot
	invalid      []string // the rounds' Invalid reasons, "trial N (…): invalid: …"
}

// Options choose how Model reads its verdicts.
type Options struct {
	// Threshold is the change the verdicts are read against, a fraction
	// of the baseline (0.03 = 3%); 0 means DefaultThreshold.
	Threshold float64
	// SpikeThreshold, when > 0, gives every reader column without a
	// readers[].threshold of its own a spike rate all the same: its
	// wakeups later than SpikeThreshold per hour, counted from each
	// round's wakeup latency histogram (results.Latency.CountOver), under
	// the name a reader threshold of that value would give ("spikes per
	// hour (> 1ms)"). A gate sets it (verdict.DefaultSpikeThreshold) so
	// that every check judges the tail; 0 (compare's own tables): none.
	SpikeThreshold time.Duration
}

// Model builds the model of a comparison of runs (from compare/load, or
// built in code with Wakeups optional): the headline metrics (Headlines), then
// what a person reads beside them of the runs themselves: each run's
// facts and notes and each column's percentiles. Columns come in variant
// order (first seen), and within a variant in run order, so two runs ×
// (recvfrom, recvmsg) give the seed's recvfrom/unhard, recvfrom/hard,
// recvmsg/unhard, recvmsg/hard. It fails on no runs, or on per-call
// histograms whose layouts differ between rounds of one run. What the
// runs are beside their numbers (their differences, trial marks,
// metadata and profiles' differences) is package compare/facts', whose
// Compare fills them in: this model's Warnings, Info and Metadata are
// empty, its Profiles nil.
func Model(runs []Run, opt Options) (*Result, error) {
	res, cols, err := headlines(runs, opt)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		s := r.Summary
		res.Runs = append(res.Runs, RunInfo{
			Label: r.Label, Dir: r.Dir, Scenario: s.Scenario, Kernel: OrNone(s.Env.Kernel),
			Start: s.Start, Trials: len(s.Trials), Degraded: s.Degraded, Stopped: s.Stopped, Clock: s.Clock,
			InProgress: s.InProgress, Foreign: r.Foreign, Unread: r.Unread,
		})
		if s.InProgress {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: summary.json is a checkpoint written at %s by a run that never finished (killed?): its data end there; intervals.jsonl and the wakeup log may go further", r.Label, s.End.Format("15:04:05")))
		}
		for _, n := range r.Notes {
			res.Notes = append(res.Notes, r.Label+": "+n)
		}
	}
	for i := range cols {
		res.Columns = append(res.Columns, cols[i].public(runs[cols[i].runIdx].Label))
	}
	return res, nil
}

// Headlines is the part of a comparison a verdict judges, and only it:
// a Result whose Metrics (each with its samples and their drift
// controls, its interval at Confidence and its verdict against opt's
// threshold), Interleaved, Machine, ThresholdPct and TickUnit are filled,
// as Model fills them; no run
// facts, differences, marks, metadata, column percentiles or profiles.
// Each of check's looks reads this (verdict.Judge); it fails as Model
// does.
func Headlines(runs []Run, opt Options) (*Result, error) {
	res, _, err := headlines(runs, opt)
	return res, err
}

// headlines is Headlines, with the columns it merged.
func headlines(runs []Run, opt Options) (*Result, []column, error) {
	thr := opt.Threshold
	if thr == 0 {
		thr = DefaultThreshold
	}
	if len(runs) == 0 {
		return nil, nil, errors.New("compare: no runs")
	}
	res := &Result{Schema: SchemaCompare, Version: SchemaVersion, Columns: []Column{}, Metrics: []Metric{}, Warnings: []Difference{}, Info: []Difference{}, Metadata: []Difference{}}
	res.TickUnit = runs[0].Summary.Clock.TickUnit()
	cols, err := buildColumns(runs)
	if err != nil {
		return nil, nil, err
	}
	var subjects []subject
	for i := range cols {
		c := &cols[i]
		subjects = append(subjects, subject{
			group: c.group, run: runs[c.runIdx].Label, label: c.label, runIdx: c.runIdx,
			samples: readerSamples(c, opt.SpikeThreshold), invalid: c.invalid, sessionOf: runs[c.runIdx].sessionOf(),
		})
	}
	subjects = append(subjects, probeSubjects(runs)...)
	res.Metrics = metrics(subjects, len(runs), thr)
	res.ThresholdPct = thr * 100
	res.interleavedMetrics(runs, thr)
	res.machine(runs, cols)
	return res, cols, nil
}

// buildColumns merges each run's trials into (group, run) columns
// (results.Columns), then orders them group by group.
func buildColumns(runs []Run) ([]column, error) {
	sums := make([]*results.Summary, len(runs))
	for i, r := range runs {
		sums[i] = r.Summary
	}
	perReader := results.PerReader(sums...)
	var groups []string
	byKey := map[string]*column{}
	for ri, r := range runs {
		for _, rc := range results.Columns(r.Summary) {
			g := rc.Label(perReader, ":")
			key := g + "\x00" + strconv.Itoa(ri)
			c, ok := byKey[key]
			if !ok {
				c = &column{group: g, label: g + "/" + r.Label, runIdx: ri, clock: r.Summary.Clock}
				byKey[key] = c
				if !slices.Contains(groups, g) {
					groups = append(groups, g)
				}
			}
			for _, rd := range rc.Rounds {
				if len(rd.Reader.PerCall.All.Counts) > 0 {
					sum, ok := c.all.Add(rd.Reader.PerCall.All)
					if !ok {
						return nil, fmt.Errorf("compare %s: round %d: per-call histogram layout differs from earlier rounds", c.label, rd.Trial.Round)
					}
					c.all = sum
				}
				c.readers = append(c.readers, *rd.Reader)
				c.procs = append(c.procs, rd.Trial.Process)
				c.durations = append(c.durations, rd.Trial.DurationNs)
				c.invalid = addInvalid(c.invalid, *rd.Trial)
			}
		}
	}
	var cols []column
	for _, g := range groups {
		for ri := range runs {
			if c, ok := byKey[g+"\x00"+strconv.Itoa(ri)]; ok {
				cols = append(cols, *c)
			}
		}
	}
	return cols, nil
}

func (c *column) public(run string) Column {
	col := Column{Label: c.label, Group: c.group, Run: run, Rounds: len(c.readers), PerCall: c.all}
	var pc []results.TickStats
	var wk []results.Latency
	for _, r := range c.readers {
		pc = append(pc, r.PerCallTicks)
		wk = append(wk, r.WakeupLatency)
	}
	if t, exact, ok := mergeTicks(pc); ok {
		col.PerCallTicks = percentiles(t.Ticks, t.Count, exact, 1)
	} else if c.all.Total > 0 {
		col.PerCallTicks = Percentiles{
			Count: c.all.Total,
			P50:   float64(results.BucketPercentile(c.all, 0.50)),
			P90:   float64(results.BucketPercentile(c.all, 0.90)),
			P99:   float64(results.BucketPercentile(c.all, 0.99)),
			P999:  float64(results.BucketPercentile(c.all, 0.999)),
			Max:   float64(c.all.Max),
			// Bucket lower edges: a value lies in [edge, edge+width).
			Source: "linear",
		}
	}
	if l, exact, ok := mergeLatencies(wk); ok {
		col.WakeupUs = percentiles(l.Ns, l.Count, exact, 1e-3)
	}
	return col
}

// mergeLatencies merges ls with results.MergeLatency when every one of
// them holds samples; ok is false otherwise.
func mergeLatencies(ls []results.Latency) (l results.Latency, exact, ok bool) {
	return mergeIfAll(ls, func(l results.Latency) uint64 { return l.Count }, results.MergeLatency)
}

// mergeTicks is mergeLatencies for per-call tick summaries.
func mergeTicks(ts []results.TickStats) (t results.TickStats, exact, ok bool) {
	return mergeIfAll(ts, func(t results.TickStats) uint64 { return t.Count }, results.MergeTickStats)
}

// mergeIfAll merges xs when every one of them holds samples.
func mergeIfAll[T any](xs []T, count func(T) uint64, merge func(...T) (T, bool)) (m T, exact, ok bool) {
	for _, x := range xs {
		if count(x) == 0 {
			return m, false, false
		}
	}
	m, exact = merge(xs...)
	return m, exact, len(xs) > 0
}

// percentiles reads a summary's quantities (at, in its unit) times scale.
func percentiles(at func(results.Quantity) float64, count uint64, exact bool, scale float64) Percentiles {
	p := Percentiles{
		Count: count,
		P50:   at(results.P50) * scale, P90: at(results.P90) * scale,
		P99: at(results.P99) * scale, P999: at(results.P999) * scale,
		Max:    at(results.Max) * scale,
		Source: "hdr",
	}
	if !exact {
		p.Source = "hdr worst round"
	}
	return p
}

// readerSamples computes the headline metrics of a reader column: each
// with its per-round values (the samples a verdict is made from), and for
// a reader with a spike threshold (its own, or spike: Options.
// SpikeThreshold) its spike rate.
func readerSamples(c *column, spike time.Duration) []sample {
	unit := c.clock.TickUnit()
	var out []sample

	// Mean per-call cost: exact from the histogram's sum.
	avg := sample{name: "mean per-call cost", unit: unit}
	for i := range c.readers {
		if r := &c.readers[i]; r.PerCall.All.Total > 0 {
			avg.addControlled(r.PerCall.All.Mean(), c.procs[i], r)
		}
	}
	if c.all.Total > 0 {
		avg.value, avg.ok = c.all.Mean(), true
	}
	out = append(out, avg)
	if c.clock.Kind != "monotonic" && c.clock.Hz > 0 {
		out = append(out, scaled(avg, "mean per-call cost", "ns", 1e9/c.clock.Hz))
	}

	// Per-call percentiles: from the HDR when every round has it, else
	// the linear buckets' lower edges.
	for _, q := range []struct {
		name string
		q    float64
		at   results.Quantity
	}{
		{"p50 per-call cost", 0.50, results.P50},
		{"p99 per-call cost", 0.99, results.P99},
	} {
		s := sample{name: q.name, unit: unit}
		var ts []results.TickStats
		for i := range c.readers {
			r := &c.readers[i]
			ts = append(ts, r.PerCallTicks)
			if r.PerCallTicks.Count > 0 {
				s.addControlled(r.PerCallTicks.Ticks(q.at), c.procs[i], r)
			} else if r.PerCall.All.Total > 0 {
				s.addControlled(float64(results.BucketPercentile(r.PerCall.All, q.q)), c.procs[i], r)
			}
		}
		if t, _, ok := mergeTicks(ts); ok {
			s.value, s.ok = t.Ticks(q.at), true
		} else if c.all.Total > 0 {
			s.value, s.ok = float64(results.BucketPercentile(c.all, q.q)), true
		}
		out = append(out, s)
	}

	var wake, drain []results.Latency
	for _, r := range c.readers {
		wake = append(wake, r.WakeupLatency)
		drain = append(drain, r.Drain)
	}
	wl, _, wok := mergeLatencies(wake)
	dl, _, dok := mergeLatencies(drain)
	p99 := sample{name: "wakeup latency p99", unit: "µs", value: float64(wl.P99Ns) / 1e3, ok: wok}
	mx := sample{name: "wakeup latency max", unit: "µs", value: float64(wl.MaxNs) / 1e3, ok: wok}
	dr := sample{name: "mean drain time", unit: "µs", value: dl.MeanNs / 1e3, ok: dok}
	for i, r := range c.readers {
		if r.WakeupLatency.Count > 0 {
			p99.add(float64(r.WakeupLatency.P99Ns)/1e3, c.procs[i])
			mx.add(float64(r.WakeupLatency.MaxNs)/1e3, c.procs[i])
		}
		if r.Drain.Count > 0 {
			dr.add(r.Drain.MeanNs/1e3, c.procs[i])
		}
	}
	out = append(out, p99, mx)
	out = append(out, spikeRates(c, spike)...)
	// A reader that drains no sockets (a timer-only reader, another
	// tool's file) has no drain time or messages worth a row.
	sockets := false
	for _, r := range c.readers {
		sockets = sockets || r.Sockets > 0 || r.PerCall.All.Total > 0
	}
	if !sockets {
		return out
	}
	out = append(out, dr)
	lost := sample{name: "messages lost per round", unit: "messages", ok: len(c.readers) > 0}
	for i, r := range c.readers {
		lost.add(float64(r.Lost), c.procs[i])
	}
	lost.value = mean(lost.rounds)
	out = append(out, lost)
	return out
}

// spikeRates is the spike rate per hour of a reader with a threshold
// (readers[].threshold): its spikes over its measured time, a Poisson
// count (issue 24: tail events as rates, comparable across runs of
// different length, which a maximum is not). One sample per threshold
// the column's rounds used. A column none of whose rounds had a
// threshold gets, when spike > 0, its wakeups later than spike from each
// round's histogram instead (results.Latency.CountOver); none when a
// round cannot count them (no histogram).
func spikeRates(c *column, spike time.Duration) []sample {
	var out []sample
	byThr := map[int64]*rateSample{}
	var order []int64
	add := func(thr int64, i int, count uint64) {
		rs, ok := byThr[thr]
		if !ok {
			rs = &rateSample{}
			byThr[thr] = rs
			order = append(order, thr)
		}
		rs.add(c.procs[i], count, float64(c.durations[i])/float64(time.Hour))
	}
	own := false
	for i, r := range c.readers {
		if r.ThresholdNs <= 0 || i >= len(c.durations) || c.durations[i] <= 0 {
			continue
		}
		own = true
		add(r.ThresholdNs, i, r.Spikes)
	}
	if !own && spike > 0 {
		for i, r := range c.readers {
			n, ok := r.WakeupLatency.CountOver(int64(spike))
			if !ok || i >= len(c.durations) || c.durations[i] <= 0 {
				return nil // a round without its count: no rate rather than a part of one
			}
			add(int64(spike), i, n)
		}
	}
	for _, thr := range order {
		rs := byThr[thr]
		out = append(out, sample{name: fmt.Sprintf("spikes per hour (> %v)", time.Duration(thr)), unit: "/h",
			value: float64(rs.count) / rs.hours, ok: rs.hours > 0, rate: rs})
	}
	return out
}

// scaled is s in another unit: value and rounds times k.
func scaled(s sample, name, unit string, k float64) sample {
	t := s
	t.name, t.unit = name, unit
	t.value = s.value * k
	t.rounds = make([]float64, len(s.rounds))
	for i, v := range s.rounds {
		t.rounds[i] = v * k
	}
	return t
}

// probeSubjects computes the headline metrics of every file_write,
// messaging and tap_send probe, one subject per (variant:probe, run).
func probeSubjects(runs []Run) []subject {
	type key struct {
		group string
		run   int
	}
	probes := map[key][]results.Probe{}
	procs := map[key][]int{}
	invalid := map[key][]string{}
	var groups []string
	for ri, r := range runs {
		for _, t := range r.Summary.Trials {
			v := t.Variant
			if v == "" {
				v = "run"
			}
			for _, p := range t.Probes {
				k := key{v + ":" + p.Name, ri}
				if _, ok := probes[k]; !ok {
					if !slices.Contains(groups, k.group) {
						groups = append(groups, k.group)
					}
				}
				probes[k] = append(probes[k], p)
				procs[k] = append(procs[k], t.Process)
				invalid[k] = addInvalid(invalid[k], t)
			}
		}
	}
	var out []subject
	for _, g := range groups {
		for ri, r := range runs {
			k := key{g, ri}
			ps, ok := probes[k]
			if !ok {
				continue
			}
			out = append(out, subject{group: g, run: r.Label, label: g + "/" + r.Label, runIdx: ri,
				samples: probeSamples(ps, procs[k]), invalid: invalid[k], sessionOf: r.sessionOf()})
		}
	}
	return out
}

// probeSamples are the metrics of one probe's rounds (procs[i]: the
// process of ps[i]).
func probeSamples(ps []results.Probe, procs []int) []sample {
	var out []sample
	perRound := func(name, unit string, higher bool, get func(p results.Probe) (float64, bool)) {
		s := sample{name: name, unit: unit, higher: higher, probe: ps[0].Kind}
		for i, p := range ps {
			if v, ok := get(p); ok {
				s.add(v, procs[i])
			}
		}
		if len(s.rounds) == 0 {
			return
		}
		s.value, s.ok = mean(s.rounds), true
		out = append(out, s)
	}
	perRound("write throughput", "KB/s", true, func(p results.Probe) (float64, bool) {
		if p.FileWrite == nil {
			return 0, false
		}
		return p.FileWrite.KBps, true
	})
	perRound("messaging time", "s", false, func(p results.Probe) (float64, bool) {
		if p.Messaging == nil {
			return 0, false
		}
		return float64(p.Messaging.ElapsedNs) / 1e9, true
	})
	perRound("messaging sys time", "s", false, func(p results.Probe) (float64, bool) {
		if p.Messaging == nil {
			return 0, false
		}
		return float64(p.Messaging.SysNs) / 1e9, true
	})
	// tap_send: mean ns per write, per frame size.
	var sizes []int
	for _, p := range ps {
		for _, sz := range p.Sizes {
			if !slices.Contains(sizes, sz.Size) {
				sizes = append(sizes, sz.Size)
			}
		}
	}
	for _, size := range sizes {
		s := sample{name: fmt.Sprintf("mean time per write, %d B frames", size), unit: "ns", probe: ps[0].Kind}
		var packets, weighted float64
		for i, p := range ps {
			for _, sz := range p.Sizes {
				if sz.Size != size || sz.Packets == 0 {
					continue
				}
				s.add(sz.MeanNs, procs[i])
				packets += float64(sz.Packets)
				weighted += sz.MeanNs * float64(sz.Packets)
			}
		}
		if packets == 0 {
			continue
		}
		s.value, s.ok = weighted/packets, true
		out = append(out, s)
	}
	return out
}

// metrics compares every subject's samples with its baseline's at
// threshold thr.
func metrics(subjects []subject, nRuns int, thr float64) []Metric {
	out := []Metric{}
	for i := range subjects {
		s := &subjects[i]
		base := baselineOf(subjects, i, nRuns)
		b := &subjects[base]
		for _, x := range s.samples {
			m := Metric{Name: x.name, Unit: x.unit, HigherIsBetter: x.higher, Column: s.label, Baseline: b.label, Value: x.value,
				Rounds: x.rounds, RoundProcesses: x.procs, Probe: x.probe}
			if !x.ok {
				continue // nothing measured: no row
			}
			m.Variance = varianceOf(x)
			if v := sessionVariance(x, s.sessionOf); v != nil {
				m.Variance = v
			}
			m.RoundSessions = roundSessions(x, s.sessionOf)
			m.Rate = rateOf(x)
			if base == i {
				m.BaselineValue = x.value
				m.Method, m.Verdict = MethodNone, VerdictBaseline
				out = append(out, m)
				continue
			}
			var y *sample
			for j := range b.samples {
				if b.samples[j].name == x.name && b.samples[j].unit == x.unit {
					y = &b.samples[j]
				}
			}
			if y == nil || !y.ok {
				m.Method, m.MethodNote, m.Verdict = MethodNone, "baseline lacks this metric", VerdictUndecided
				out = append(out, m)
				continue
			}
			m.BaselineValue = y.value
			judge(&m, *y, x, b.sessionOf, s.sessionOf, s.runIdx == b.runIdx, thr)
			undecided(&m, s, b)
			out = append(out, m)
		}
	}
	return out
}

// undecided makes m's verdict VerdictUndecided when subject s or its
// baseline b holds an invalid trial, naming them in its MethodNote.
func undecided(m *Metric, s, b *subject) {
	var why []string
	for _, x := range []*subject{b, s} {
		for _, r := range x.invalid {
			why = append(why, x.label+" "+r)
		}
	}
	if len(why) == 0 {
		return
	}
	m.Verdict, m.invalid = VerdictUndecided, true
	m.MethodNote = strings.Join(append([]string{m.MethodNote}, why...), "; ")
}

// addInvalid appends why trial t is invalid to l, named by the trial
// ("trial 2 (recvmsg, round 1): invalid: …"), when it is.
func addInvalid(l []string, t results.Trial) []string {
	if t.Valid() {
		return l
	}
	r := t.Name() + ": " + t.InvalidReason()
	if slices.Contains(l, r) {
		return l
	}
	return append(l, r)
}

// baselineOf is the subject subject i is compared with: the same group in
// the earliest run holding it, or with a single run the first subject.
func baselineOf(subjects []subject, i, nRuns int) int {
	if nRuns == 1 {
		return 0
	}
	for j := range subjects {
		if subjects[j].group == subjects[i].group {
			return j // subjects are in run order within a group
		}
	}
	return i
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// None stands for a value a run does not record: "(none)" in every
// table and difference.
const None = "(none)"

// OrNone is s, or None when s is empty.
func OrNone(s string) string {
	if s == "" {
		return None
	}
	return s
}
