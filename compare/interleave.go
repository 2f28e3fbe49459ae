package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/stats"
)

// MethodPaired is a Metric's method when its interval comes from the ABBA
// block pairs of interleaved variants (stats.Paired).
const MethodPaired = "paired blocks"

// Interleaved is the change of one variant's mean per-call cost against
// another's from the ABBA block pairs of one run whose variants ran
// interleaved (scenario interleave:): each pair is two adjacent blocks of
// one trial, run by the same reader thread on the same sockets, and its
// log ratio is one sample (stats.Paired). Its interval covers the noise
// that differs between adjacent blocks; what a whole process or boot adds
// to both variants alike cancels, and what it adds to one of them (a
// setup that favours one method in one process) is not measured: compare
// processes or boots for that.
type Interleaved struct {
	// Run labels the run; Column and Baseline name the variants (with
	// ":reader" when a trial has several readers).
	Run      string `json:"run"`
	Column   string `json:"column"`
	Baseline string `json:"baseline"`
	// Metric is "mean per-call cost".
	Metric string `json:"metric"`
	// ChangePct, LoPct and HiPct are the change and its 95% CI in % of
	// the baseline; absent when no interval was defined (Notes say why).
	ChangePct *float64 `json:"change_pct,omitempty"`
	LoPct     *float64 `json:"ci_low_pct,omitempty"`
	HiPct     *float64 `json:"ci_high_pct,omitempty"`
	// Pairs is the number of block pairs; Lag1 the lag-1 autocorrelation
	// of their log ratios (consecutive pairs, time order; absent for
	// fewer than 3); N and Method say what the interval was taken over
	// (batch means when the pairs were correlated).
	Pairs int      `json:"pairs"`
	Lag1  *float64 `json:"lag1,omitempty"`
	// RoundsPct is each interleaved trial's (round's, in process order)
	// own change in %, with two trials or more.
	RoundsPct []float64 `json:"rounds_pct,omitempty"`
	N         string    `json:"n"`
	Method    string    `json:"method"`
	Notes     []string  `json:"notes,omitempty"`
	// Change is the interval itself, for verdicts (stats.Decide); a and b
	// the pairs' values it was computed from, ctl their blocks' drift
	// controls (nil when a block lacks them).
	Change stats.Change `json:"-"`
	a, b   []float64
	ctl    *controlSamples
}

// Line is the change in one line: "recvmsg +8.3% per call [+5.1, +11.6]
// vs recvfrom, n = 600 ABBA block pairs".
func (c Interleaved) Line() string {
	if c.ChangePct == nil || c.LoPct == nil || c.HiPct == nil {
		return fmt.Sprintf("%s vs %s: no interval (%s)", c.Column, c.Baseline, strings.Join(c.Notes, "; "))
	}
	return fmt.Sprintf("%s %+.1f%% per call [%+.1f, %+.1f] vs %s, n = %s", c.Column, *c.ChangePct, *c.LoPct, *c.HiPct, c.Baseline, c.N)
}

// BlockPairs are the per-call means of the block pairs of variants a and
// b of reader in s, in time order (trial, then block): in every
// interleaved group holding both, each half-cycle of its block order
// (one block of each variant) gives one pair. Blocks without calls are
// left out with their pair.
func BlockPairs(s *results.Summary, a, b, reader string) (av, bv []float64) {
	ga, gb := GroupBlockPairs(s, a, b, reader)
	for i := range ga {
		av, bv = append(av, ga[i]...), append(bv, gb[i]...)
	}
	return av, bv
}

// GroupBlockPairs is BlockPairs by interleaved group (one trial: one
// round of one process), in run order; groups without a pair are left
// out.
func GroupBlockPairs(s *results.Summary, a, b, reader string) (av, bv [][]float64) {
	p := groupBlockPairs(s, a, b, reader)
	return p.a, p.b
}

// blockPairs are GroupBlockPairs' values with each block's drift controls
// (results.BlockControls.Means: its null syscall and user loop means, 0
// where the block has none), group by group in the same shape.
type blockPairs struct {
	a, b           [][]float64
	na, nb, la, lb [][]float64
}

