package explain

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
)

// Parts is a range of per-call cost and what its calls were. Data, Warm
// and Cold are the classes (Warm and Cold 0 without per-call context, when
// EAGAIN holds every EAGAIN call); First the calls among the first
// FirstCalls of a tick.
type Parts struct {
	// From and To bound the range [From, To) in clock ticks; To 0 means
	// unbounded (the range includes the overflow bucket).
	From   uint64 `json:"from"`
	To     uint64 `json:"to"`
	Count  uint64 `json:"count"`
	Data   uint64 `json:"data"`
	EAGAIN uint64 `json:"eagain"`
	Warm   uint64 `json:"warm_eagain"`
	Cold   uint64 `json:"cold_eagain"`
	First  uint64 `json:"first"`
}

// ModeParts is a mode of the all-calls histogram and what it is made of.
type ModeParts struct {
	Mode  `json:"mode"`
	Parts `json:"parts"`
}

// ClassModes are the modes of one class's own histogram.
type ClassModes struct {
	Class string `json:"class"`
	Total uint64 `json:"total"`
	Modes []Mode `json:"modes"`
}

// Wakeups is what the per-wakeup log says about the latency spikes.
type Wakeups struct {
	// Rows is the wakeups logged; P50, P99 and Max the reader's wakeup
	// latency (ns) as summary.json gives it; Threshold the latency (ns)
	// above which a wakeup counts as a spike and ThresholdFrom where it
	// came from.
	Rows          int    `json:"rows"`
	P50           int64  `json:"p50_ns"`
	P99           int64  `json:"p99_ns"`
	Max           int64  `json:"max_ns"`
	Threshold     int64  `json:"threshold_ns"`
	ThresholdFrom string `json:"threshold_from"`
	Spikes        int    `json:"spikes"`
	// Per factor: spikes with it, and all wakeups with it (the baseline).
	Overrun     int    `json:"spikes_overrun"`
	OverrunAll  int    `json:"wakeups_overrun"`
	InvolCS     int    `json:"spikes_invol_cs"`
	InvolCSAll  int    `json:"wakeups_invol_cs"`
	NoiseOn     int    `json:"spikes_noise_on"`
	NoiseKnown  int    `json:"spikes_noise_known"`     // spikes whose noise state spikes.jsonl recorded
	NoiseAlways string `json:"noise_always,omitempty"` // noise kinds on throughout the trial (duty ≥ 99%)
	Unexplained int    `json:"unexplained"`
	HasCS       bool   `json:"has_cs"` // the log has context-switch columns
	// The machine around the spikes (results.Reader.Machine, the writer's
	// polls of the reader's CPU): MachineCPU the CPU watched, MachineKnown
	// the spikes that fall in a window the writer kept. Steal is the
	// spikes whose window held steal time, StealNs the steal time of
	// those windows (each once); StealPer100msNs the CPU's steal time per
	// 100 ms over the whole watch. IRQBurst is the spikes whose window
	// held more interrupts and softirqs than usual (more than 1.5 times
	// and 3 standard deviations above the watch's rate: a Poisson count),
	// SpikeIRQPer100ms their windows' rate and IRQPer100ms the watch's;
	// BurstTop the source counting most in those windows, with its count.
	MachineCPU       int     `json:"machine_cpu"`
	MachineKnown     int     `json:"spikes_machine_known"`
	MachineNote      string  `json:"machine_note,omitempty"`
	Steal            int     `json:"spikes_steal"`
	StealNs          uint64  `json:"spikes_steal_ns"`
	StealPer100msNs  float64 `json:"steal_per_100ms_ns"`
	StealSource      string  `json:"steal_source,omitempty"`
	IRQBurst         int     `json:"spikes_irq_burst"`
	IRQPer100ms      float64 `json:"irqs_per_100ms"`
	SpikeIRQPer100ms float64 `json:"spike_irqs_per_100ms"`
	BurstTop         string  `json:"burst_top,omitempty"`
	BurstTopCount    uint64  `json:"burst_top_count,omitempty"`
	// Preemption and VM are the machine's facts that no record ties to a
	// spike (summary.json's env): the kernel's preemption model, and
	// whether this is a guest whose exits to its host are invisible from
	// inside it but as steal time.
	Preemption string `json:"preemption,omitempty"`
	VM         bool   `json:"vm,omitempty"`
	// OwnNoise sets the spikes against the duty cycle of the run's own
	// noise that may keep the reader off its CPU (the first such noise
	// with a duty cycle); nil when there is none, or no spike.
	OwnNoise *OwnNoisePhase `json:"own_noise,omitempty"`
	// Checked lists what was looked at for each spike before it was
	// counted as unexplained.
	Checked []string `json:"checked"`
}

