package compare

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// Verdicts of a Metric, in seed 001's words.
const (
	VerdictBaseline    = "baseline"     // the column compared against
	VerdictFaster      = "faster"       // the CI excludes 0, in the better direction
	VerdictSlower      = "slower"       // the CI excludes 0, in the worse direction
	VerdictWithinNoise = "within noise" // the CI contains 0
	VerdictUnknown     = "n/a"          // no CI could be computed (MethodNote says why)
	// VerdictUndecided: the column or its baseline holds an invalid trial
	// (results.Trial.Invalid: the kernel changed what was measured), so no
	// difference can be told whatever the CI says (MethodNote says which).
	VerdictUndecided = "undecided"
)

// Methods of a Metric's confidence interval.
const (
	MethodWelch     = "welch"     // Welch's t-test on per-round values
	MethodBootstrap = "bootstrap" // percentile bootstrap over per-call or per-wakeup samples
	MethodNone      = "none"      // no interval
)

// Result is a comparison of runs, ready to render (Text, JSON, CSV,
// Markdown). Its JSON form is stable: fields are only ever added.
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
	// differ (see Metadata): the text header's mmtests-style table.
	Metadata []Difference `json:"metadata"`
	// Notes are anything else worth saying (unreadable logs, skipped tables).
	Notes []string `json:"notes,omitempty"`
	// TickUnit is the unit of per-call values ("TSC ticks" or "ns"), from
	// the first run's clock.
	TickUnit string `json:"tick_unit"`
	// Columns: one per (variant[:reader], run), each variant's runs together.
	Columns []Column `json:"columns"`
	// Metrics: the headline metrics, per column (and per probe), in column
	// order.
	Metrics []Metric `json:"metrics"`
	// Gate is the verdict of `compare --fail-on` (Judge), nil without it.
	Gate *Gate `json:"gate,omitempty"`
	// Profiles compare each profiled variant's kernel profile run against
	// run (profile.go); empty unless two runs profiled a variant.
	Profiles []ProfileDiff `json:"profiles,omitempty"`
	// Interleaved are the paired changes of interleaved variants within
	// each run, from their ABBA block pairs (interleave.go).
	Interleaved []Interleaved `json:"interleaved,omitempty"`
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
	// ChangePct is (Value − BaselineValue)/BaselineValue in %; nil for the
	// baseline itself or a zero baseline.
	ChangePct *float64 `json:"change_pct,omitempty"`
	// Diff and [CILow, CIHigh] are the difference (column − baseline) and
	// its Confidence interval, in Unit; nil without an interval. For Welch
	// Diff is the difference of per-round means.
	Diff   *float64 `json:"diff,omitempty"`
	CILow  *float64 `json:"ci_low,omitempty"`
	CIHigh *float64 `json:"ci_high,omitempty"`
	// Method is MethodWelch, MethodBootstrap or MethodNone; MethodNote
	// details it ("Welch t, 2+2 rounds, df 1.6") or says why there is none.
	Method     string `json:"method"`
	MethodNote string `json:"method_note"`
	Verdict    string `json:"verdict"`
	// Rounds are the column's per-round values (what Welch and the
	// seed 001 and LKP layouts use), in round order; empty when the
	// metric has no per-round value.
	Rounds []float64 `json:"rounds,omitempty"`
	// Probe is the probe kind of a probe's metric ("messaging",
	// "file_write", "tap_send"), "" for a reader's.
	Probe string `json:"probe,omitempty"`
}

// sample is one metric of one subject (a column or a probe).
type sample struct {
	name, unit string
	higher     bool
	value      float64
	ok         bool
	rounds     []float64
	boot       *resampler
	bootWhat   string // "per-call", "per-wakeup", "per-write"
	noBootWhy  string
	probe      string // the probe kind, "" for a reader
}

// subject is something with headline metrics: a column or a probe.
// invalid holds its trials' Invalid reasons, each once.
type subject struct {
	group, run, label string
	runIdx            int
	samples           []sample
	invalid           []string
}

// column is a Column being built.
type column struct {
	group, label string
	runIdx       int
	clock        results.ClockInfo
	readers      []results.Reader
	wakeups      [][]record.Wakeup // per round; nil when its log is missing
	all          record.Snapshot
	invalid      []string // the rounds' Invalid reasons, "trial N (…): invalid: …"
}

