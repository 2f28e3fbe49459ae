// Command benchrun is `make bench`: it runs rtload against its baselines on
// this machine, both sides in one invocation, and writes BENCHMARKS.md with
// ratios, their confidence intervals, targets, verdicts and the command of
// every row (issues 7 and 13).
//
//  1. per-call fidelity: bench/cmd/fidelity, rtload's drain against
//     bench/drain450.c's loop inside one process, on one SCHED_FIFO thread
//     and the same 450 sockets, in mirrored ABBA blocks of 100 ms, quiet
//     and with 5 spin threads; intervals from the paired block ratios
//     (stats.Paired)
//     1b. (opt-in, -only percall) the same across processes: drain450 vs
//     rtload laight-450 in adaptive A/B pairs of whole runs
//  2. wakeup latency: cyclictest vs rtload timer-only, quiet and with spin
//     noise, in adaptive A/B pairs of ≥ 5000 wakeups per side
//     2b. the wakeup split: bench/cmd/wakesplit compare (tracefs), quiet and spin
//  3. overhead of measuring: go test -bench (BenchmarkOverhead, BenchmarkClock, BenchmarkRecord)
//  4. sender accuracy and 5. scale curve: bench/scale.yaml at 450 … 10,000 sockets
//  6. method matrix: bench/methods-450.yaml (recvfrom, recvmsg, recvmmsg 8 and 32)
//
// Comparison 1 runs a fixed time per condition (-fidelity-run, 2 min);
// comparisons 1b and 2 add pairs until the 95% CI of every targeted ratio
// is within ±3% (stats, the one statistics package) or their time cap is reached; the caps keep
// the whole run under 15 minutes (-quick: about 3). -only runs some
// sections. It needs root (SCHED_FIFO, mlockall), 2 CPUs, cyclictest and
// gcc; every child process runs under a timeout and is ended on return.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

type config struct {
	rtload, drain, wakesplit, work string
	fidelity                       string        // bin/fidelity (bench/cmd/fidelity)
	fidelityRun, fidelityBlock     time.Duration // per condition; block length
	fidelitySyscall                string        // fidelity -c-syscall: glibc (drain450's loop) or raw
	out, label                     string
	baseline                       string // another rtload binary as side A of comparisons 1 and 2
	keep                           bool
	only                           []string
	precision                      float64       // max relative CI half-width, e.g. 0.03
	perCallRun, wakeRun            float64       // seconds measured per run
	perCallCap, wakeCap            time.Duration // per comparison (quiet, spin each)
	minWakeups                     int
	warmupPairs                    int  // per comparison, run first and not counted
	splitPairs, splitSecs          int  // wakesplit compare -pairs, -seconds
	rxqOvfl                        bool // drain450 -o: SO_RXQ_OVFL on its sockets (rtload sets none)
	counts                         []int
	quick                          bool
}

// section is one part of the document, selectable with -only. An optIn
// section runs only when -only names it.
type section struct {
	name, title string
	f           func(config, *doc) error
	optIn       bool
}

var sections = []section{
	{name: "fidelity", title: "1 per-call fidelity (in-process ABBA)", f: fidelitySection},
	{name: "percall", title: "1b per-call cost across processes", f: perCall, optIn: true},
	{name: "wakeup", title: "2 wakeup latency", f: wakeup},
	{name: "wakesplit", title: "2b wakeup split (tracepoints)", f: wakeSplit},
	{name: "overhead", title: "3 overhead of measuring", f: overhead},
	{name: "scale", title: "4+5 sender accuracy and scale curve", f: scale},
	{name: "methods", title: "6 method matrix", f: methods},
}

// selected reports whether section s runs: named by -only, or with no
// -only every section that is not opt-in. An A/B of two rtload builds
// (-baseline) runs the cross-process per-call comparison in place of the
// in-process one, which compiles this tree's drain in.
func (c config) selected(s section) bool {
	if c.only != nil {
		return slices.Contains(c.only, s.name)
	}
	if c.baseline != "" && (s.name == "percall" || s.name == "fidelity") {
		return s.name == "percall"
	}
	return !s.optIn
}