// Reader is the explanation of one reader in one trial.
type Reader struct {
	// Trial and Round are summary.json's trial index and round, from 0
	// (the text numbers both from 1, as run, report and check print them).
	Trial   int    `json:"trial"`
	Variant string `json:"variant"`
	Round   int    `json:"round"`
	Reader  string `json:"reader"`
	Method  string `json:"method"`
	Unit    string `json:"unit"`
	// FirstCalls is N of "the first N calls after a wakeup"; 0 when the
	// results hold no per-call context.
	FirstCalls int          `json:"first_calls"`
	All        Parts        `json:"all"`
	Modes      []ModeParts  `json:"modes"`
	Classes    []ClassModes `json:"classes"`
	// Tail is the calls at or above the bucket of the 99th percentile;
	// Overflow those in the overflow bucket (nil when empty).
	Tail     *Parts   `json:"tail,omitempty"`
	Overflow *Parts   `json:"overflow,omitempty"`
	Wakeups  *Wakeups `json:"wakeups,omitempty"`
	// Kernel context of the trial: perf counters of the reader thread and
	// interrupts on its CPU (as recorded; nil/empty when not).
	WakeupCount     uint64                 `json:"wakeup_count"`
	Counters        []results.Counter      `json:"counters,omitempty"`
	CountersSkipped []string               `json:"counters_skipped,omitempty"`
	CPUInterrupts   *results.CPUInterrupts `json:"cpu_interrupts,omitempty"`
	// OwnSoftIRQs is how many loopback datagrams the reader's own recv
	// control sent in the trial's window (results.Controls.RecvData's
	// count, one read each; summed over an interleaved trial's variants,
	// whose window CPUInterrupts shares): each raises at most one NET_RX
	// softirq on the reader's CPU, counted there beside the machine's. 0
	// without it.
	OwnSoftIRQs uint64 `json:"own_softirqs,omitempty"`
	// Starved is the trial's "reader starved" marks of this reader, with
	// who may have kept it off its CPU.
	Starved []Starved `json:"starved,omitempty"`
	Notes   []string  `json:"notes,omitempty"`
}

// Schema and SchemaVersion name Doc, `rtload explain --format json`.
const (
	Schema        = "rtload-explain"
	SchemaVersion = 1
)

// Doc is `rtload explain --format json`: every reader of every trial of
// the results directory Dir, explained.
type Doc struct {
	Schema  string   `json:"schema"`
	Version int      `json:"version"`
	Dir     string   `json:"dir"`
	Readers []Reader `json:"readers"`
}

// Dir explains every reader of every trial of the results directory dir.
func Dir(dir string) ([]Reader, error) {
	s, err := store.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	// Streamed into what the analysis asks of each spike (issue 34: held,
	// 100 MB of spikes took explain to 3 GB).
	spikes := spikeIndex{}
	if _, err := store.EachJSONL(filepath.Join(dir, results.SpikesFile), spikes.add); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []Reader
	budget := wakelog.NewRowBudget()
	env := envOf(s)
	spec := ownNoiseOf(s.Spec)
	own := groupRecvCounts(s.Trials)
	for _, t := range s.Trials {
		noise, notes := noiseOfTrial(t, spec)
		for _, r := range t.Readers {
			x := Analyze(t, r)
			if n, ok := own[groupReader{groupOf(t), r.Name}]; ok {
				x.OwnSoftIRQs = n
			}
			x.Notes = append(x.Notes, notes...)
			x.Starved = starvedOf(t, r, noise)
			w, note := wakeupsOf(budget, dir, t, r, spikes[spikeKey{t.Index, r.Name}], noise)
			if w != nil {
				x.Wakeups = w
				x.Wakeups.Preemption, x.Wakeups.VM = env.Preemption, env.Virtualization != ""
			}
			if note != "" {
				x.Notes = append(x.Notes, note)
			}
			out = append(out, x)
		}
	}
	return out, nil
}

