package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rtload/rtload/stats"
)

// Confidence is the two-sided level of every interval compare prints
// (stats.Level); a gate over several metrics or looks reads them at a
// higher one (Judge, stats.FamilyLevel, stats.Sequential).
const Confidence = stats.Level

// Interval is a Metric's change B/A − 1 with its confidence interval, in
// %, and where its samples came from (stats.Change).
type Interval struct {
	// Level is the two-sided confidence level (0.95).
	Level float64 `json:"level"`
	// PointPct is the change in %, [LowPct, HighPct] its interval (nil:
	// not defined; HighPct nil and LowPct set: no upper bound, a rate over
	// no baseline event).
	PointPct *float64 `json:"point_pct,omitempty"`
	LowPct   *float64 `json:"low_pct,omitempty"`
	HighPct  *float64 `json:"high_pct,omitempty"`
	// N names the samples ("6 processes × 8 rounds"); Unit the independent
	// unit the degrees of freedom come from ("process", "round", "event")
	// and Units their number on each side (baseline, column).
	N     string `json:"n"`
	Unit  string `json:"unit"`
	Units [2]int `json:"units"`
	// DF and SELog: degrees of freedom and standard error of the log
	// ratio (nil for a rate ratio).
	DF     *float64 `json:"df,omitempty"`
	SELog  *float64 `json:"se_log,omitempty"`
	Method string   `json:"method"`
	Notes  []string `json:"notes,omitempty"`
}

// Variance is the variance split of one column's per-round samples, as
// log-scale standard deviations (0.10 ≈ ±10% from unit to unit):
// stats.Components.
type Variance struct {
	// BetweenProcessesLogSD, BetweenRoundsLogSD, WithinRoundLogSD: nil
	// when the samples cannot tell (one process; one round per process;
	// no interleaved blocks).
	BetweenProcessesLogSD *float64 `json:"between_processes_log_sd,omitempty"`
	BetweenRoundsLogSD    *float64 `json:"between_rounds_log_sd,omitempty"`
	WithinRoundLogSD      *float64 `json:"within_round_log_sd,omitempty"`
	// Processes and Rounds (mean per process) the split is from.
	Processes int     `json:"processes"`
	Rounds    float64 `json:"rounds"`
	// Lag1 is the lag-1 autocorrelation of consecutive rounds within a
	// process (nil with too few); Lag1High says it is high enough that
	// rounds are not independent samples.
	Lag1      *float64 `json:"lag1,omitempty"`
	Lag1Pairs int      `json:"lag1_pairs"`
	Lag1High  bool     `json:"lag1_high,omitempty"`
	// RoundsPerProcess is Kalibera & Jones' choice of rounds per process
	// with a process costing as much as a round (0: unknown).
	RoundsPerProcess int `json:"rounds_per_process,omitempty"`
	// BetweenSessionsLogSD is the log-SD between sessions (boots) of a
	// column pooled over ≥ 2 sessions (stats.SessionComponents; nil
	// otherwise), Sessions their number and ProcessesPerSession the mean
	// processes of one.
	BetweenSessionsLogSD *float64 `json:"between_sessions_log_sd,omitempty"`
	Sessions             int      `json:"sessions,omitempty"`
	ProcessesPerSession  float64  `json:"processes_per_session,omitempty"`
}

// groupsOf splits a sample's per-round values by process, in the order
// of ids (each a process number); a process with no value has an empty
// group.
func groupsOf(s sample, ids []int) [][]float64 { return groupValues(s.rounds, s.procs, ids) }

// groupValues is groupsOf for values parallel to a sample's rounds (its
// controls), procs the process of each.
func groupValues(vals []float64, procs, ids []int) [][]float64 {
	g := make([][]float64, len(ids))
	for i, v := range vals {
		p := 0
		if i < len(procs) {
			p = procs[i]
		}
		if k := slices.Index(ids, p); k >= 0 {
			g[k] = append(g[k], v)
		}
	}
	return g
}

