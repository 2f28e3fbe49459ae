package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/view"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/stats"
)

// Sizing says what a check against a baseline can see, in two forms:
// Sizing, after a run, how many processes a baseline needs to find +5%
// or +10%; and Detectable, before a check pays for anything (and after a
// run's first process), the smallest change a check of this size can
// find on this machine, at the gate's level, raw and adjusted on the
// null-syscall drift control where the readers timed it.

// SizingChanges are the changes Sizing says a baseline needs processes
// to detect: compare's, which the sessions' sizing uses too.
var SizingChanges = compare.SizingChanges

// Sizing says, for every column's primary metric of a run (a one-run
// compare.Result), how many processes per side a check against it needs
// to find each of SizingChanges slower beyond threshold with 80% power at
// the noise the run measured (stats.UnitsToDetect, at the level of a
// default check: Pocock over looks looks, Bonferroni over the primary
// metrics), and Kalibera & Jones' rounds per process. One line per
// column.
func Sizing(r *compare.Result, threshold float64, looks int) []string {
	prim := r.Primary()
	m := 0
	for i := range r.Metrics {
		if prim[i] {
			m++
		}
	}
	level := stats.Stop{Decide: true, MaxLooks: looks, Metrics: max(m, 1)}.Level()
	var out []string
	for i, x := range r.Metrics {
		v := x.Variance
		if !prim[i] || v == nil || v.BetweenRoundsLogSD == nil && v.BetweenProcessesLogSD == nil {
			continue
		}
		if v.BetweenProcessesLogSD == nil {
			out = append(out, fmt.Sprintf("sizing: %s %s: 1 process, so the noise between processes (often most of a check's) was not measured: no sizing; a baseline for rtload check wants rtload run --processes 10 (or more), which prints how many a check needs",
				x.Column, x.Key()))
			continue
		}
		rounds := max(int(math.Round(v.Rounds)), 1)
		unitVar := unitVarOf(v, rounds)
		var need []string
		for _, c := range SizingChanges {
			if n, ok := stats.UnitsToDetect(unitVar, c, threshold, level, stats.DefaultPower); ok {
				need = append(need, fmt.Sprintf("%d to find %+.0f%%", n, c*100))
			} else {
				need = append(need, fmt.Sprintf("none can find %+.0f%%", c*100))
			}
		}
		l := fmt.Sprintf("sizing: %s %s: log-SD %s between processes, %s between rounds of %d: a check needs about %s, processes per side (slower beyond +%s%%, 80%% power, %d looks)",
			x.Column, x.Key(), logSD(v.BetweenProcessesLogSD, "not measured: 1 process"), logSD(v.BetweenRoundsLogSD, "1 round"), rounds,
			strings.Join(need, ", "), view.Pct(threshold*100), looks)
		if v.RoundsPerProcess > 0 {
			l += fmt.Sprintf("; Kalibera & Jones: %d %s per process", v.RoundsPerProcess, plural(v.RoundsPerProcess, "round", "rounds"))
		}
		out = append(out, l)
	}
	return out
}

// unitVarOf is the variance of one process's mean log value from v, a
// process of rounds rounds: between processes plus between rounds over
// rounds (a part not measured counts 0).
func unitVarOf(v *compare.Variance, rounds int) float64 {
	bp, br := 0.0, 0.0
	if v.BetweenProcessesLogSD != nil {
		bp = *v.BetweenProcessesLogSD
	}
	if v.BetweenRoundsLogSD != nil {
		br = *v.BetweenRoundsLogSD
	}
	return bp*bp + br*br/float64(max(rounds, 1))
}

func logSD(p *float64, why string) string {
	if p == nil {
		return "- (" + why + ")"
	}
	return fmt.Sprintf("%.3f", *p)
}