// groupBlockPairs is GroupBlockPairs with the blocks' drift controls.
func groupBlockPairs(s *results.Summary, a, b, reader string) (out blockPairs) {
	var order []blockKey
	blocks := map[blockKey][2]*results.Block{}
	for ti := range s.Trials {
		t := &s.Trials[ti]
		il := t.Interleave
		side := -1
		switch t.Variant {
		case a:
			side = 0
		case b:
			side = 1
		}
		if il == nil || side < 0 || len(il.Order) < 2 {
			continue
		}
		ri := readerIndex(t, reader)
		if ri < 0 {
			continue
		}
		half := len(il.Order) / 2
		for bi := range il.Blocks {
			blk := &il.Blocks[bi]
			if blk.Reader != ri {
				continue
			}
			k := blockKey{t.Process, il.Group, blk.Seq / half}
			p, seen := blocks[k]
			if !seen {
				order = append(order, k)
			}
			p[side] = blk
			blocks[k] = p
		}
	}
	slices.SortFunc(order, func(x, y blockKey) int {
		return cmp.Or(cmp.Compare(x.process, y.process), cmp.Compare(x.group, y.group), cmp.Compare(x.set, y.set))
	})
	var group *blockKey
	for _, k := range order {
		p := blocks[k]
		if p[0] == nil || p[1] == nil || p[0].Calls == 0 || p[1].Calls == 0 {
			continue
		}
		if group == nil || k.group != group.group || k.process != group.process {
			group = &blockKey{process: k.process, group: k.group}
			out.a, out.b = append(out.a, nil), append(out.b, nil)
			out.na, out.nb, out.la, out.lb = append(out.na, nil), append(out.nb, nil), append(out.la, nil), append(out.lb, nil)
		}
		i := len(out.a) - 1
		out.a[i], out.b[i] = append(out.a[i], p[0].MeanTicks()), append(out.b[i], p[1].MeanTicks())
		na, la, _ := p[0].Controls.Means()
		nb, lb, _ := p[1].Controls.Means()
		out.na[i], out.nb[i] = append(out.na[i], na), append(out.nb[i], nb)
		out.la[i], out.lb[i] = append(out.la[i], la), append(out.lb[i], lb)
	}
	return out
}

// blockKey is a half-cycle of an interleaved group's blocks (one block
// of each variant) in a process.
type blockKey struct{ process, group, set int }

// readerIndex is the index of the reader named name in t (-1: none).
func readerIndex(t *results.Trial, name string) int {
	for i, r := range t.Readers {
		if r.Name == name {
			return i
		}
	}
	return -1
}

// InterleavedChanges is every variant's paired change against the run's
// first variant, reader by reader, where they ran interleaved (none
// otherwise). label names the run.
func InterleavedChanges(s *results.Summary, label string) []Interleaved {
	cols := results.Columns(s)
	perReader := results.PerReader(s)
	var out []Interleaved
	for _, base := range cols {
		if base.Variant != cols[0].Variant {
			continue
		}
		for _, c := range cols {
			if c.Variant == base.Variant || c.Reader != base.Reader {
				continue
			}
			p := groupBlockPairs(s, base.Variant, c.Variant, c.Reader)
			if len(p.a) == 0 {
				continue
			}
			out = append(out, newInterleaved(label, c.Label(perReader, ":"), base.Label(perReader, ":"), p))
		}
	}
	return out
}

