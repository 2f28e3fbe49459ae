package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// point is one 1 s interval record: the natural logs of its mean per-call
// cost (all calls), mean null-syscall cost and mean user-loop cost, and of
// their medians (p50), all in clock ticks.
type point struct {
	t          time.Time
	fromNs     int64
	y, x, z    float64
	ym, xm, zm float64
	// q holds every statistic of the matrix (stats), by name.
	q map[string]float64
}

// stats are the per-interval statistics the matrix crosses: the per-call
// cost's (Y) against each control's (X).
var (
	yStats = []string{"per-call mean", "per-call p50", "per-call p90", "data-call mean", "data-call p50", "data-call IQM",
		"EAGAIN-call mean", "EAGAIN-call p50", "EAGAIN-call IQM"}
	xStats = []string{"null mean", "null p50", "null p90", "loop mean", "loop p90", "ping mean", "ping p50", "chase mean", "chase p50",
		"recv data mean", "recv data p50", "recv EAGAIN mean", "recv EAGAIN p50"}
)

// readPoints reads DIR/results/intervals.jsonl: every record with calls
// and controls, the first (it starts with the window) and the last (a
// partial interval after the threads stopped) left out.
func readPoints(dir string) ([]point, error) {
	recs, _, err := store.ReadJSONL[results.Interval](filepath.Join(dir, "results", results.IntervalsFile))
	if err != nil {
		return nil, err
	}
	var pts []point
	for i, r := range recs {
		c := r.Controls
		if i == 0 || i == len(recs)-1 || r.PerCallTicks.Count == 0 || c == nil || c.NullSyscall.Count == 0 || c.UserLoop.Count == 0 {
			continue
		}
		lg := func(v uint64) float64 { return math.Log(float64(v)) }
		opt := func(t *results.TickStats, mean bool) float64 {
			switch {
			case t == nil || t.Count == 0:
				return math.NaN()
			case mean:
				return math.Log(t.MeanTicks)
			}
			return lg(t.P50Ticks)
		}
		pts = append(pts, point{t: r.Time, fromNs: r.FromNs,
			y: math.Log(r.PerCallTicks.MeanTicks), x: math.Log(c.NullSyscall.MeanTicks), z: math.Log(c.UserLoop.MeanTicks),
			ym: lg(r.PerCallTicks.P50Ticks), xm: lg(c.NullSyscall.P50Ticks), zm: lg(c.UserLoop.P50Ticks),
			q: map[string]float64{"per-call mean": math.Log(r.PerCallTicks.MeanTicks), "per-call p50": lg(r.PerCallTicks.P50Ticks),
				"per-call p90": lg(r.PerCallTicks.P90Ticks), "null mean": math.Log(c.NullSyscall.MeanTicks), "null p50": lg(c.NullSyscall.P50Ticks),
				"null p90": lg(c.NullSyscall.P90Ticks), "loop mean": math.Log(c.UserLoop.MeanTicks), "loop p90": lg(c.UserLoop.P90Ticks),
				"data-call mean": math.Log(r.DataMeanTicks), "EAGAIN-call mean": math.Log(r.EAGAINMeanTicks),
				"data-call p50": math.Log(r.DataP50Ticks), "data-call IQM": math.Log(r.DataIQMTicks),
				"EAGAIN-call p50": math.Log(r.EAGAINP50Ticks), "EAGAIN-call IQM": math.Log(r.EAGAINIQMTicks),
				"ping mean": opt(c.CacheLine, true), "ping p50": opt(c.CacheLine, false),
				"chase mean": opt(c.MemChase, true), "chase p50": opt(c.MemChase, false),
				"recv data mean": opt(c.RecvData, true), "recv data p50": opt(c.RecvData, false),
				"recv EAGAIN mean": opt(c.RecvEAGAIN, true), "recv EAGAIN p50": opt(c.RecvEAGAIN, false)}})
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("%s: no interval records with calls and controls", dir)
	}
	return pts, nil
}

// window is the mean of the logs over one window's intervals.
type window struct {
	start      time.Time
	n          int
	y, x, z    float64
	ym, xm, zm float64
	q          map[string]float64
}