// Compare builds the comparison of runs (from Load, or built in code with
// Wakeups optional). Columns come in variant order (first seen), and within
// a variant in run order, so two runs × (recvfrom, recvmsg) give the
// seed's recvfrom/unhard, recvfrom/hard, recvmsg/unhard, recvmsg/hard. It
// fails on no runs, or on per-call histograms whose layouts differ between
// rounds of one run.
func Compare(runs []Run) (*Result, error) {
	if len(runs) == 0 {
		return nil, errors.New("compare: no runs")
	}
	res := &Result{Schema: SchemaCompare, Version: SchemaVersion, Columns: []Column{}, Metrics: []Metric{}, Warnings: []Difference{}, Info: []Difference{}, Metadata: []Difference{}}
	for _, r := range runs {
		s := r.Summary
		res.Runs = append(res.Runs, RunInfo{
			Label: r.Label, Dir: r.Dir, Scenario: s.Scenario, Kernel: envString(s.Env, "kernel"),
			Start: s.Start, Trials: len(s.Trials), Degraded: s.Degraded, Stopped: s.Stopped, Clock: s.Clock,
			InProgress: s.InProgress, Foreign: r.Foreign,
		})
		if s.InProgress {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: summary.json is a checkpoint written at %s by a run that never finished (killed?): its data end there; intervals.jsonl and the wakeup log may go further", r.Label, s.End.Format("15:04:05")))
		}
		for _, n := range r.Notes {
			res.Notes = append(res.Notes, r.Label+": "+n)
		}
	}
	res.Warnings, res.Info = Differences(runs)
	res.Warnings = append(res.Warnings, TrialMarks(runs)...)
	res.Metadata = Metadata(runs)
	res.TickUnit = tickUnit(runs[0].Summary.Clock)

	cols, err := buildColumns(runs)
	if err != nil {
		return nil, err
	}
	var subjects []subject
	for i := range cols {
		c := &cols[i]
		res.Columns = append(res.Columns, c.public(runs[c.runIdx].Label))
		subjects = append(subjects, subject{
			group: c.group, run: runs[c.runIdx].Label, label: res.Columns[i].Label, runIdx: c.runIdx,
			samples: readerSamples(c), invalid: c.invalid,
		})
	}
	subjects = append(subjects, probeSubjects(runs)...)
	res.Metrics = metrics(subjects, len(runs))
	res.interleavedMetrics(runs)
	res.Profiles = profileDiffs(runs)
	return res, nil
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
				if !contains(groups, g) {
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
				c.invalid = addInvalid(c.invalid, *rd.Trial)
				c.wakeups = append(c.wakeups, r.Wakeups[r.index(rd)])
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

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// tickUnit names one per-call tick.
func tickUnit(c results.ClockInfo) string {
	switch {
	case c.Kind == "monotonic":
		return "ns"
	case c.Kind == "tsc":
		return "TSC ticks"
	case c.Unit != "":
		return c.Unit
	}
	return "ticks"
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

// readerSamples computes the headline metrics of a reader column.
func readerSamples(c *column) []sample {
	unit := tickUnit(c.clock)
	var out []sample

	// Mean per-call cost: exact from the histogram's sum; bootstrap over
	// per-call samples rebuilt from the buckets.
	avg := sample{name: "mean per-call cost", unit: unit}
	for _, r := range c.readers {
		if r.PerCall.All.Total > 0 {
			avg.rounds = append(avg.rounds, r.PerCall.All.Mean())
		}
	}
	if c.all.Total > 0 {
		avg.value, avg.ok = c.all.Mean(), true
		b := histResampler(c.all, histMean)
		avg.boot, avg.bootWhat = &b, "per-call"
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
		for _, r := range c.readers {
			ts = append(ts, r.PerCallTicks)
			if r.PerCallTicks.Count > 0 {
				s.rounds = append(s.rounds, r.PerCallTicks.Ticks(q.at))
			} else if r.PerCall.All.Total > 0 {
				s.rounds = append(s.rounds, float64(results.BucketPercentile(r.PerCall.All, q.q)))
			}
		}
		if t, _, ok := mergeTicks(ts); ok {
			s.value, s.ok = t.Ticks(q.at), true
		} else if c.all.Total > 0 {
			s.value, s.ok = float64(results.BucketPercentile(c.all, q.q)), true
		}
		if c.all.Total > 0 {
			b := histResampler(c.all, histQuantile(q.q))
			s.boot, s.bootWhat = &b, "per-call"
		}
		out = append(out, s)
	}

	// Wakeup latency and drain time: per-wakeup logs for the bootstrap.
	logs := wakeupValues(c.wakeups)
	var wake, drain []results.Latency
	for _, r := range c.readers {
		wake = append(wake, r.WakeupLatency)
		drain = append(drain, r.Drain)
	}
	wl, _, wok := mergeLatencies(wake)
	dl, _, dok := mergeLatencies(drain)
	p99 := sample{name: "wakeup latency p99", unit: "µs", value: float64(wl.P99Ns) / 1e3, ok: wok}
	mx := sample{name: "wakeup latency max", unit: "µs", value: float64(wl.MaxNs) / 1e3, ok: wok,
		noBootWhy: "a maximum has no bootstrap interval"}
	dr := sample{name: "mean drain time", unit: "µs", value: dl.MeanNs / 1e3, ok: dok}
	for _, r := range c.readers {
		if r.WakeupLatency.Count > 0 {
			p99.rounds = append(p99.rounds, float64(r.WakeupLatency.P99Ns)/1e3)
			mx.rounds = append(mx.rounds, float64(r.WakeupLatency.MaxNs)/1e3)
		}
		if r.Drain.Count > 0 {
			dr.rounds = append(dr.rounds, r.Drain.MeanNs/1e3)
		}
	}
	if logs != nil {
		b := sampleResampler(logs.latencyUs, quantileOf(0.99))
		p99.boot, p99.bootWhat = &b, "per-wakeup"
		d := sampleResampler(logs.drainUs, mean)
		dr.boot, dr.bootWhat = &d, "per-wakeup"
	} else {
		p99.noBootWhy = "no per-wakeup log to bootstrap over"
		dr.noBootWhy = p99.noBootWhy
	}
	out = append(out, p99, mx)
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
	lost := sample{name: "messages lost per round", unit: "messages", ok: len(c.readers) > 0,
		noBootWhy: "losses are counts per round"}
	for _, r := range c.readers {
		lost.rounds = append(lost.rounds, float64(r.Lost))
	}
	lost.value = mean(lost.rounds)
	out = append(out, lost)
	return out
}

// scaled is s in another unit: value, rounds and bootstrap times k.
func scaled(s sample, name, unit string, k float64) sample {
	t := s
	t.name, t.unit = name, unit
	t.value = s.value * k
	t.rounds = make([]float64, len(s.rounds))
	for i, v := range s.rounds {
		t.rounds[i] = v * k
	}
	if s.boot != nil {
		inner := *s.boot
		b := resampler{center: inner.center * k}
		b.draw = func(r *rand.Rand) float64 { return inner.draw(r) * k }
		t.boot = &b
	}
	return t
}

type wakeLogs struct{ latencyUs, drainUs []float64 }

// wakeupValues concatenates the per-wakeup logs of every round, or nil when
// any round lacks its log.
func wakeupValues(ws [][]record.Wakeup) *wakeLogs {
	if len(ws) == 0 {
		return nil
	}
	var l wakeLogs
	for _, w := range ws {
		if len(w) == 0 {
			return nil
		}
		for _, x := range w {
			l.latencyUs = append(l.latencyUs, float64(x.LatencyNs)/1e3)
			l.drainUs = append(l.drainUs, float64(x.DrainNs)/1e3)
		}
	}
	return &l
}

// probeSubjects computes the headline metrics of every file_write,
// messaging and tap_send probe, one subject per (variant:probe, run).
func probeSubjects(runs []Run) []subject {
	type key struct {
		group string
		run   int
	}
	probes := map[key][]results.Probe{}
	clocks := map[key]results.ClockInfo{}
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
					if !contains(groups, k.group) {
						groups = append(groups, k.group)
					}
				}
				probes[k] = append(probes[k], p)
				clocks[k] = r.Summary.Clock
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
				samples: probeSamples(ps, clocks[k]), invalid: invalid[k]})
		}
	}
	return out
}