// Detectable is what a check of a given size can see on this machine:
// for each column's primary metric, the smallest true slowdown it finds
// slower beyond the threshold with 80% power at its last look, from the
// baseline's noise (each side's processes as noisy as the baseline's),
// raw and adjusted on the null-syscall control. `rtload check` says it
// before any new process runs; `run --processes` after its first process
// (from its rounds only: a floor) and in its JSON.
type Detectable struct {
	// BaselineProcesses and NewProcesses are the sides' processes: the
	// baseline's (clean ones: Report.BaselineDropped) and those the budget
	// allows at PerProcessNs a process (0: not timed, as many as the
	// baseline's), at most MaxProcesses.
	BaselineProcesses int   `json:"baseline_processes"`
	NewProcesses      int   `json:"new_processes"`
	PerProcessNs      int64 `json:"per_process_ns,omitempty"`
	BudgetNs          int64 `json:"budget_ns"`
	// Looks and Metrics are the looks planned and the metrics each
	// judges, Level their per-metric level (Pocock over the looks,
	// Bonferroni over the metrics: as the check will read them).
	Looks   int     `json:"looks"`
	Metrics int     `json:"metrics"`
	Level   float64 `json:"level"`
	// ThresholdPct is the gate's threshold (%) and Power the chance of
	// finding the change (80%).
	ThresholdPct float64 `json:"threshold_pct"`
	Power        float64 `json:"power"`
	// From says whose noise it is ("the baseline's 10 processes × 2
	// rounds"); Floor that it is a run's first process's rounds only,
	// without the noise between processes: the smallest change is at least
	// this.
	From    string             `json:"from"`
	Floor   bool               `json:"floor,omitempty"`
	Columns []DetectableMetric `json:"columns"`
}

// DetectableMetric is one column's primary metric in a Detectable.
type DetectableMetric struct {
	Column string `json:"column"`
	Metric string `json:"metric"`
	// ProcessLogSD is the log-SD of one process's mean (between processes
	// and between rounds over the rounds); SmallestPct the smallest change
	// found (%), nil with Note saying why there is none.
	ProcessLogSD *float64 `json:"process_log_sd,omitempty"`
	SmallestPct  *float64 `json:"smallest_pct,omitempty"`
	Note         string   `json:"note,omitempty"`
	// Adjusted is the same on the per-call cost regression-adjusted on
	// the null syscall (CUPED on the logs: stats.Adjust's θ), nil without
	// controls.
	Adjusted *DetectableAdjusted `json:"adjusted,omitempty"`
}

// DetectableAdjusted is a column's smallest detectable change with its
// per-call cost adjusted on a drift control.
type DetectableAdjusted struct {
	Control      string   `json:"control"`
	Theta        float64  `json:"theta"`
	R            float64  `json:"r"`
	ProcessLogSD float64  `json:"process_log_sd"`
	SmallestPct  *float64 `json:"smallest_pct,omitempty"`
}

// sizeCheck is the Detectable of a check of the run base (label, its
// processes baseline) against newProcesses new ones over looks looks
// (its metrics, level and looks as plan and gated fix them), from base's
// noise; from says whose, floor that it lacks the noise between
// processes (one process: the rounds' only).
func sizeCheck(base compare.Run, opt Options, baseline, looks int, budget, perProcess time.Duration, from string, floor bool) *Detectable {
	q := Sequential{BudgetNs: int64(budget)}
	q.plan(looks, perProcess)
	d := &Detectable{BaselineProcesses: baseline, NewProcesses: q.LookProcesses[len(q.LookProcesses)-1], PerProcessNs: int64(perProcess),
		BudgetNs: int64(budget), Looks: q.MaxLooks, ThresholdPct: opt.threshold() * 100, Power: stats.DefaultPower, From: from, Floor: floor,
		Columns: []DetectableMetric{}}
	if perProcess <= 0 {
		d.NewProcesses = max(baseline, MinLookProcesses)
	}
	other := base
	other.Label += " "
	two, err := compare.Headlines([]compare.Run{base, other}, opt.CompareOptions())
	if err != nil {
		return d
	}
	judged, _, err := gated(two.Metrics, opt.Metrics)
	if err != nil {
		return d
	}
	d.Metrics = max(len(judged), 1)
	d.Level = stats.Stop{Decide: true, MaxLooks: d.Looks, Metrics: d.Metrics}.Level()
	one, err := compare.Headlines([]compare.Run{base}, opt.CompareOptions())
	if err != nil {
		return d
	}
	k := opt.Control.control()
	adj := adjustedNoise(base.Summary, k)
	prim := one.Primary()
	for i, m := range one.Metrics {
		if !prim[i] {
			continue
		}
		group, _, _ := strings.Cut(m.Column, "/"+base.Label)
		x := DetectableMetric{Column: group, Metric: m.Key()}
		v := m.Variance
		switch {
		case v == nil:
			x.Note = "no variance: a single round"
		case v.BetweenProcessesLogSD == nil && !floor:
			x.Note = "1 process: the noise between processes was not measured"
		default:
			uv := unitVarOf(v, int(math.Round(v.Rounds)))
			x.ProcessLogSD = ptr(math.Sqrt(uv))
			x.SmallestPct = smallest(uv, d.BaselineProcesses, d.NewProcesses, 0, opt.threshold(), d.Level)
		}
		if a, ok := adj[group]; ok && m.Name == "mean per-call cost" && x.ProcessLogSD != nil {
			x.Adjusted = &DetectableAdjusted{Control: string(k), Theta: a.theta, R: a.r, ProcessLogSD: math.Sqrt(a.unitVar),
				SmallestPct: smallest(a.unitVar, d.BaselineProcesses, d.NewProcesses, 1, opt.threshold(), d.Level)}
		}
		d.Columns = append(d.Columns, x)
	}
	return d
}

