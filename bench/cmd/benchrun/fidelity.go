package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rtload/rtload/bench/fidelity"
	"github.com/rtload/rtload/stats"
)

// fidelityArgv is bin/fidelity's command for a condition (spin threads).
func fidelityArgv(c config, spin int) []string {
	return []string{c.fidelity, "-duration", c.fidelityRun.String(), "-block", c.fidelityBlock.String(),
		"-spin", fmt.Sprint(spin), "-sockets", "450", "-methods", "recvfrom,recvmsg", "-cpu", "1", "-priority", "80",
		"-c-syscall", c.fidelitySyscall, "-summary=false"}
}

// fidelityRun runs one condition and reads its blocks; with -work the raw
// output is kept as fidelity-<label>.jsonl.
func fidelityRun(c config, label string, spin int) (*fidelity.Run, []string, error) {
	argv := fidelityArgv(c, spin)
	out, _, err := run(c.fidelityRun+3*time.Minute, argv...)
	if err != nil {
		return nil, argv, err
	}
	if c.keep {
		if err := os.WriteFile(filepath.Join(c.work, "fidelity-"+label+".jsonl"), out, 0o644); err != nil {
			return nil, argv, err
		}
	}
	r, err := fidelity.Read(bytes.NewReader(out))
	if err != nil {
		return nil, argv, err
	}
	if r.End == nil {
		return nil, argv, fmt.Errorf("%s: no end line (the run did not finish)", shell(argv))
	}
	return r, argv, nil
}