// groupReader is a reader of an interleaved group of trials (or of one
// trial: its Index), whose variants share one measured window.
type groupReader struct {
	group  int
	reader string
}

// groupOf is t's interleaved group (the Index of its first trial), else
// t's own Index, negated so that the two never collide.
func groupOf(t results.Trial) int {
	if t.Interleave != nil {
		return t.Interleave.Group
	}
	return -1 - t.Index
}

// groupRecvCounts are the recv control's datagrams per reader over each
// interleaved group: the variants of one interleaved trial each record
// their own blocks' calls, while the CPU's interrupts (CPUInterrupts)
// count over the group's whole window, so the softirqs that are the
// reader's own are the sum over the group.
func groupRecvCounts(ts []results.Trial) map[groupReader]uint64 {
	out := map[groupReader]uint64{}
	for _, t := range ts {
		for _, r := range t.Readers {
			if c := r.Controls; c != nil && c.RecvData != nil {
				out[groupReader{groupOf(t), r.Name}] += c.RecvData.Count
			}
		}
	}
	return out
}

// env is what explain reads of summary.json's env (sysinfo.Facts).
type env struct {
	Preemption     string `json:"preemption"`
	Virtualization string `json:"virtualization"`
}

// envOf reads s's env facts explain uses; zero when it has none.
func envOf(s *results.Summary) env {
	var e env
	if b, err := json.Marshal(s.Env); err == nil {
		_ = json.Unmarshal(b, &e)
	}
	return e
}

// wakeupsOf analyzes reader r's per-wakeup log (the files summary.json
// lists for it), streamed: each pass reads the files again, the first
// taking its rows from budget, and no row is held, so memory does not grow
// with the log (issue 34: holding 32.8 M rows took explain to 3.9 GB).
func wakeupsOf(budget *wakelog.RowBudget, dir string, t results.Trial, r results.Reader, spikes *readerSpikes, noise []OwnNoise) (*Wakeups, string) {
	if len(r.WakeupLog) == 0 {
		return nil, "no per-wakeup log: wakeup spikes not explained"
	}
	first, torn := true, ""
	w, err := analyzeWakeupLog(t, r, func(f func(record.Wakeup)) error {
		var err error
		var st wakelog.ReadStats
		if first {
			st, err = budget.EachReaderWakeup(dir, r, f)
		} else {
			st, err = wakelog.EachReaderWakeup(dir, r, f)
		}
		first, torn = false, st.Torn
		return err
	}, spikes, noise)
	if err != nil {
		return nil, fmt.Sprintf("wakeup log: %v", err)
	}
	if torn != "" {
		return w, "wakeup log: " + torn // its last row not read, said
	}
	return w, ""
}