// smallest is the smallest slowdown (%) that a comparison of nA against
// nB processes, each process's mean log value of variance unitVar, finds
// slower beyond thr at level with 80% power (stats.MinDetectable on
// Welch's standard error and degrees of freedom, less lost for an
// estimated coefficient); nil when it has no degrees of freedom.
func smallest(unitVar float64, nA, nB, lost int, thr, level float64) *float64 {
	if math.IsNaN(unitVar) || nA < 1 || nB < 1 {
		return nil
	}
	sa, sb := unitVar/float64(nA), unitVar/float64(nB)
	df := float64(nA + nB - 2)
	if sa+sb > 0 {
		df = (sa + sb) * (sa + sb) / (sa*sa/float64(max(nA-1, 1)) + sb*sb/float64(max(nB-1, 1)))
	}
	df -= float64(lost)
	if df < 1 {
		return nil
	}
	return ptr(100 * stats.MinDetectable(stats.Change{SELog: math.Sqrt(sa + sb), DF: df, Level: level}, thr, stats.DefaultPower))
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// adjustment is one column's noise with its per-call cost adjusted on a
// drift control.
type adjustment struct {
	theta, r, unitVar float64
}

// controlMean is reader r's mean of control k in clock ticks (0: none).
func controlMean(r *results.Reader, k compare.Control) float64 {
	null, loop, ok := r.ControlMeans()
	switch {
	case !ok:
		return 0
	case k == compare.ControlLoop:
		return loop
	case k == compare.ControlRecv:
		return r.Controls.RecvMeanTicks()
	}
	return null
}

// adjustedNoise is, per column group of s (as compare labels them), the
// variance of one process's mean log per-call cost once each round is
// adjusted on its reader's mean cost of control k (Y − θ(X − X̄) on the
// logs, θ = cov/var of the rounds' deviations from the run's mean, as
// stats.Adjust estimates it within one side); none for k "" (--control
// none), and a group is missing when a round lacks its control or there
// are fewer than 4 rounds.
func adjustedNoise(s *results.Summary, k compare.Control) map[string]adjustment {
	out := map[string]adjustment{}
	if k == "" {
		return out
	}
	per := results.PerReader(s)
	for _, c := range results.Columns(s) {
		var ly, lx []float64
		var procs []int
		for _, rd := range c.Rounds {
			y := rd.Reader.PerCall.All.Mean()
			x := controlMean(rd.Reader, k)
			if rd.Reader.PerCall.All.Total == 0 || !(x > 0) || !(y > 0) {
				ly = nil
				break
			}
			ly, lx, procs = append(ly, math.Log(y)), append(lx, math.Log(x)), append(procs, rd.Trial.Process)
		}
		if len(ly) < 4 {
			continue
		}
		my, mx := mean(ly), mean(lx)
		var sxy, sxx, syy float64
		for i := range ly {
			dy, dx := ly[i]-my, lx[i]-mx
			sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
		}
		if !(sxx > 0) || !(syy > 0) {
			continue
		}
		a := adjustment{theta: sxy / sxx, r: sxy / math.Sqrt(sxx*syy)}
		ids := slices.Compact(slices.Sorted(slices.Values(procs)))
		groups := make([][]float64, len(ids))
		for i := range ly {
			k := slices.Index(ids, procs[i])
			groups[k] = append(groups[k], math.Exp(ly[i]-a.theta*(lx[i]-mx)))
		}
		v := stats.Components(groups)
		a.unitVar = v.UnitVar(int(math.Round(v.Rounds)))
		out[c.Label(per, ":")] = a
	}
	return out
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Line says d in one line: "sizing: a baseline of 10 processes against up
// to 15 new ones (the 5m budget at 20s a process): a check can find
// recvfrom +12.1% (adjusted on the null syscall +6.3%, r 0.86), …
// (mean per-call cost, 80% power, 99.25% per metric and look)".
func (d *Detectable) Line(who string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: a baseline of %d %s against up to %d new %s", who, d.BaselineProcesses, plural(d.BaselineProcesses, "process", "processes"),
		d.NewProcesses, plural(d.NewProcesses, "process", "processes"))
	if d.PerProcessNs > 0 {
		fmt.Fprintf(&b, " (the %v budget at %v a process)", time.Duration(d.BudgetNs), time.Duration(d.PerProcessNs).Round(time.Second))
	} else {
		b.WriteString(" (not timed: as many as the baseline's)")
	}
	atLeast := ""
	if d.Floor {
		atLeast = "at best "
	}
	fmt.Fprintf(&b, ", from %s: the smallest slowdown a check finds is %s", d.From, atLeast)
	var cols []string
	metric := ""
	for _, c := range d.Columns {
		if metric == "" {
			metric = c.Metric
		}
		s := c.Column + " "
		switch {
		case c.SmallestPct != nil:
			s += fmt.Sprintf("%+.1f%%", *c.SmallestPct)
		case c.Note != "":
			s += "unknown (" + c.Note + ")"
		default:
			s += "beyond reach"
		}
		if a := c.Adjusted; a != nil {
			if a.SmallestPct != nil {
				s += fmt.Sprintf(" (adjusted on the %s %+.1f%%, r %.2f)", a.Control, *a.SmallestPct, a.R)
			} else {
				s += fmt.Sprintf(" (adjusted on the %s: beyond reach, r %.2f)", a.Control, a.R)
			}
		}
		cols = append(cols, s)
	}
	if len(cols) == 0 {
		cols = append(cols, "unknown (no column to judge)")
	}
	b.WriteString(strings.Join(cols, ", "))
	fmt.Fprintf(&b, " (%s; slower beyond +%s%% with %.0f%% power, %s per metric and look: %d %s over %d %s)", metric, view.Pct(d.ThresholdPct),
		d.Power*100, view.LevelPct(d.Level), d.Metrics, plural(d.Metrics, "metric", "metrics"), d.Looks, plural(d.Looks, "look", "looks"))
	return b.String()
}

// SizeRun is what a default check (DefaultBudget, DefaultLooks, opt's
// gate) against run r will see once r has baseline processes, each
// taking perProcess: from r's noise so far, its processes the machine
// disturbed left out (nil when none is left). After r's first process (r
// holds one) it has only that process's rounds, so it is a floor (Floor:
// the noise between processes, often most of a check's, is not in it),
// and says so; `run --processes` prints it then, before the rest of the
// baseline is paid for, and again from the whole run in its JSON.
func SizeRun(r compare.Run, baseline int, perProcess time.Duration, opt Options) *Detectable {
	r.Summary, _ = dropDisturbed(r.Summary, r.Summary.ProcessCount()) // as a check will judge it
	if len(r.Summary.Trials) == 0 {
		return nil
	}
	n := r.Summary.ProcessCount()
	from := fmt.Sprintf("the run's %d %s", n, plural(n, "process", "processes"))
	floor := n == 1 && baseline > 1
	if floor {
		rounds := 0
		for _, c := range results.Columns(r.Summary) {
			rounds = max(rounds, len(c.Rounds))
		}
		from = fmt.Sprintf("process 1's %d %s only (the noise between processes is not measured yet: often most of a check's)", rounds, plural(rounds, "round", "rounds"))
	}
	return sizeCheck(r, opt, baseline, DefaultLooks, DefaultBudget, perProcess, from, floor)
}
