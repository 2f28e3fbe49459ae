// Command interleave measures rtload's interleaved variants (scenario
// interleave:, issue 24 item 5) and writes the figures as Markdown:
//
//   - sweep: seed 000's recvfrom vs recvmsg interleaved at each block
//     length (-blocks), -sweep per variant each: the pairs' log-ratio SD,
//     their lag-1 autocorrelation, the CI half-width, and the half-width
//     projected to a 2-minute run (×√(window / 2 min));
//   - seed: the same comparison at -block for -seed per variant (2 × -seed
//     of measured window: 60s gives the 2 minutes of the target,
//     CI half-width ≤ 2%);
//   - aa: -aa interleaved A/A runs (bench/interleave-aa-450.yaml:
//     recvfrom against recvfrom) of -aa-duration per variant, counting the
//     CIs that hold 1 (the target: at least 19 of 20).
//
// Every run is `rtload run … --set interleave=B --duration D --set
// rounds=1 --no-wakeup-log -q --out DIR`, read back from DIR's
// summary.json with compare.BlockPairs and stats.Paired: the same code
// that prints a run's interleaved line. Needs root (SCHED_FIFO). On a
// shared machine give -label "under load": the figures are then the
// machine's, not rtload's.
//
// With -json FILE the seed and A/A figures are also written as JSON
// (interleave.Figures), for bench/cmd/verdicts (make bench-verdicts), which runs
// -only seed,aa and reads them back.
//
//	make bench-bin && bin/interleave -rtload bin/rtload -out bench/INTERLEAVE.md
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rtload/rtload/bench/interleave"
	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/stats"
)

type config struct {
	rtload, out, label, only, keep, from, seedScenario, aaScenario string
	json                                                           string
	blocks                                                         []time.Duration
	block, sweep, seed, aaDuration                                 time.Duration
	aa                                                             int
}

func main() {
	var c config
	var blocks string
	flag.StringVar(&c.rtload, "rtload", "bin/rtload", "rtload binary")
	flag.StringVar(&c.out, "out", "bench/INTERLEAVE.md", "Markdown file to write (- for stdout)")
	flag.StringVar(&c.json, "json", "", "also write the seed and A/A figures to this JSON file (interleave.Figures)")
	flag.StringVar(&c.label, "label", "", `how the machine was, printed in the title (e.g. "under load: other builds and tests running")`)
	flag.StringVar(&c.only, "only", "sweep,seed,aa,switch", "phases to run, comma-separated: sweep, seed, aa, switch")
	flag.StringVar(&c.keep, "keep", "", "keep every run's results directory under this directory (default: a temporary one, removed)")
	flag.StringVar(&c.from, "from", "", "run nothing: recompute the figures from the results directories a -keep run left in this directory")
	flag.StringVar(&c.seedScenario, "scenario", "laight-450", "seed 000's scenario (two interleavable variants)")
	flag.StringVar(&c.aaScenario, "aa-scenario", "bench/interleave-aa-450.yaml", "the A/A scenario (two identical variants)")
	flag.StringVar(&blocks, "blocks", "20ms,50ms,100ms,250ms", "block lengths of the sweep")
	flag.DurationVar(&c.sweep, "sweep", 30*time.Second, "measured time per variant of each sweep run")
	flag.DurationVar(&c.block, "block", 100*time.Millisecond, "block length of the seed and A/A runs")
	flag.DurationVar(&c.seed, "seed", 60*time.Second, "measured time per variant of the seed run (2 variants: twice this of window)")
	flag.IntVar(&c.aa, "aa", 20, "A/A runs")
	flag.DurationVar(&c.aaDuration, "aa-duration", 15*time.Second, "measured time per variant of each A/A run")
	flag.Parse()
	for _, b := range strings.Split(blocks, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(b))
		if err != nil {
			fatal(fmt.Errorf("-blocks: %w", err))
		}
		c.blocks = append(c.blocks, d)
	}
	if err := c.run(); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "interleave:", err)
	os.Exit(1)
}

