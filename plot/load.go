// Package plot draws the results of one or more rtload runs into one image
// (PNG or SVG) with gonum.org/v1/plot: per-call cost histograms overlaid,
// wakeup latency over time, and wakeup latency CDFs, one colour per column.
// It reads only results directories, through package results (summary.json
// and each reader's own per-wakeup log), like every other report; legends
// print results' numbers, so they match the report's.
package plot

import (
	"errors"
	"fmt"
	"path/filepath"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
)

// Column is one line of every panel: one (run, variant) of the results,
// or (run, variant, reader) when a run's trials have several readers, with
// its rounds merged.
type Column struct {
	// Label names the column in legends: "variant", "variant/reader", and
	// "run variant…" when several runs are plotted.
	Label string
	// Run is the run's label (--label, or the directory's base name);
	// Scenario the scenario it ran.
	Run, Scenario string
	// Rounds is how many trials were merged into the column.
	Rounds int
	// Unit names one tick of the per-call histograms ("TSC ticks", "ns").
	Unit string
	// All, Data and EAGAIN are the per-call histograms in clock ticks,
	// summed over rounds (results.PerCall).
	All, Data, EAGAIN record.Snapshot
	// Wakeups are the logged wakeups drawn: every one, in time order
	// within each round, when there are at most MaxPoints; else the
	// lowest and highest latency of each of MaxPoints/2 equal time slices
	// (thin), so that every spike stays visible. Empty when the run wrote
	// no per-wakeup logs. LoggedWakeups counts the wakeups logged (0 in
	// a Column built in code: len(Wakeups)).
	Wakeups       []Wakeup
	LoggedWakeups int
	// Latency is the wakeup latency distribution in ns, the HDR
	// histograms of every round merged; nil when no round carried one.
	Latency *hdrhistogram.Histogram
	// WakeupLatency is the column's wakeup latency summary, its rounds
	// merged (results.MergeLatency): the numbers the legends print, the
	// same as the report's. From the logged wakeups when no round has one.
	WakeupLatency results.Latency
	// logLatency is the logged wakeups' latency (ns) when they are more
	// than Wakeups holds: the CDF's source when no round has an HDR.
	logLatency *hdrhistogram.Histogram
}

// Wakeup is one real-time wakeup placed in its run.
type Wakeup struct {
	// Seconds is the wakeup's deadline minus the first deadline logged in
	// the run (all trials of the directory), in seconds.
	Seconds float64
	// LatencyUs is wake time minus deadline, in µs.
	LatencyUs float64
}

// Load reads each results directory in dirs and returns its columns, runs
// in the order given. labels names the runs (one per dir, or nil for the
// directories' base names). Per-call histograms of a column whose rounds
// have different layouts are an error, as in the report; so is a
// per-wakeup log listed in summary.json that cannot be read.
func Load(dirs, labels []string) ([]Column, error) {
	if len(dirs) == 0 {
		return nil, errors.New("plot: no results directories")
	}
	if labels != nil && len(labels) != len(dirs) {
		return nil, fmt.Errorf("plot: %d labels for %d results directories", len(labels), len(dirs))
	}
	var cols []Column
	budget := wakelog.NewRowBudget()
	for i, dir := range dirs {
		run := filepath.Base(filepath.Clean(dir))
		if labels != nil {
			run = labels[i]
		}
		c, err := loadRun(budget, dir, run, len(dirs) > 1)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c...)
	}
	return cols, nil
}

// loadRun builds the columns of one results directory: one per variant,
// or per variant/reader when a trial has several readers (results.Columns,
// as the report has them). The wakeup logs are streamed twice, holding no
// row: the first pass (taking its rows from budget) counts each column's
// wakeups and their time span, the run's first deadline and the latency
// distribution; the second keeps at most MaxPoints of them per column
// (issue 34: holding every row, 32.8 M rows took plot to 6.4 GB).
func loadRun(budget *wakelog.RowBudget, dir, run string, prefix bool) ([]Column, error) {
	s, err := store.ReadSummary(dir)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	perReader := results.PerReader(s)
	var cols []Column
	type logged struct {
		col    int
		reader results.Reader
	}
	var logs []logged
	type span struct {
		lo, hi int64 // deadlines, ns
		lat    *record.HDR
	}
	spans := map[int]*span{}
	first, haveFirst := int64(0), false // first deadline of the run, ns
	for _, rc := range results.Columns(s) {
		label := rc.Label(perReader, "/")
		if prefix {
			label = run + " " + label
		}
		i := len(cols)
		cols = append(cols, Column{Label: label, Run: run, Scenario: s.Scenario, Unit: unit(s)})
		c := &cols[i]
		var lats []results.Latency
		for _, rd := range rc.Rounds {
			c.Rounds++
			if err := c.addPerCall(rd.Reader.PerCall); err != nil {
				return nil, fmt.Errorf("plot: %s: %s round %d: %w", dir, c.Label, rd.Trial.Round, err)
			}
			if err := c.addLatency(rd.Reader.WakeupLatency); err != nil {
				return nil, fmt.Errorf("plot: %s: %s round %d: wakeup latency: %w", dir, c.Label, rd.Trial.Round, err)
			}
			lats = append(lats, rd.Reader.WakeupLatency)
			if len(rd.Reader.WakeupLog) == 0 {
				continue
			}
			sp := spans[i]
			if sp == nil {
				sp = &span{lat: record.NewHDR(results.WakeupLatencyRange)}
				spans[i] = sp
			}
			st, err := budget.EachReaderWakeup(dir, *rd.Reader, func(w record.Wakeup) {
				if !haveFirst || w.DeadlineNs < first {
					first, haveFirst = w.DeadlineNs, true
				}
				if c.LoggedWakeups == 0 {
					sp.lo, sp.hi = w.DeadlineNs, w.DeadlineNs
				}
				sp.lo, sp.hi = min(sp.lo, w.DeadlineNs), max(sp.hi, w.DeadlineNs)
				sp.lat.RecordSigned(w.LatencyNs)
				c.LoggedWakeups++
			})
			if err != nil {
				return nil, fmt.Errorf("plot: %w", err)
			}
			if st.Rows > 0 {
				logs = append(logs, logged{i, *rd.Reader})
			}
		}
		c.WakeupLatency, _ = results.MergeLatency(lats...)
		if c.WakeupLatency.Count == 0 && c.LoggedWakeups > 0 {
			c.WakeupLatency = results.LatencyOf(spans[i].lat, false)
		}
		if c.LoggedWakeups > MaxPoints {
			c.logLatency = spans[i].lat.Histogram()
		}
	}
	thins := map[int]*thinner{}
	for i, sp := range spans {
		c := &cols[i]
		if c.LoggedWakeups == 0 {
			continue
		}
		thins[i] = newThinner(c.LoggedWakeups, float64(sp.lo-first)/1e9, float64(sp.hi-first)/1e9, MaxPoints)
	}
	for _, l := range logs {
		th := thins[l.col]
		if _, err := wakelog.EachReaderWakeup(dir, l.reader, func(w record.Wakeup) {
			th.add(Wakeup{Seconds: float64(w.DeadlineNs-first) / 1e9, LatencyUs: float64(w.LatencyNs) / 1e3})
		}); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
	}
	for i, th := range thins {
		cols[i].Wakeups = th.points()
	}
	return cols, nil
}