// windows groups pts into consecutive windows of w by their first
// deadline, keeping those with at least 90% of their intervals.
func windows(pts []point, w time.Duration) []window {
	t0 := pts[0].fromNs
	var out []window
	var cur *window
	curK := int64(-1)
	flush := func() {
		if cur != nil && float64(cur.n) >= 0.9*w.Seconds() {
			n := float64(cur.n)
			cur.y, cur.x, cur.z, cur.ym, cur.xm, cur.zm = cur.y/n, cur.x/n, cur.z/n, cur.ym/n, cur.xm/n, cur.zm/n
			for k := range cur.q {
				cur.q[k] /= n
			}
			out = append(out, *cur)
		}
	}
	for _, p := range pts {
		k := (p.fromNs - t0) / int64(w)
		if k != curK {
			flush()
			cur, curK = &window{start: p.t, q: map[string]float64{}}, k
		}
		cur.n++
		for k, v := range p.q {
			cur.q[k] += v
		}
		cur.y, cur.x, cur.z, cur.ym, cur.xm, cur.zm = cur.y+p.y, cur.x+p.x, cur.z+p.z, cur.ym+p.ym, cur.xm+p.xm, cur.zm+p.zm
	}
	flush()
	return out
}

// minVar is the variance of a control's log window means below which it
// counts as constant (a log-SD of 0.1%: a median stuck on one clock
// tick value, as the user loop's is): a slope on it is noise.
const minVar = 1e-6

// fit is a least-squares slope of y on x and their correlation.
type fit struct{ beta, r float64 }

func ols(x, y []float64) fit {
	vx := stat.Variance(x, nil)
	if !(vx > minVar) {
		return fit{beta: 0, r: math.NaN()}
	}
	return fit{beta: stat.Covariance(x, y, nil) / vx, r: stat.Correlation(x, y, nil)}
}

// adjust is y − β(x − x̄).
func adjust(y, x []float64, beta float64) []float64 {
	mx := stat.Mean(x, nil)
	out := make([]float64, len(y))
	for i := range y {
		out[i] = y[i] - beta*(x[i]-mx)
	}
	return out
}

// fit2 is the least-squares slopes of y on x and z together (centred);
// a constant control gets slope 0 (the one-control fit on the other).
func fit2(x, z, y []float64) (bx, bz float64) {
	switch {
	case !(stat.Variance(z, nil) > minVar):
		return ols(x, y).beta, 0
	case !(stat.Variance(x, nil) > minVar):
		return 0, ols(z, y).beta
	}
	n := len(y)
	a := mat.NewDense(n, 2, nil)
	b := mat.NewVecDense(n, nil)
	mx, mz, my := stat.Mean(x, nil), stat.Mean(z, nil), stat.Mean(y, nil)
	for i := range n {
		a.Set(i, 0, x[i]-mx)
		a.Set(i, 1, z[i]-mz)
		b.SetVec(i, y[i]-my)
	}
	var s mat.VecDense
	if err := s.SolveVec(a, b); err != nil {
		return math.NaN(), math.NaN()
	}
	return s.AtVec(0), s.AtVec(1)
}

func adjust2(y, x, z []float64, bx, bz float64) []float64 {
	return adjust(adjust(y, x, bx), z, bz)
}

func diff(y, x []float64) []float64 {
	out := make([]float64, len(y))
	for i := range y {
		out[i] = y[i] - x[i]
	}
	return out
}

// rangeRatio is exp(max − min) − 1 of logs: the spread of the windows as
// a ratio (0.32 = the slowest window 32% above the fastest).
func rangeRatio(v []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return math.Expm1(hi - lo)
}

// row is one line of a result table.
type row struct {
	name    string
	sd, rng float64
	beta, r float64 // NaN: not a regression
	beta2   float64 // the user loop's slope in a two-control fit
}

// analysis is one set of series (means or medians) analysed.
type analysis struct {
	all, held []row
	// verdict: the held-out adjustment on the null syscall against the
	// raw log-SD of the same half.
	raw2, adj2 float64
	perSecond  fit
}