// Analyze finds the modes of r's per-call histograms and attributes each
// to classes and positions.
func Analyze(t results.Trial, r results.Reader) Reader {
	pc := r.PerCall
	x := Reader{Trial: t.Index, Variant: t.Variant, Round: t.Round, Reader: r.Name, Method: r.Method, Unit: pc.Unit,
		WakeupCount: r.Wakeups, Counters: r.Counters, CountersSkipped: r.CountersSkipped, CPUInterrupts: r.CPUInterrupts}
	if c := r.Controls; c != nil && c.RecvData != nil {
		x.OwnSoftIRQs = c.RecvData.Count
	}
	all := pc.All
	cls := r.PerCallClass
	if cls != nil && !sameLayout(all, cls.Warm, cls.Cold, cls.First, cls.Rest) {
		x.Notes = append(x.Notes, "per-call context histograms have another layout than the all-calls one: ignored")
		cls = nil
	}
	if cls == nil {
		x.Notes = append(x.Notes, "no per-call context in these results (warm/cold EAGAIN, position): classes are data/EAGAIN only")
	} else {
		x.FirstCalls = cls.FirstCalls
	}
	parts := func(lo, hi int, over bool) Parts {
		p := Parts{Count: span(all, lo, hi), Data: span(pc.Data, lo, hi), EAGAIN: span(pc.EAGAIN, lo, hi)}
		if over {
			p.Count += all.OverflowCount
			p.Data += pc.Data.OverflowCount
			p.EAGAIN += pc.EAGAIN.OverflowCount
		}
		if cls != nil {
			p.Warm, p.Cold, p.First = span(cls.Warm, lo, hi), span(cls.Cold, lo, hi), span(cls.First, lo, hi)
			if over {
				p.Warm += cls.Warm.OverflowCount
				p.Cold += cls.Cold.OverflowCount
				p.First += cls.First.OverflowCount
			}
		}
		return p
	}
	x.All = parts(0, len(all.Counts)-1, true)
	for _, m := range Modes(all) {
		p := parts(m.Lo, m.Hi, false)
		p.From, p.To = m.From, m.To
		x.Modes = append(x.Modes, ModeParts{Mode: m, Parts: p})
	}
	classes := []struct {
		name string
		s    record.Snapshot
	}{{"data", pc.Data}, {"EAGAIN", pc.EAGAIN}}
	if cls != nil {
		classes = []struct {
			name string
			s    record.Snapshot
		}{{"data", pc.Data}, {"warm EAGAIN", cls.Warm}, {"cold EAGAIN", cls.Cold},
			{fmt.Sprintf("first %d calls", cls.FirstCalls), cls.First}, {"later calls", cls.Rest}}
	}
	for _, c := range classes {
		x.Classes = append(x.Classes, ClassModes{Class: c.name, Total: c.s.Total, Modes: Modes(c.s)})
	}
	if all.Total > 0 {
		p99 := results.BucketPercentile(all, 0.99)
		lo := len(all.Counts)
		if p99 < all.Overflow {
			lo = bucketOf(all, p99)
		}
		tail := parts(lo, len(all.Counts)-1, true)
		tail.From = p99
		x.Tail = &tail
		if all.OverflowCount > 0 {
			o := parts(len(all.Counts), len(all.Counts), true)
			o.From = all.Overflow
			x.Overflow = &o
		}
	}
	return x
}

// bucketOf is the index of the bucket whose lower edge is v.
func bucketOf(s record.Snapshot, v uint64) int {
	if v < s.Origin || s.Width == 0 {
		return 0
	}
	return 1 + int((v-s.Origin)/s.Width)
}

func sameLayout(a record.Snapshot, o ...record.Snapshot) bool {
	for _, b := range o {
		if b.Total == 0 && len(b.Counts) == 0 {
			continue
		}
		if a.Width != b.Width || a.Origin != b.Origin || a.Overflow != b.Overflow || len(a.Counts) != len(b.Counts) {
			return false
		}
	}
	return true
}

// analyzeWakeups finds the latency spikes of the log and what coincided
// with them, the run's own noise among it.
func analyzeWakeups(t results.Trial, r results.Reader, rows []record.Wakeup, spikes []results.Spike, noise []OwnNoise) *Wakeups {
	idx := spikeIndex{}
	for _, s := range spikes {
		idx.add(s)
	}
	w, _ := analyzeWakeupLog(t, r, func(f func(record.Wakeup)) error {
		for _, wk := range rows {
			f(wk)
		}
		return nil
	}, idx[spikeKey{t.Index, r.Name}], noise)
	return w
}

// spikeKey is a reader of a trial.
type spikeKey struct {
	trial  int
	reader string
}

// readerSpikes is what the analysis asks of a reader's spikes in
// spikes.jsonl: the threshold they were logged above (the last one's),
// and by tick whether a noise source was on (the last spike of a tick's).
type readerSpikes struct {
	threshold int64
	noiseOn   map[uint64]bool
}

// spikeIndex is every reader's spikes, as a stream of them leaves them.
type spikeIndex map[spikeKey]*readerSpikes

func (x spikeIndex) add(s results.Spike) {
	k := spikeKey{s.Trial, s.Reader}
	rs := x[k]
	if rs == nil {
		rs = &readerSpikes{noiseOn: map[uint64]bool{}}
		x[k] = rs
	}
	rs.threshold = s.ThresholdNs
	rs.noiseOn[s.Tick] = slices.ContainsFunc(s.Noise, func(n results.NoiseInterval) bool { return n.State == "on" })
}