// fidelitySection is section 1: bench/cmd/fidelity quiet and with 5 spin
// threads.
func fidelitySection(c config, d *doc) error {
	type cond struct {
		label string
		spin  int
		run   *fidelity.Run
		argv  []string
		rows  []fidelity.Row
	}
	conds := []*cond{{label: "quiet"}, {label: "spin", spin: 5}}
	for _, k := range conds {
		fmt.Fprintf(os.Stderr, "benchrun:   fidelity %s (%s)\n", k.label, c.fidelityRun)
		var err error
		if k.run, k.argv, err = fidelityRun(c, k.label, k.spin); err != nil {
			return err
		}
		k.rows = fidelity.Rows(k.run)
	}
	h := conds[0].run.Header
	d.h2("1. Per-call fidelity: rtload's drain against the C loop in one process (seed 000, 450 sockets)")
	d.p("`bench/cmd/fidelity` (a bench-only cgo binary, `make bench-tools` → `bin/fidelity`; not part of `bin/rtload`) runs both sides **in one process, on one SCHED_FIFO %d reader thread pinned to CPU %d** (mlockall, /dev/cpu_dma_latency held at 0), over **the same %d loopback sockets** (opened by `net/udp` as rtload opens them, 256 KiB SO_RCVBUFFORCE), fed by drain450's paced sendmmsg sender (1 msg/socket/%s, spread evenly; 5 SCHED_OTHER spin threads in the spin rows). ",
		h.Priority, h.CPU, h.Sockets, time.Duration(h.IntervalNs))
	d.p("The thread alternates blocks of %d ticks of %s (%s) on one absolute tick grid. **A, the C loop**: `bench/drainloop.h`, drain450.c's reader loop compiled in through cgo, one cgo call per block: inside it the loop sleeps to each deadline (clock_nanosleep TIMER_ABSTIME) and drains every socket until EAGAIN, each glibc recv call between two inline `rdtscp; lfence` reads, storing each call's ticks. The cgo transition, and any Go scheduler work it brings, happens once before the block's first sleep and once after its last drain: never inside a timed call, never between a wakeup and its drain. ",
		h.BlockTicks, time.Duration(h.PeriodNs), h.BlockDuration())
	d.p("**B, rtload**: its own reader loop, `probe.Loop` running `probe.Drain` (the measured path itself: rt.Ticker's sleep, the TSC loop around `udp.Receiver.Recv`'s raw system call, samples flushed into a `record.Set` after each tick), one `Loop.Run` per block. Both read the same TSC. ")
	d.p("The first %d tick(s) of every block run and are not recorded, so the switch of side does not weigh on the block; the first %d cycle(s) are warm-up. A cycle is C_f R_f C_m R_m | R_m C_m R_f C_f (f recvfrom, m recvmsg; mirrored, which side and method go first drawn per cycle from a fixed seed): each half-cycle is one pair of every comparison, so the machine's state, which moves a whole 3 s run by ±30%% from one run to the next here (bench/GAPS.md), is shared by both blocks of every pair. ",
		h.SettleTicks, h.Warmup)
	d.p("Per block, the recorded calls' (data and EAGAIN) mean, p50 and p99 in TSC ticks come from `record.HDR` on both sides (rtload's own histogram; the C side's ticks recorded into the same class after the block). **Intervals: %.0f%% CI of the geometric mean of the per-pair ratios B/A, Student's t on their logarithms** (`stats.Paired`, the statistics core every verdict uses: consecutive pairs averaged into at most 30 batch means, because the ratio itself drifts on the machine's scale of seconds, and merged further while the batch means' lag-1 autocorrelation is above 2/√batches; the method column names the batches, the lag-1 column is that of the pairs). A half with a block that missed a tick (the reader lost its CPU for a period or more) is left out and counted below. Each condition runs a fixed %s (no stopping when the answer looks good). ",
		100*fidelity.Level, c.fidelityRun)
	d.p("Targets (rtload must not inflate the per-call cost; issue 13, and issue 24's ±%.0f%%): p50 B/A ≤ 1.05, p99 B/A ≤ 1.10, mean B/A ≤ %.2f; a met row says \"same ±%.0f%%\" when its whole CI lies within ±%.0f%% of 1, and \"B lower\" when all of it lies below. **met**: the whole CI satisfies the target; **not met**: none of it does; **undecided**: it straddles. ",
		100*fidelity.Precision, 1+fidelity.Precision, 100*fidelity.Precision, 100*fidelity.Precision)
	d.p("The C loop calls glibc's `recvfrom`/`recvmsg` (cancellation points) between its two clock reads, rtload a raw SYSCALL, so rtload may read lower than the C loop; `bin/fidelity -c-syscall raw` (benchrun `-fidelity-c-syscall raw`) times the C side's calls as raw system calls instead, which takes glibc's share out (bench/FIDELITY.md). ")
	if c.fidelitySyscall != "glibc" {
		d.p("**In this run the C side calls recv with `-c-syscall %s`, not through glibc as drain450 does.** ", c.fidelitySyscall)
	}
	d.p("The last rows of each condition are seed 000's own quantity, recvmsg's cost over recvfrom's, measured the same way for each side, and rtload's over the C loop's (target 0.95–1.05: rtload must not inflate the two methods differently).\n")
	d.p("\n| measure | A | B | geo mean A | geo mean B | B/A | 95%% CI | ± | lag-1 | method | target | verdict |\n|---|---|---|---:|---:|---:|---|---:|---:|---|---|---|\n")
	for _, k := range conds {
		for _, r := range k.rows {
			name := k.label + " " + r.Measure
			prec := 1
			if r.GeoA < 10 {
				prec = 3
			}
			ci, hw, lag, method := "–", "–", "–", "–"
			c := r.CI()
			if r.Defined() {
				ci = fmt.Sprintf("[%.3f, %.3f]", c.Lo, c.Hi)
				hw = fmt.Sprintf("%.1f%%", 100*c.RelHalfWidth())
				lag = fmt.Sprintf("%+.2f", r.Lag1)
				method = r.Method(k.run.Header)
			}
			v := verdictCell(r.Verdict)
			if q := r.Qualifier(); q != "" {
				v += " (" + q + ")"
			}
			d.p("| %s | %s | %s | %s | %s | %.3f | %s | %s | %s | %s | %s | %s |\n", name, r.A, r.B, fmtv(r.GeoA, prec), fmtv(r.GeoB, prec),
				c.Center, ci, hw, lag, method, r.Target, v)
			if r.Targeted() && r.Verdict != stats.Met {
				why := fmt.Sprintf("B/A %.3f, 95%% CI [%.3f, %.3f], %s", c.Center, c.Lo, c.Hi, r.Method(k.run.Header))
				if !r.Defined() {
					why = "no interval: " + strings.Join(r.Change.Notes, "; ")
				}
				d.gap("per-call", fmt.Sprintf("%s: %s (target %s): %s", name, r.Verdict, r.Target, why))
			}
		}
	}
	d.p("\n")
	for _, k := range conds {
		hs, dropped, dirty := k.run.Halves()
		tot := k.run.Totals()
		d.p("- **%s**: `%s` (%s, %d counted cycles + %d warm-up, %d blocks in %s). %d half-cycles counted, %d left out for a block that missed a tick (blocks not clean: C %d, rtload %d); recorded calls per block about %d (C) and %d (rtload); kernel drops %d.",
			k.label, shell(k.argv), c.fidelityRun, k.run.Header.Cycles, k.run.Header.Warmup, k.run.End.Blocks,
			time.Duration(k.run.End.ElapsedNs).Round(time.Second), len(hs), dropped, dirty[fidelity.C], dirty[fidelity.RTload],
			perBlock(tot[fidelity.C]), perBlock(tot[fidelity.RTload]), k.run.End.Drops)
		for _, r := range k.rows {
			if !r.Defined() {
				continue
			}
			for _, n := range r.Change.Notes {
				d.p(" %s: %s.", r.Measure, n)
			}
		}
		if k.run.End.Stopped != "" {
			d.p(" **Stopped early: %s.**", k.run.End.Stopped)
		}
		d.p("\n")
	}
	d.p("\nThe cross-process rows of earlier runs (drain450 and `rtload run` as separate processes, A/B pairs minutes apart) are section 1b, run only with `-only percall`: at this machine's run-to-run spread they decide nothing within make bench's budget (bench/GAPS.md).\n")
	return nil
}

// perBlock is the mean recorded calls per counted block.
func perBlock(t fidelity.Totals) uint64 {
	if t.Blocks == 0 {
		return 0
	}
	return t.Calls / t.Blocks
}

// fidelitySkipped says why section 1 did not run in an A/B of two rtload builds.
func fidelitySkipped(d *doc) {
	d.h2("1. Per-call fidelity")
	d.p("Not run: `-baseline` compares two rtload binaries, and `bin/fidelity` compiles this tree's drain in; section 1b compares the two builds across processes.\n")
}

// joinSections lists section names for usage text.
func joinSections() string {
	var s []string
	for _, x := range sections {
		n := x.name
		if x.optIn {
			n += " (opt-in)"
		}
		s = append(s, n)
	}
	return strings.Join(s, ", ")
}