// analyse computes the rows for y, x, z (per window) and the 1 s points'
// correlation (py, px).
func analyse(y, x, z, py, px []float64) analysis {
	nan := math.NaN()
	var a analysis
	fx, fz := ols(x, y), ols(z, y)
	bx, bz := fit2(x, z, y)
	a.all = []row{
		{"raw per-call cost", stat.StdDev(y, nil), rangeRatio(y), nan, nan, nan},
		{"÷ null syscall", stat.StdDev(diff(y, x), nil), rangeRatio(diff(y, x)), nan, nan, nan},
		{"adjusted on the null syscall", stat.StdDev(adjust(y, x, fx.beta), nil), rangeRatio(adjust(y, x, fx.beta)), fx.beta, fx.r, nan},
		{"÷ user loop", stat.StdDev(diff(y, z), nil), rangeRatio(diff(y, z)), nan, nan, nan},
		{"adjusted on the user loop", stat.StdDev(adjust(y, z, fz.beta), nil), rangeRatio(adjust(y, z, fz.beta)), fz.beta, fz.r, nan},
		{"adjusted on both", stat.StdDev(adjust2(y, x, z, bx, bz), nil), rangeRatio(adjust2(y, x, z, bx, bz)), bx, nan, bz},
	}
	h := len(y) / 2
	y1, x1, z1, y2, x2, z2 := y[:h], x[:h], z[:h], y[h:], x[h:], z[h:]
	hx, hz := ols(x1, y1), ols(z1, y1)
	hbx, hbz := fit2(x1, z1, y1)
	a.raw2 = stat.StdDev(y2, nil)
	a.adj2 = stat.StdDev(adjust(y2, x2, hx.beta), nil)
	a.held = []row{
		{"raw per-call cost, first half", stat.StdDev(y1, nil), rangeRatio(y1), nan, nan, nan},
		{"raw per-call cost, second half", a.raw2, rangeRatio(y2), nan, nan, nan},
		{"÷ null syscall, second half", stat.StdDev(diff(y2, x2), nil), rangeRatio(diff(y2, x2)), nan, nan, nan},
		{"adjusted on the null syscall (β of the first half)", a.adj2, rangeRatio(adjust(y2, x2, hx.beta)), hx.beta, hx.r, nan},
		{"adjusted on the user loop (β of the first half)", stat.StdDev(adjust(y2, z2, hz.beta), nil), rangeRatio(adjust(y2, z2, hz.beta)), hz.beta, hz.r, nan},
		{"adjusted on both (β's of the first half)", stat.StdDev(adjust2(y2, x2, z2, hbx, hbz), nil), rangeRatio(adjust2(y2, x2, z2, hbx, hbz)), hbx, nan, hbz},
	}
	a.perSecond = ols(px, py)
	return a
}

// analyseTo analyses bench directory dir and writes the Markdown to md
// (and its summary to stdout).
func analyseTo(dir, md string, w time.Duration) error {
	pts, err := readPoints(dir)
	if err != nil {
		return err
	}
	ws := windows(pts, w)
	if len(ws) < 4 {
		return fmt.Errorf("%s: %d windows of %v: too few to analyse (want at least 4; the issue's line wants 30)", dir, len(ws), w)
	}
	col := func(f func(w window) float64) []float64 {
		out := make([]float64, len(ws))
		for i, x := range ws {
			out[i] = f(x)
		}
		return out
	}
	pcol := func(f func(p point) float64) []float64 {
		out := make([]float64, len(pts))
		for i, p := range pts {
			out[i] = f(p)
		}
		return out
	}
	means := analyse(col(func(w window) float64 { return w.y }), col(func(w window) float64 { return w.x }), col(func(w window) float64 { return w.z }),
		pcol(func(p point) float64 { return p.y }), pcol(func(p point) float64 { return p.x }))
	medians := analyse(col(func(w window) float64 { return w.ym }), col(func(w window) float64 { return w.xm }), col(func(w window) float64 { return w.zm }),
		pcol(func(p point) float64 { return p.ym }), pcol(func(p point) float64 { return p.xm }))
	var clk results.ClockInfo
	if s, err := store.ReadSummary(filepath.Join(dir, "results")); err == nil {
		clk = s.Clock
	}
	text := render(dir, w, pts, ws, means, medians, clk)
	fmt.Print(text)
	if md == "" {
		return nil
	}
	return os.WriteFile(md, []byte(text), 0o644)
}