// newInterleaved is the paired change of b against a, from their pairs
// by group (round): every pair together, and each round's own change,
// with a note when the rounds disagree beyond their intervals.
func newInterleaved(run, column, baseline string, p blockPairs) Interleaved {
	ga, gb := p.a, p.b
	var a, b []float64
	for i := range ga {
		a, b = append(a, ga[i]...), append(b, gb[i]...)
	}
	ch := stats.Paired(a, b)
	c := Interleaved{Run: run, Column: column, Baseline: baseline, Metric: "mean per-call cost", Pairs: len(a),
		N: ch.N, Method: ch.Method, Notes: ch.Notes, Change: ch, a: a, b: b, ctl: blockControls(p)}
	if len(a) >= 3 {
		d := make([]float64, len(a))
		for i := range a {
			d[i] = math.Log(b[i] / a[i])
		}
		c.Lag1 = ptr(stats.Lag1(d))
	}
	if ch.Defined() {
		c.ChangePct, c.LoPct, c.HiPct = ptr(ch.Point*100), ptr(ch.Lo*100), ptr(ch.Hi*100)
	}
	if len(ga) < 2 {
		return c
	}
	var rounds []stats.Change
	var words []string
	for i := range ga {
		r := stats.Paired(ga[i], gb[i])
		rounds = append(rounds, r)
		if r.Defined() {
			c.RoundsPct = append(c.RoundsPct, r.Point*100)
			words = append(words, fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", r.Point*100, r.Lo*100, r.Hi*100))
		}
	}
	if q, df, p := stats.Heterogeneity(rounds); p < 0.05 {
		c.Notes = append(c.Notes, fmt.Sprintf("the interleaved trials (rounds, processes) disagree beyond their intervals (%s; Cochran's Q %.1f, df %d, p %.3f): "+
			"something a trial (its sockets, its process) or the machine over minutes adds to one variant is larger than the blocks show, and this interval leaves it out: "+
			"compare processes for it (run --processes)", strings.Join(words, ", "), q, df, p))
	}
	return c
}

// interleavedMetrics lists every run's interleaved changes in
// r.Interleaved and, comparing one run of one process, sets the interval
// of every "mean per-call cost" metric whose column and baseline ran
// interleaved from their block pairs (MethodPaired), replacing the t over
// its rounds, with the verdict read against thr by the one rule
// (stats.Decide; setChange). With two processes or more the processes are
// the units (stats.NestedPaired, the rows as judge made them): they hold
// what a process adds to one variant, which no block pair sees. With
// several runs the baselines are other runs' columns, which no block pairs
// with: the intervals stay.
func (r *Result) interleavedMetrics(runs []Run, thr float64) {
	for _, run := range runs {
		if run.Foreign || run.Summary == nil {
			continue
		}
		r.Interleaved = append(r.Interleaved, InterleavedChanges(run.Summary, run.Label)...)
	}
	r.withinRound(runs)
	if len(runs) != 1 || processes(runs[0].Summary) > 1 {
		return
	}
	for _, c := range r.Interleaved {
		if !c.Change.Defined() {
			continue
		}
		col, base := c.Column+"/"+c.Run, c.Baseline+"/"+c.Run
		for i := range r.Metrics {
			m := &r.Metrics[i]
			if m.Name != c.Metric || m.Column != col || m.Baseline != base {
				continue
			}
			verdict := m.Verdict
			m.blocks = &[2][]float64{c.a, c.b}
			m.ctl = c.ctl
			m.ChangePct = ptr(c.Change.Point * 100) // the pairs' estimate, which the interval is about
			setChange(m, c.Change, thr)
			m.Method = MethodPaired
			m.MethodNote += " (change: their geometric mean)"
			if m.invalid { // an invalid trial: nothing can be told, whatever the CI says
				m.Verdict = verdict
			}
		}
	}
}

// withinRound fills the within-round component of the variance split of
// every "mean per-call cost" row whose column ran interleaved: the pooled
// log-SD of its blocks' mean per-call cost about their trial's mean.
func (r *Result) withinRound(runs []Run) {
	for _, run := range runs {
		if run.Foreign || run.Summary == nil {
			continue
		}
		perReader := results.PerReader(run.Summary)
		for _, col := range results.Columns(run.Summary) {
			sd, ok := blockLogSD(col)
			if !ok {
				continue
			}
			label := col.Label(perReader, ":") + "/" + run.Label
			for i := range r.Metrics {
				m := &r.Metrics[i]
				if m.Name != "mean per-call cost" || m.Column != label {
					continue
				}
				if m.Variance == nil {
					m.Variance = &Variance{}
				}
				m.Variance.WithinRoundLogSD = ptr(sd)
			}
		}
	}
}

// blockLogSD is the pooled standard deviation of the log mean per-call
// cost of column c's interleaved blocks about each trial's mean (ok false
// without two blocks in a trial).
func blockLogSD(c results.Column) (float64, bool) {
	var ss float64
	df := 0
	for _, rd := range c.Rounds {
		il := rd.Trial.Interleave
		if il == nil {
			continue
		}
		var logs []float64
		for _, b := range il.Blocks {
			if b.Reader == rd.ReaderPos && b.Calls > 0 && b.SumTicks > 0 {
				logs = append(logs, math.Log(b.MeanTicks()))
			}
		}
		if len(logs) < 2 {
			continue
		}
		var m float64
		for _, x := range logs {
			m += x
		}
		m /= float64(len(logs))
		for _, x := range logs {
			ss += (x - m) * (x - m)
		}
		df += len(logs) - 1
	}
	if df == 0 {
		return 0, false
	}
	return math.Sqrt(ss / float64(df)), true
}

// processes is how many processes s's trials came from.
func processes(s *results.Summary) int {
	var ps []int
	for _, t := range s.Trials {
		if !slices.Contains(ps, t.Process) {
			ps = append(ps, t.Process)
		}
	}
	return len(ps)
}