// processIDs are the distinct processes of the samples, sorted.
func processIDs(ss ...sample) []int {
	var ids []int
	for _, s := range ss {
		for i := range s.rounds {
			p := 0
			if i < len(s.procs) {
				p = s.procs[i]
			}
			if !slices.Contains(ids, p) {
				ids = append(ids, p)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// varianceOf is the variance split of s's own samples; nil for a rate or
// values a log cannot take.
func varianceOf(s sample) *Variance {
	if s.rate != nil || len(s.rounds) < 2 {
		return nil
	}
	v := stats.Components(groupsOf(s, processIDs(s)))
	if math.IsNaN(v.BetweenRounds) && math.IsNaN(v.BetweenProcesses) {
		return nil
	}
	out := &Variance{Processes: v.Processes, Rounds: v.Rounds, Lag1Pairs: v.Lag1Pairs,
		BetweenProcessesLogSD: sqrtPtr(v.BetweenProcesses), BetweenRoundsLogSD: sqrtPtr(v.BetweenRounds),
		WithinRoundLogSD: sqrtPtr(v.WithinRound), Lag1: ptr(v.Lag1), Lag1High: stats.Lag1High(v.Lag1, v.Lag1Pairs),
		RoundsPerProcess: v.RoundsPerProcess(1, 1)}
	return out
}

func sqrtPtr(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return ptr(math.Sqrt(v))
}

// changeOf is the Change of m's column against its baseline at level.
func (m *Metric) changeOf(level float64) stats.Change {
	switch {
	case m.ra != nil && m.rb != nil:
		ca, ta, cb, tb := rateUnits(m.ra, m.rb)
		return stats.RateRatioUnits(ca, ta, cb, tb, level)
	case m.blocks != nil:
		return stats.PairedAt(m.blocks[0], m.blocks[1], level)
	case m.sa != nil && m.paired:
		return stats.SessionsPairedAt(m.sa, m.sb, level)
	case m.sa != nil:
		return stats.SessionsAt(m.sa, m.sb, level)
	case m.paired:
		return stats.NestedPairedAt(m.a, m.b, level)
	}
	return stats.NestedAt(m.a, m.b, level)
}

// judge fills the change, interval, method and verdict of m at Confidence
// against threshold thr: b is the baseline, x the column, paired when
// they ran in the same processes (two variants of one run); sb and sx
// map the processes of each to their sessions when it is a sessions
// directory (nil otherwise): with ≥ 2 sessions on either side the session
// is the top level (stats.Sessions), a side without sessions one session.
func judge(m *Metric, b, x sample, sb, sx map[int]int, paired bool, thr float64) {
	if b.value != 0 {
		m.ChangePct = ptr((x.value - b.value) / b.value * 100)
	}
	m.Diff = ptr(x.value - b.value)
	if b.rate != nil && x.rate != nil {
		m.ra, m.rb = b.rate, x.rate
	} else {
		ida, idb := processIDs(b, x), processIDs(b, x)
		if !paired {
			// Two runs: their processes are distinct whatever they are numbered.
			ida, idb = processIDs(b), processIDs(x)
		}
		m.a, m.b = groupsOf(b, ida), groupsOf(x, idb)
		m.paired = paired
		m.ctl = controlsOf(b, x, ida, idb)
		m.pool(b, x, sb, sx, ida, idb)
	}
	setChange(m, m.changeOf(Confidence), thr)
	m.lagNote()
}

// lagNote adds a note to m's interval when its unit is the round and the
// rounds of either side are not independent (stats.Lag1High): the
// interval is then too narrow.
func (m *Metric) lagNote() {
	if m.Interval == nil || m.Interval.Unit != "round" {
		return
	}
	for _, g := range [][][]float64{m.a, m.b} {
		v := stats.Components(g)
		if stats.Lag1High(v.Lag1, v.Lag1Pairs) {
			n := fmt.Sprintf("lag-1 autocorrelation of consecutive rounds %.2f: rounds are not independent samples and the interval is too narrow (run --processes ≥ 2)", v.Lag1)
			m.Interval.Notes = append(m.Interval.Notes, n)
			m.MethodNote += "; " + n
			return
		}
	}
}

// setChange fills m's interval, CI, method, verdict, smallest detectable
// change and samples still needed from c.
func setChange(m *Metric, c stats.Change, thr float64) {
	m.Interval = intervalOf(c)
	m.Method = MethodT
	if c.Unit == "event" {
		m.Method = MethodRate
	}
	var parts []string
	if c.Method != "" {
		p := c.Method
		if c.N != "" {
			p += ", n = " + c.N
		}
		if !math.IsNaN(c.DF) && !math.IsInf(c.DF, 0) {
			p += fmt.Sprintf(", df %.1f", c.DF)
		}
		parts = append(parts, p)
	}
	m.MethodNote = strings.Join(append(parts, c.Notes...), "; ")
	m.CILow, m.CIHigh = nil, nil
	if !c.Defined() {
		m.Method, m.Verdict = MethodNone, VerdictUndecided
		return
	}
	base := math.Abs(m.BaselineValue)
	m.CILow, m.CIHigh = ptr(c.Lo*base), ptr(c.Hi*base)
	m.Verdict = stats.Decide(c, thr, m.HigherIsBetter).String()
	m.MinDetectablePct, m.MoreUnits = nil, nil
	if c.Unit != "event" {
		m.MinDetectablePct = ptr(stats.MinDetectable(c, thr, stats.DefaultPower) * 100)
		if m.Verdict == VerdictUndecided {
			if k, ok := stats.MoreSamplesNeeded(c, thr, m.HigherIsBetter, stats.DefaultPower, stats.GrowBoth); ok {
				m.MoreUnits = &k
			}
		}
	}
}

// intervalOf is c in compare's JSON terms.
func intervalOf(c stats.Change) *Interval {
	iv := &Interval{Level: c.Level, N: c.N, Unit: c.Unit, Units: c.Units, Method: c.Method, Notes: c.Notes,
		DF: ptr(c.DF), SELog: ptr(c.SELog)}
	iv.PointPct, iv.LowPct, iv.HighPct = ptr(c.Point*100), ptr(c.Lo*100), ptr(c.Hi*100)
	return iv
}

// Rate is an event rate per hour with its exact 95% Poisson interval and
// the mean time between events (stats.PoissonRate).
type Rate struct {
	Count    uint64  `json:"count"`
	Hours    float64 `json:"hours"`
	PerH     float64 `json:"per_hour"`
	LowPerH  float64 `json:"low_per_hour"`
	HighPerH float64 `json:"high_per_hour"`
	// MTBF in hours and its interval; nil (+Inf) without an event.
	MTBFH     *float64 `json:"mtbf_h,omitempty"`
	MTBFLowH  *float64 `json:"mtbf_low_h,omitempty"`
	MTBFHighH *float64 `json:"mtbf_high_h,omitempty"`
}

// rateOf is s's rate, nil unless s counts events.
func rateOf(s sample) *Rate {
	if s.rate == nil || !(s.rate.hours > 0) {
		return nil
	}
	r := stats.PoissonRate(s.rate.count, s.rate.hours, Confidence)
	m, lo, hi := r.MTBF()
	return &Rate{Count: r.Count, Hours: r.Exposure, PerH: r.Rate, LowPerH: r.Lo, HighPerH: r.Hi, MTBFH: ptr(m), MTBFLowH: ptr(lo), MTBFHighH: ptr(hi)}
}