// render is the Markdown section of one bench directory.
func render(dir string, w time.Duration, pts []point, ws []window, means, medians analysis, clk results.ClockInfo) string {
	var b strings.Builder
	sched := readCSV(filepath.Join(dir, "schedule.csv"))
	load := readCSV(filepath.Join(dir, "load.csv"))
	cmd, _ := os.ReadFile(filepath.Join(dir, "command.txt"))
	first, last := pts[0].t, pts[len(pts)-1].t
	fmt.Fprintf(&b, "# Drift controls: does a control timed in the same ticks see the machine's drift? (issue 31)\n\n")
	fmt.Fprintf(&b, "Written by `make bench-drift` (`bin/drift`; `-from DIR` renders again) from `%s`, measured %s to %s UTC (%s of 1 s interval records, %d windows of %v).\n\n",
		dir, first.UTC().Format("2006-01-02 15:04"), last.UTC().Format("15:04"), last.Sub(first).Round(time.Minute), len(ws), w)
	fmt.Fprintf(&b, "Machine: %s, %d CPUs, kernel %s; clock %s (%.4g GHz). The machine is shared and was not quiet: other helpers' tests and runs came and went beside the bench's own busy loops.\n\n",
		cpuModel(), runtime.NumCPU(), kernel(), clk.Kind, clk.Hz/1e9)
	fmt.Fprintf(&b, "Command: `%s`, while the bench started and stopped busy loops (child processes, SCHED_OTHER, unpinned: CPU spinners, and memory streamers copying 64 MiB buffers) in phases: %s. Load average (1 min) during the run: %s.\n\n",
		strings.TrimSpace(string(cmd)), scheduleText(sched), loadText(load))
	b.WriteString("Each 1 s interval record gives the mean per-call cost of every recv call (data and EAGAIN), the mean of its 64×100 null syscalls (`getppid`) and of its 64×100 user-loop runs. Each series is the log of those means, averaged over 60 s windows; the table gives the log-SD of the window means (≈ the relative SD), the range of the windows (max/min − 1), and for a regression adjustment Y − β(X − X̄) its slope β and the correlation r of the window means. \"β of the first half\" is fitted on the first half of the windows and applied to the second, as the issue's table does (the line asks for that: an adjustment that is not fitted to the data it judges).\n\n")
	writeTable(&b, "Means, all windows", means.all)
	writeTable(&b, "Means, held out: β fitted on the first half, applied to the second", means.held)
	ratio := means.adj2 / means.raw2
	verdict := "**met**"
	if !(ratio <= 1.0/3) {
		verdict = "**not met**"
	}
	fmt.Fprintf(&b, "**Done-when line**: adjusted log-SD %.4f against raw %.4f over the second half: %.2f of raw (target ≤ 1/3): %s. β = %.2f, r = %.2f (first half's windows); over all windows β = %.2f, r = %.2f, adjusted %.4f against raw %.4f (%.2f). At the 1 s level (%d intervals) the null syscall's β = %.2f, r = %.2f.\n\n",
		means.adj2, means.raw2, ratio, verdict, means.held[3].beta, means.held[3].r, means.all[2].beta, means.all[2].r, means.all[2].sd, means.all[0].sd, means.all[2].sd/means.all[0].sd,
		len(pts), means.perSecond.beta, means.perSecond.r)
	writeTable(&b, "Medians (p50 of each interval), all windows", medians.all)
	writeTable(&b, "Medians, held out", medians.held)
	writeMatrix(&b, ws)
	b.WriteString("### The windows\n\n| window start (UTC) | busy loops | load1 | per-call ns | null syscall ns | user loop ns | adjusted per-call ns (β of all) |\n|---|---|---:|---:|---:|---:|---:|\n")
	ns := func(lg float64) string {
		v := math.Exp(lg)
		if clk.Hz > 0 {
			return strconv.FormatFloat(clk.Ns(v), 'f', 1, 64)
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + " ticks"
	}
	ys, xs := make([]float64, len(ws)), make([]float64, len(ws))
	for i, x := range ws {
		ys[i], xs[i] = x.y, x.x
	}
	adj := adjust(ys, xs, means.all[2].beta)
	for i, x := range ws {
		mid := x.start.Add(w / 2)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", x.start.UTC().Format("15:04:05"), busyAt(sched, mid), loadAt(load, x.start, x.start.Add(w)),
			ns(x.y), ns(x.x), ns(x.z), ns(adj[i]))
	}
	b.WriteString("\n")
	return b.String()
}