func probeSamples(ps []results.Probe, clock results.ClockInfo) []sample {
	var out []sample
	perRound := func(name, unit string, higher bool, get func(p results.Probe) (float64, bool)) {
		s := sample{name: name, unit: unit, higher: higher, noBootWhy: "one value per round", probe: ps[0].Kind}
		for _, p := range ps {
			if v, ok := get(p); ok {
				s.rounds = append(s.rounds, v)
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
	// tap_send: mean ns per write, per frame size, bootstrap over per-write
	// samples rebuilt from the tick histogram.
	var sizes []int
	for _, p := range ps {
		for _, sz := range p.Sizes {
			if !containsInt(sizes, sz.Size) {
				sizes = append(sizes, sz.Size)
			}
		}
	}
	for _, size := range sizes {
		s := sample{name: fmt.Sprintf("mean time per write, %d B frames", size), unit: "ns", probe: ps[0].Kind}
		var hist record.Snapshot
		histOK := true
		var packets, weighted float64
		for _, p := range ps {
			for _, sz := range p.Sizes {
				if sz.Size != size || sz.Packets == 0 {
					continue
				}
				s.rounds = append(s.rounds, sz.MeanNs)
				packets += float64(sz.Packets)
				weighted += sz.MeanNs * float64(sz.Packets)
				if sum, ok := hist.Add(sz.Hist); ok && len(sz.Hist.Counts) > 0 {
					hist = sum
				} else {
					histOK = false
				}
			}
		}
		if packets == 0 {
			continue
		}
		s.value, s.ok = weighted/packets, true
		if k := 1e9 / clock.Hz; histOK && hist.Total > 0 && clock.Hz > 0 {
			b := histResampler(hist, histMean)
			if clock.Kind != "monotonic" {
				inner := b
				b = resampler{center: inner.center * k, draw: func(r *rand.Rand) float64 { return inner.draw(r) * k }}
			}
			s.boot, s.bootWhat = &b, "per-write"
		} else {
			s.noBootWhy = "no per-write histogram"
		}
		out = append(out, s)
	}
	return out
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// metrics compares every subject's samples with its baseline's.
func metrics(subjects []subject, nRuns int) []Metric {
	out := []Metric{}
	for i := range subjects {
		s := &subjects[i]
		base := baselineOf(subjects, i, nRuns)
		b := &subjects[base]
		for _, x := range s.samples {
			m := Metric{Name: x.name, Unit: x.unit, HigherIsBetter: x.higher, Column: s.label, Baseline: b.label, Value: x.value,
				Rounds: x.rounds, Probe: x.probe}
			if !x.ok {
				continue // nothing measured: no row
			}
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
				m.Method, m.MethodNote, m.Verdict = MethodNone, "baseline lacks this metric", VerdictUnknown
				out = append(out, m)
				continue
			}
			m.BaselineValue = y.value
			judge(&m, *y, x)
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
	m.Verdict = VerdictUndecided
	m.MethodNote = strings.Join(append([]string{m.MethodNote}, why...), "; ")
}

// addInvalid appends trial t's Invalid reason to l, named by the trial
// ("trial 2 (recvmsg, round 1): invalid: …"), when it has one.
func addInvalid(l []string, t results.Trial) []string {
	if t.Invalid == "" {
		return l
	}
	r := trialName(t) + ": " + t.Invalid
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

// judge fills the change, interval, method and verdict of m: b is the
// baseline, x the column.
func judge(m *Metric, b, x sample) {
	if b.value != 0 {
		m.ChangePct = ptr((x.value - b.value) / b.value * 100)
	}
	var diff, lo, hi float64
	switch {
	case len(b.rounds) >= 2 && len(x.rounds) >= 2:
		w := WelchCI(b.rounds, x.rounds)
		diff, lo, hi = w.Diff, w.Lo, w.Hi
		m.Method = MethodWelch
		m.MethodNote = fmt.Sprintf("Welch t, %d+%d rounds, df %.1f", w.NA, w.NB, w.DF)
	case b.boot != nil && x.boot != nil:
		bs := bootstrapCI(*b.boot, *x.boot, x.value-b.value)
		diff, lo, hi = bs.Diff, bs.Lo, bs.Hi
		m.Method = MethodBootstrap
		m.MethodNote = fmt.Sprintf("bootstrap, %d resamples of %s samples, seed %d", bs.N, x.bootWhat, bs.Seed)
	default:
		m.Method, m.Verdict = MethodNone, VerdictUnknown
		why := x.noBootWhy
		if why == "" {
			why = b.noBootWhy
		}
		m.MethodNote = fmt.Sprintf("%d+%d rounds (Welch needs ≥ 2 each); %s", len(b.rounds), len(x.rounds), why)
		return
	}
	m.Diff, m.CILow, m.CIHigh = ptr(diff), ptr(lo), ptr(hi)
	switch {
	case m.Diff == nil || m.CILow == nil || m.CIHigh == nil:
		m.Verdict = VerdictUnknown
	case lo <= 0 && hi >= 0:
		m.Verdict = VerdictWithinNoise
	case (diff > 0) == m.HigherIsBetter:
		m.Verdict = VerdictFaster
	default:
		m.Verdict = VerdictSlower
	}
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