func (c *config) run() error {
	dir := c.keep
	if c.from != "" {
		dir = c.from
	} else if dir == "" {
		d, err := os.MkdirTemp("", "rtload-interleave-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var md bytes.Buffer
	title := "Interleaved variants (issue 24 item 5)"
	if c.label != "" {
		title += ", " + c.label
	}
	fmt.Fprintf(&md, "# %s\n\n", title)
	fmt.Fprintf(&md, "Written by `bin/interleave %s` on %s (%s, %d CPUs).\n", strings.Join(os.Args[1:], " "), time.Now().UTC().Format(time.RFC3339), kernel(), runtime.NumCPU())
	fmt.Fprintf(&md, "Each row is one `rtload run`; pairs are adjacent ABBA blocks, the interval is stats.Paired "+
		"(t on the pairs' log ratios, batch means when consecutive pairs correlate).\n")
	phases := strings.Split(c.only, ",")
	var figs interleave.Figures
	n := 0
	if slices.Contains(phases, "sweep") {
		fmt.Fprintf(&md, "\n## Block length: seed 000 recvmsg vs recvfrom, %v per variant per block length\n\n", c.sweep)
		md.WriteString(header)
		for _, b := range c.blocks {
			r, err := c.measure(dir, fmt.Sprintf("sweep-%v", b), c.seedScenario, b, c.sweep, "recvfrom", "recvmsg")
			if err != nil {
				return err
			}
			md.WriteString(r.row(fmt.Sprintf("%v", b)))
			n++
		}
		md.WriteString(projectionNote)
	}
	if slices.Contains(phases, "seed") {
		fmt.Fprintf(&md, "\n## Seed 000 in 2 minutes: recvmsg vs recvfrom, %v blocks, %v per variant\n\n", c.block, c.seed)
		md.WriteString(header)
		r, err := c.measure(dir, "seed", c.seedScenario, c.block, c.seed, "recvfrom", "recvmsg")
		if err != nil {
			return err
		}
		md.WriteString(r.row(fmt.Sprintf("%v", c.block)))
		target := "met"
		if !(r.hw <= 0.02) || r.window > 2*time.Minute {
			target = "NOT met"
		}
		fmt.Fprintf(&md, "\nTarget: 95%% CI half-width ≤ 2%% within 2 minutes: %s (±%.2f%% over a %v window).\n", target, 100*r.hw, r.window.Round(time.Second))
		f := r.figure("seed")
		figs.Seed = &f
		n++
	}
	if slices.Contains(phases, "aa") {
		fmt.Fprintf(&md, "\n## Interleaved A/A: recvfrom vs recvfrom, %v blocks, %v per variant, %d runs\n\n", c.block, c.aaDuration, c.aa)
		md.WriteString(header)
		hold := 0
		for i := range c.aa {
			r, err := c.measure(dir, fmt.Sprintf("aa-%02d", i+1), c.aaScenario, c.block, c.aaDuration, "recvfrom-a", "recvfrom-b")
			if err != nil {
				return err
			}
			f := r.figure(fmt.Sprintf("aa-%02d", i+1))
			if f.HoldsOne {
				hold++
			}
			figs.AA = append(figs.AA, f)
			md.WriteString(r.row(fmt.Sprintf("A/A %d", i+1)))
			n++
		}
		target := "met"
		if hold*20 < 19*c.aa {
			target = "NOT met"
		}
		fmt.Fprintf(&md, "\n%d of %d A/A intervals hold 1 (target: at least 19 of 20): %s.\n", hold, c.aa, target)
	}
	if slices.Contains(phases, "switch") {
		fmt.Fprintf(&md, "\n## The block switch: per-call cost of the first tick of each block, %v per variant, wakeup logs on\n\n", c.sweep)
		md.WriteString(switchHeader)
		for _, b := range []time.Duration{c.blocks[0], c.blocks[len(c.blocks)-1]} {
			rows, err := c.switchCost(dir, b)
			if err != nil {
				return err
			}
			md.WriteString(rows)
			n++
		}
		md.WriteString(switchNote)
	}
	if n == 0 {
		return fmt.Errorf("-only %q: no phase (allowed: sweep, seed, aa, switch)", c.only)
	}
	if c.json != "" {
		b, err := json.MarshalIndent(figs, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.json, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if c.out == "-" {
		_, err := os.Stdout.Write(md.Bytes())
		return err
	}
	return os.WriteFile(c.out, md.Bytes(), 0o644)
}

const header = "| run | pairs | change | 95% CI | ± half-width | pair log-ratio SD | lag-1 | SE, 4 s batches / naive | interval over | window | ± projected to 2 min | marks | command |\n" +
	"|---|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---|---|\n"

const projectionNote = "\nmarks: traffic = a trial's traffic was not as specified (the sender fell behind its schedule, under load), " +
	"invalid = the kernel changed what was measured (e.g. the clocksource); both variants of an interleaved trial read the same traffic, " +
	"so its pairs stay paired. SE, 4 s batches / naive: the standard error of the mean log ratio from batches of about 4 s of pairs over the one that takes " +
	"the pairs as independent; above 1, the ratio drifts on the machine's time scale of seconds (stats.Paired's batch means take it in). " +
	"Projected to 2 min: the half-width × √(window / 2 min), as if the run had lasted 2 minutes " +
	"(a t interval narrows as 1/√pairs). The block length to choose is the one with the narrowest projected interval " +
	"whose lag-1 stays low: short blocks give more pairs but noisier ones (fewer ticks each, and neighbours that share more noise).\n"

// figure is r as an interleave.Figure named name.
func (r *result) figure(name string) interleave.Figure {
	f := interleave.Figure{Name: name, Command: r.cmd, Pairs: r.pairs, Method: r.ch.Method, WindowNs: int64(r.window), WallNs: int64(r.wall), Marks: r.marks}
	if r.ch.Defined() {
		p, lo, hi, hw := 100*r.ch.Point, 100*r.ch.Lo, 100*r.ch.Hi, 100*r.hw
		f.ChangePct, f.LoPct, f.HiPct, f.HalfWidthPct = &p, &lo, &hi, &hw
		f.HoldsOne = r.ch.Lo <= 0 && r.ch.Hi >= 0
	}
	return f
}

// result is one run's paired change.
type result struct {
	cmd          string
	ch           stats.Change
	pairs        int
	sd, lag1, hw float64
	// seInflation is the standard error of the mean log ratio from
	// batches of about 4 s of pairs over the naive one (pairs taken as
	// independent): how much the ratio drifts on the machine's time scale.
	seInflation float64
	window      time.Duration
	wall        time.Duration // summary.json start to end
	projected   float64
	// marks are the run's trial marks: "traffic" (not as specified),
	// "invalid" (the kernel changed what was measured).
	marks string
}

// measure runs scenario with interleave block for dur per variant and
// returns the paired change of b against a.
func (c *config) measure(dir, name, scenario string, block, dur time.Duration, a, b string) (*result, error) {
	s, argv, err := c.rtloadRun(dir, name, scenario, block, dur, "--no-wakeup-log")
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, name)
	av, bv := compare.BlockPairs(s, a, b, firstReader(s))
	if len(av) < 2 {
		return nil, fmt.Errorf("%s: %d block pairs of %s and %s", out, len(av), a, b)
	}
	r := &result{cmd: strings.Join(argv[1:len(argv)-2], " "), ch: stats.Paired(av, bv), pairs: len(av)}
	d := make([]float64, len(av))
	for i := range av {
		d[i] = math.Log(bv[i] / av[i])
	}
	_, v := meanVar(d)
	r.sd, r.lag1, r.hw = math.Sqrt(v), stats.Lag1(d), r.ch.HalfWidth()
	var marks []string
	for i := range s.Trials {
		t := &s.Trials[i]
		if t.Interleave != nil {
			r.window = time.Duration(t.Interleave.WindowNs)
		}
		if t.Marked(results.MarkTraffic) && !slices.Contains(marks, "traffic") {
			marks = append(marks, "traffic")
		}
		if !t.Valid() && !slices.Contains(marks, "invalid") {
			marks = append(marks, "invalid")
		}
	}
	r.marks = strings.Join(marks, ", ")
	r.wall = s.End.Sub(s.Start)
	r.projected = r.hw * math.Sqrt(r.window.Seconds()/120)
	k := max(1, int(math.Round(float64(4*time.Second)/float64(2*block))))
	if nb := len(d) / k; nb >= 3 {
		bm := make([]float64, nb)
		for j := range nb {
			bm[j], _ = meanVar(d[j*k : (j+1)*k])
		}
		_, vb := meanVar(bm)
		r.seInflation = math.Sqrt(vb/float64(nb)) / math.Sqrt(v/float64(len(d)))
	}
	return r, nil
}

func (r *result) row(name string) string {
	return fmt.Sprintf("| %s | %d | %+.2f%% | [%+.2f%%, %+.2f%%] | %.2f%% | %.4f | %.2f | %.2f | %s | %v | %.2f%% | %s | `%s` |\n",
		name, r.pairs, 100*r.ch.Point, 100*r.ch.Lo, 100*r.ch.Hi, 100*r.hw, r.sd, r.lag1, r.seInflation, r.ch.Method, r.window.Round(time.Second), 100*r.projected, r.marks, r.cmd)
}

func firstReader(s *results.Summary) string {
	for _, t := range s.Trials {
		for _, r := range t.Readers {
			return r.Name
		}
	}
	return ""
}

func meanVar(x []float64) (m, v float64) {
	for _, a := range x {
		m += a
	}
	m /= float64(len(x))
	for _, a := range x {
		v += (a - m) * (a - m)
	}
	return m, v / float64(len(x)-1)
}

// rtloadRun runs scenario interleaved in blocks of block for dur per
// variant into dir/name (with -from, only reads what is there) and reads
// its summary back; argv is the command.
func (c *config) rtloadRun(dir, name, scenario string, block, dur time.Duration, extra ...string) (*results.Summary, []string, error) {
	out := filepath.Join(dir, name)
	argv := append([]string{c.rtload, "run", scenario, "--set", "interleave=" + block.String(), "--duration", dur.String(),
		"--set", "rounds=1"}, extra...)
	argv = append(argv, "-q", "--out", out)
	if c.from == "" {
		fmt.Fprintf(os.Stderr, "interleave: %s\n", strings.Join(argv, " "))
		if err := run(dur*3+2*time.Minute, argv...); err != nil {
			return nil, nil, err
		}
	}
	s, err := store.ReadSummary(out)
	return s, argv, err
}

const switchHeader = "| block | variant | ticks per block | ns/call, first tick of a block | ns/call, later ticks | first tick's extra | extra per call over the block | command |\n" +
	"|---|---|---:|---:|---:|---:|---:|---|\n"

const switchNote = "\nns/call is each tick's drain time over its calls (clock reads included), from the wakeup logs; the first tick " +
	"of a block runs right after the switch to another receiver and record set. \"Extra per call over the block\" is what " +
	"the switch adds to the block's mean: the first tick's extra over the ticks of a block. It is the same kind of cost for " +
	"both variants; the ratio row says how much it moves their ratio. When a block holds a whole traffic period of ticks " +
	"(20 ms blocks of 10 ms ticks, messages every 20 ms), its first tick always reads the same half of the sockets, and its extra " +
	"is that half's as much as the switch's.\n"

// switchCost runs seed 000 interleaved in blocks of b with wakeup logs
// and compares the per-call drain time of the first tick of each block
// (right after the switch) with the later ticks', per variant, and the
// variants' ratio with and without the first ticks.
func (c *config) switchCost(dir string, b time.Duration) (string, error) {
	name := fmt.Sprintf("switch-%v", b)
	s, argv, err := c.rtloadRun(dir, name, c.seedScenario, b, c.sweep)
	if err != nil {
		return "", err
	}
	type acc struct{ firstNs, firstCalls, restNs, restCalls float64 }
	per := map[string]*acc{}
	var variants []string
	var all [][]record.Wakeup
	for _, t := range s.Trials {
		if t.Interleave == nil || len(t.Readers) == 0 {
			continue
		}
		rows, _, err := wakelog.ReaderWakeups(filepath.Join(dir, name), t.Readers[0])
		if err != nil {
			return "", err
		}
		variants = append(variants, t.Variant)
		all = append(all, rows)
	}
	if len(all) < 2 || len(all[0]) < 2 {
		return "", fmt.Errorf("%s: no wakeup logs of two variants", name)
	}
	from, period := all[0][0].DeadlineNs, int64(0)
	for _, rows := range all {
		from = min(from, rows[0].DeadlineNs)
		if len(rows) > 1 && rows[1].Tick > rows[0].Tick {
			period = (rows[1].DeadlineNs - rows[0].DeadlineNs) / int64(rows[1].Tick-rows[0].Tick)
		}
	}
	if period <= 0 {
		return "", fmt.Errorf("%s: no tick period in the wakeup logs", name)
	}
	for i, rows := range all {
		a := &acc{}
		per[variants[i]] = a
		for _, w := range rows {
			if w.Calls == 0 {
				continue
			}
			if (w.DeadlineNs-from)%int64(b) < period {
				a.firstNs, a.firstCalls = a.firstNs+float64(w.DrainNs), a.firstCalls+float64(w.Calls)
			} else {
				a.restNs, a.restCalls = a.restNs+float64(w.DrainNs), a.restCalls+float64(w.Calls)
			}
		}
	}
	ticks := float64(b) / float64(period)
	var out strings.Builder
	for _, v := range variants {
		a := per[v]
		first, rest := a.firstNs/a.firstCalls, a.restNs/a.restCalls
		extra := first/rest - 1
		fmt.Fprintf(&out, "| %v | %s | %.0f | %.1f | %.1f | %+.1f%% | %+.2f%% | `%s` |\n", b, v, ticks, first, rest, 100*extra, 100*extra/ticks,
			strings.Join(argv[1:len(argv)-2], " "))
	}
	if len(variants) == 2 {
		x, y := per[variants[0]], per[variants[1]]
		withFirst := ((y.firstNs + y.restNs) / (y.firstCalls + y.restCalls)) / ((x.firstNs + x.restNs) / (x.firstCalls + x.restCalls))
		without := (y.restNs / y.restCalls) / (x.restNs / x.restCalls)
		fmt.Fprintf(&out, "| %v | ratio %s/%s | | | | | all ticks %+.2f%%, later ticks only %+.2f%% | |\n", b, variants[1], variants[0], 100*(withFirst-1), 100*(without-1))
	}
	return out.String(), nil
}

// run runs argv with a timeout (SIGTERM, then SIGKILL 10 s later).
func run(timeout time.Duration, argv ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() != 0 {
			return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(errb.String()))
		}
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return nil
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "kernel unknown"
	}
	return "Linux " + strings.TrimSpace(string(b))
}