// thinner keeps the wakeups of a column as thin draws them: all of n
// wakeups when n ≤ limit; else the lowest and highest latency of each of
// limit/2 equal time slices of [lo, hi] s (the first of equal ones), at
// most limit in all whatever n.
type thinner struct {
	all    []Wakeup
	lo, hi float64
	slices []slice
	seq    int
}

// slice is one time slice's lowest and highest wakeup, by arrival (seq).
type slice struct {
	low, high       Wakeup
	lowSeq, highSeq int
	set             bool
}

func newThinner(n int, lo, hi float64, limit int) *thinner {
	if n <= limit {
		return &thinner{all: make([]Wakeup, 0, n)}
	}
	return &thinner{lo: lo, hi: hi, slices: make([]slice, max(limit/2, 1))}
}

func (t *thinner) add(w Wakeup) {
	t.seq++
	if t.slices == nil {
		if len(t.all) < cap(t.all) { // a log grown since the first pass: kept as counted
			t.all = append(t.all, w)
		}
		return
	}
	n := len(t.slices)
	k := 0
	if t.hi > t.lo {
		k = min(max(int((w.Seconds-t.lo)/(t.hi-t.lo)*float64(n)), 0), n-1)
	}
	sl := &t.slices[k]
	if !sl.set || w.LatencyUs < sl.low.LatencyUs {
		sl.low, sl.lowSeq = w, t.seq
	}
	if !sl.set || w.LatencyUs > sl.high.LatencyUs {
		sl.high, sl.highSeq = w, t.seq
	}
	sl.set = true
}

// points are the wakeups kept, in time-slice order (each slice's lowest
// then highest).
func (t *thinner) points() []Wakeup {
	if t.slices == nil {
		return t.all
	}
	out := make([]Wakeup, 0, 2*len(t.slices))
	for _, sl := range t.slices {
		if !sl.set {
			continue
		}
		out = append(out, sl.low)
		if sl.highSeq != sl.lowSeq {
			out = append(out, sl.high)
		}
	}
	return out
}

// unit names one per-call tick of s (results.ClockInfo.TickUnit), with
// the TSC's frequency ("TSC ticks, 2.1 GHz").
func unit(s *results.Summary) string {
	if s.Clock.Kind == "tsc" && s.Clock.Hz > 0 {
		return fmt.Sprintf("%s, %.4g GHz", s.Clock.TickUnit(), s.Clock.Hz/1e9)
	}
	return s.Clock.TickUnit()
}

func (c *Column) addPerCall(p results.PerCall) error {
	for _, m := range []struct {
		name string
		dst  *record.Snapshot
		src  record.Snapshot
	}{
		{"all", &c.All, p.All},
		{"data", &c.Data, p.Data},
		{"eagain", &c.EAGAIN, p.EAGAIN},
	} {
		if len(m.src.Counts) == 0 {
			continue
		}
		sum, ok := m.dst.Add(m.src)
		if !ok {
			return fmt.Errorf("per-call %s histogram layout (width %d, origin %d, overflow %d) differs from earlier rounds (width %d, origin %d, overflow %d)",
				m.name, m.src.Width, m.src.Origin, m.src.Overflow, m.dst.Width, m.dst.Origin, m.dst.Overflow)
		}
		*m.dst = sum
	}
	return nil
}

// addLatency merges l's HDR encoding into c.Latency; a round without one
// adds nothing (the CDF then falls back to the logged wakeups when no
// round had one).
func (c *Column) addLatency(l results.Latency) error {
	if l.HDR == "" {
		return nil
	}
	h, err := results.DecodeHDR(l.HDR)
	if err != nil {
		return err
	}
	if c.Latency == nil {
		c.Latency = h
		return nil
	}
	if dropped := c.Latency.Merge(h); dropped != 0 {
		return fmt.Errorf("merge hdr: %d values out of range", dropped)
	}
	return nil
}