// analyzeWakeupLog is analyzeWakeups over a log read in passes: each call
// of pass gives every row, in order (two passes at most). Its error is
// pass's.
func analyzeWakeupLog(t results.Trial, r results.Reader, pass func(func(record.Wakeup)) error, spikes *readerSpikes, noise []OwnNoise) (*Wakeups, error) {
	w := &Wakeups{}
	// The trial's numbers (results' definition), from the reader's
	// recorder; from the log itself only when the summary has none.
	lat := r.WakeupLatency
	var h *record.HDR
	if lat.Count == 0 {
		h = record.NewHDR(results.WakeupLatencyRange)
	}
	pc := ownPhaseCheck(noise, r)
	err := pass(func(wk record.Wakeup) {
		w.Rows++
		pc.wakeup(wk)
		if wk.Missed > 0 {
			w.OverrunAll++
		}
		if wk.InvolCS > 0 {
			w.InvolCSAll++
		}
		if wk.VolCS > 0 || wk.InvolCS > 0 {
			w.HasCS = true
		}
		if h != nil {
			h.RecordSigned(wk.LatencyNs)
		}
	})
	if err != nil {
		return nil, err
	}
	if w.Rows == 0 {
		return w, nil
	}
	if h != nil {
		lat = results.LatencyOf(h, false)
	}
	w.P50, w.P99, w.Max = lat.P50Ns, lat.P99Ns, lat.MaxNs
	var noiseOn map[uint64]bool // by tick, of the reader's logged spikes
	if spikes != nil {
		w.Threshold, w.ThresholdFrom = spikes.threshold, "the reader's threshold"
		noiseOn = spikes.noiseOn
	}
	if w.Threshold == 0 {
		w.Threshold, w.ThresholdFrom = w.P99, "the 99th percentile"
	}
	w.NoiseAlways = noiseAlways(t)
	w.Checked = append(w.Checked, "overruns")
	if w.HasCS {
		w.Checked = append(w.Checked, "involuntary context switches")
	}
	mc := newMachineCheck(w, r.Machine)
	err = pass(func(wk record.Wakeup) {
		pc.row(wk, lat.P90Ns, r.Drain.P90Ns)
		if wk.LatencyNs < w.Threshold || wk.LatencyNs == 0 {
			return
		}
		w.Spikes++
		explained := mc.spike(wk)
		if wk.Missed > 0 {
			w.Overrun++
			explained = true
		}
		if wk.InvolCS > 0 {
			w.InvolCS++
			explained = true
		}
		if on, ok := noiseOn[wk.Tick]; ok {
			w.NoiseKnown++
			if on {
				w.NoiseOn++
				// Noise on throughout coincides with every wakeup alike.
				explained = explained || w.NoiseAlways == ""
			}
		}
		pc.spike(wk, explained)
		if !explained {
			w.Unexplained++
		}
	})
	if err != nil {
		return nil, err
	}
	if w.NoiseKnown > 0 && w.NoiseAlways == "" {
		w.Checked = append(w.Checked, "noise state")
	}
	mc.done()
	if w.OwnNoise = pc.done(); w.OwnNoise != nil {
		w.Checked = append(w.Checked, "the on phases of the run's own "+fmt.Sprintf("noise[%d]", w.OwnNoise.Noise.Index))
		w.Unexplained -= w.OwnNoise.Explained
	}
	return w, nil
}

// noiseAlways names the kinds of t's noise on throughout the trial (an
// observed duty of 99% or more), ", "-joined; as noise[i] kind when
// another of its noise has the same kind (laight-450's spinners and a
// duty-cycled one).
func noiseAlways(t results.Trial) string {
	kinds := map[string]int{}
	for _, n := range t.Noise {
		kinds[n.Kind]++
	}
	var always []string
	for i, n := range t.Noise {
		switch {
		case n.Duty < 0.99:
		case kinds[n.Kind] > 1:
			always = append(always, fmt.Sprintf("noise[%d] %s", i, n.Kind))
		default:
			always = append(always, n.Kind)
		}
	}
	return strings.Join(always, ", ")
}

// ownPhaseCheck is the phase check of the first of noise, with a duty
// cycle, that may keep r off its CPU; nil when none.
func ownPhaseCheck(noise []OwnNoise, r results.Reader) *phaseCheck {
	for _, n := range preempting(noise, r) {
		if c := newPhaseCheck(n); c != nil {
			return c
		}
	}
	return nil
}