func parseFlags() config {
	var c config
	var only string
	flag.StringVar(&c.rtload, "rtload", "bin/rtload", "rtload binary")
	flag.StringVar(&c.drain, "drain", "bin/drain450", "drain450 binary (bench/drain450.c)")
	flag.StringVar(&c.fidelity, "fidelity", "bin/fidelity", "fidelity binary (bench/cmd/fidelity, cgo)")
	flag.DurationVar(&c.fidelityRun, "fidelity-run", 120*time.Second, "per-call fidelity: counted time of each condition (quiet, spin)")
	flag.DurationVar(&c.fidelityBlock, "fidelity-block", 100*time.Millisecond, "per-call fidelity: block length (a whole number of 10 ms ticks)")
	flag.StringVar(&c.fidelitySyscall, "fidelity-c-syscall", "glibc", "per-call fidelity: the C side's recv calls through glibc (drain450's loop) or raw (a SYSCALL instruction, as rtload; a diagnostic)")
	flag.StringVar(&c.baseline, "baseline", "", "A/B two rtload builds: this binary is side A of the per-call and wakeup comparisons instead of drain450 and cyclictest (for a hot-path change)")
	flag.StringVar(&c.wakesplit, "wakesplit", "bin/wakesplit", "wakesplit binary (bench/cmd/wakesplit)")
	flag.StringVar(&c.work, "work", "", "directory for raw results, kept (default: a temp dir, removed)")
	flag.StringVar(&c.out, "out", "BENCHMARKS.md", "markdown file to write")
	flag.StringVar(&c.label, "label", "", "a note printed at the top of the document (e.g. \"preliminary, under load\")")
	flag.StringVar(&only, "only", "", "comma-separated sections to run ("+joinSections()+"); default all but the opt-in ones")
	flag.BoolVar(&c.quick, "quick", false, "short runs and caps (about 3 min) and fewer socket counts")
	flag.Float64Var(&c.precision, "precision", 0.03, "stop adding pairs once every targeted ratio's 95% CI is within ± this fraction")
	flag.DurationVar(&c.perCallCap, "percall-cap", 120*time.Second, "time cap of each cross-process per-call comparison (quiet, spin)")
	flag.DurationVar(&c.wakeCap, "wakeup-cap", 150*time.Second, "time cap of each wakeup comparison (quiet, spin)")
	flag.Float64Var(&c.perCallRun, "percall-run", 3, "seconds measured per method per per-call run")
	flag.Float64Var(&c.wakeRun, "wakeup-run", 10, "seconds (÷ 10 ms = wakeups) per wakeup run")
	flag.IntVar(&c.warmupPairs, "warmup-pairs", 1, "pairs run first in each per-call and wakeup comparison, reported and not counted")
	flag.IntVar(&c.minWakeups, "min-wakeups", 5000, "wakeups per side a wakeup comparison collects before it may stop")
	flag.IntVar(&c.splitPairs, "split-pairs", 2, "wakesplit: traced runs per program and mode")
	flag.IntVar(&c.splitSecs, "split-seconds", 5, "wakesplit: seconds per traced run")
	flag.BoolVar(&c.rxqOvfl, "rxq-ovfl", false, "set SO_RXQ_OVFL on drain450's sockets (rtload does not: drops come from SO_MEMINFO)")
	flag.Parse()
	c.counts = []int{450, 1000, 2000, 5000, 10000}
	if c.quick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		def := func(name string, f func()) {
			if !set[name] {
				f()
			}
		}
		def("fidelity-run", func() { c.fidelityRun = 20 * time.Second })
		def("percall-cap", func() { c.perCallCap = 25 * time.Second })
		def("wakeup-cap", func() { c.wakeCap = 20 * time.Second })
		def("percall-run", func() { c.perCallRun = 1 })
		def("wakeup-run", func() { c.wakeRun = 3 })
		def("min-wakeups", func() { c.minWakeups = 0 })
		def("warmup-pairs", func() { c.warmupPairs = 0 })
		def("split-pairs", func() { c.splitPairs = 1 })
		def("split-seconds", func() { c.splitSecs = 3 })
		c.counts = []int{450, 2000, 10000}
	}
	if only != "" {
		c.only = strings.Split(only, ",")
		for _, s := range c.only {
			if !slices.ContainsFunc(sections, func(x section) bool { return x.name == s }) {
				fatal(fmt.Errorf("-only %s: unknown section (allowed: %s)", s, joinSections()))
			}
		}
	}
	return c
}

// with returns c with another rtload binary.
func (c config) with(rtload string) config {
	c.rtload = rtload
	return c
}

func main() {
	c := parseFlags()
	c.keep = c.work != ""
	if c.keep {
		if err := os.MkdirAll(c.work, 0o755); err != nil {
			fatal(err)
		}
	} else {
		d, err := os.MkdirTemp("", "rtload-bench-")
		if err != nil {
			fatal(err)
		}
		c.work = d
		defer os.RemoveAll(d)
	}
	// 10,000 sockets and their senders need more than the usual 1024 fds.
	var lim syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: setrlimit RLIMIT_NOFILE: %v (10,000 sockets may fail)\n", err)
	}
	start := time.Now()
	d := &doc{}
	d.intro(c)
	for _, s := range sections {
		if !c.selected(s) {
			if s.name == "fidelity" && c.baseline != "" && c.only == nil {
				fidelitySkipped(d)
			}
			continue
		}
		t0 := time.Now()
		fmt.Fprintf(os.Stderr, "benchrun: %s …\n", s.title)
		if err := s.f(c, d); err != nil {
			fmt.Fprintf(os.Stderr, "benchrun: %s: %v\n", s.title, err)
			d.p("\n**%s failed:** `%v`\n", s.title, err)
		}
		fmt.Fprintf(os.Stderr, "benchrun: %s done in %s\n", s.title, time.Since(t0).Round(time.Second))
	}
	d.gapsSection()
	raw := "removed after the run; pass -work DIR to keep them"
	if c.keep {
		raw = "`" + c.work + "`"
	}
	d.p("\n---\nWhole run (`%s`): %s on %s (%d CPUs). Raw results: %s.\n",
		strings.Join(os.Args[1:], " "), time.Since(start).Round(time.Second), hostInfo(), runtime.NumCPU(), raw)
	if err := os.WriteFile(c.out, d.b.Bytes(), 0o644); err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "benchrun: wrote %s in %s\n", c.out, time.Since(start).Round(time.Second))
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
	os.Exit(1)
}