// writeMatrix crosses each statistic of the per-call cost with each of the
// controls': per pair the correlation r of the window means, and the
// held-out log-SD (β of the first half applied to the second) as a share
// of the raw second half's.
func writeMatrix(b *strings.Builder, ws []window) {
	b.WriteString("### Which statistics track each other\n\nPer pair: r of the 60 s means over all windows / held-out adjusted log-SD as a share of raw (β of the first half on the second; ≤ 0.33 meets the line).\n\n| per-call cost \\ control |")
	for _, x := range xStats {
		fmt.Fprintf(b, " %s |", x)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(xStats)) + "\n")
	col := func(k string) []float64 {
		out := make([]float64, len(ws))
		for i, w := range ws {
			out[i] = w.q[k]
		}
		return out
	}
	h := len(ws) / 2
	for _, yk := range yStats {
		y := col(yk)
		fmt.Fprintf(b, "| %s |", yk)
		if math.IsInf(stat.Mean(y, nil), 0) || math.IsNaN(stat.Mean(y, nil)) {
			b.WriteString(strings.Repeat(" – (not recorded) |", len(xStats)) + "\n")
			continue
		}
		for _, xk := range xStats {
			x := col(xk)
			if mx := stat.Mean(x, nil); math.IsNaN(mx) || math.IsInf(mx, 0) {
				b.WriteString(" – (not timed) |")
				continue
			}
			f, f1 := ols(x, y), ols(x[:h], y[:h])
			held := stat.StdDev(adjust(y[h:], x[h:], f1.beta), nil) / stat.StdDev(y[h:], nil)
			if math.IsNaN(f.r) {
				b.WriteString(" – (constant) |")
				continue
			}
			fmt.Fprintf(b, " %.2f / %.2f |", f.r, held)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func writeTable(b *strings.Builder, title string, rows []row) {
	fmt.Fprintf(b, "### %s\n\n| series | log-SD of 60 s means | range max/min | β | r |\n|---|---:|---:|---:|---:|\n", title)
	for _, r := range rows {
		beta, corr := "–", "–"
		if !math.IsNaN(r.beta) {
			beta = fmt.Sprintf("%.2f", r.beta)
			if !math.IsNaN(r.beta2) {
				beta = fmt.Sprintf("%.2f (null), %.2f (loop)", r.beta, r.beta2)
			}
		}
		if !math.IsNaN(r.r) {
			corr = fmt.Sprintf("%.2f", r.r)
		}
		fmt.Fprintf(b, "| %s | %.4f | %.1f%% | %s | %s |\n", r.name, r.sd, 100*r.rng, beta, corr)
	}
	b.WriteString("\n")
}

// readCSV reads a CSV file of the bench directory, header left out (nil
// when missing).
func readCSV(path string) [][]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	recs, _ := csv.NewReader(bufio.NewReader(f)).ReadAll()
	if len(recs) > 0 {
		recs = recs[1:]
	}
	return recs
}

// scheduleText summarises schedule.csv: each phase's busy loops and length.
func scheduleText(sched [][]string) string {
	var parts []string
	for _, r := range sched {
		if len(r) < 4 {
			continue
		}
		t0, _ := time.Parse(time.RFC3339Nano, r[0])
		t1, _ := time.Parse(time.RFC3339Nano, r[1])
		parts = append(parts, fmt.Sprintf("%s %s", busyText(r[2], r[3]), t1.Sub(t0).Round(time.Second)))
	}
	if len(parts) == 0 {
		return "(no schedule.csv)"
	}
	return strings.Join(parts, ", ")
}

func busyText(spin, mem string) string {
	if spin == "0" && mem == "0" {
		return "none"
	}
	var p []string
	if spin != "0" {
		p = append(p, spin+" spin")
	}
	if mem != "0" {
		p = append(p, mem+" mem")
	}
	return strings.Join(p, "+")
}

// busyAt is the busy loops of the phase running at t.
func busyAt(sched [][]string, t time.Time) string {
	for _, r := range sched {
		if len(r) < 4 {
			continue
		}
		t0, _ := time.Parse(time.RFC3339Nano, r[0])
		t1, _ := time.Parse(time.RFC3339Nano, r[1])
		if !t.Before(t0) && t.Before(t1) {
			return busyText(r[2], r[3])
		}
	}
	return "?"
}

// loadText is the load average's min, mean and max over the run.
func loadText(load [][]string) string {
	var v []float64
	for _, r := range load {
		if len(r) >= 2 {
			if x, err := strconv.ParseFloat(r[1], 64); err == nil {
				v = append(v, x)
			}
		}
	}
	if len(v) == 0 {
		return "(no load.csv)"
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return fmt.Sprintf("%.2f–%.2f, mean %.2f (%d samples, 5 s apart)", lo, hi, stat.Mean(v, nil), len(v))
}

// loadAt is the mean 1-minute load sampled in [t0, t1).
func loadAt(load [][]string, t0, t1 time.Time) string {
	var v []float64
	for _, r := range load {
		if len(r) < 2 {
			continue
		}
		t, err := time.Parse(time.RFC3339, r[0])
		if err != nil || t.Before(t0) || !t.Before(t1) {
			continue
		}
		if x, err := strconv.ParseFloat(r[1], 64); err == nil {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", stat.Mean(v, nil))
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}
