package engine

import (
	"fmt"
	"slices"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// This file holds what a trial watches besides its measurements: where
// rtload's own threads may run (housekeeping), every thread's name and
// mask, and the kernel's clocksource and RT throttling.

// housekeepingCPUs is where sp confines rtload's own threads, given the
// CPUs allowed to the process before any confinement: housekeeping_cpus
// when given, else the allowed CPUs no reader uses (rt.HousekeepingCPUs).
// It returns no CPUs and the reason when nothing is to be confined: no
// readers (nothing to keep the machinery off), or readers on every
// allowed CPU.
func housekeepingCPUs(sp *scenario.Spec, allowed []int) ([]int, string) {
	if len(sp.HousekeepingCPUs) > 0 {
		return slices.Clone(sp.HousekeepingCPUs), ""
	}
	if len(sp.Readers) == 0 {
		return nil, "not confined: no readers, so no CPU to keep rtload's own threads off"
	}
	var readers []int
	for _, r := range sp.Readers {
		readers = append(readers, int(r.CPU))
	}
	return rt.HousekeepingCPUs(allowed, readers)
}

// confine confines rtload's own threads (the Go runtime's, main, the
// writer, the exporter) to the trial's housekeeping CPUs until stop,
// before any of the trial's threads exist: those exempt themselves
// (rt.Sched.Exempt). When nothing is confined, the trial says why
// (HousekeepingNote) and the log warns.
func (t *trial) confine() error {
	cpus, why := housekeepingCPUs(t.sp, t.run.allowed)
	if len(cpus) == 0 {
		t.res.HousekeepingNote = why
		if len(t.sp.Readers) > 0 {
			fmt.Fprintf(t.run.opt.Log, "warning: %s\n", why)
		}
		return nil
	}
	hk, err := rt.ConfineHousekeeping(rt.HousekeepingConfig{CPUs: cpus})
	if err != nil {
		return fmt.Errorf("housekeeping_cpus: %w", err)
	}
	t.hk = hk
	return nil
}

// unconfine ends the housekeeping confinement (idempotent) and records
// what it did.
func (t *trial) unconfine() {
	if t.hk == nil {
		return
	}
	r := t.hk.Stop()
	t.res.Housekeeping = &r
}

// threads lists every thread of the process now (rt.Threads), and adds
// to the trial's ThreadWarnings every thread other than a reader that may
// run on a reader's CPU (rt.ReaderCPUWarnings) and every real-time thread
// of another process that may (rt.ForeignThreads: another rtload run, a
// cyclictest), once each; the shared watch takes the same listing of
// other processes' threads for its culprits. A listing that fails is a
// warning on the log.
func (t *trial) threads() []results.Thread {
	ts, err := rt.Threads()
	if err != nil {
		fmt.Fprintf(t.run.opt.Log, "warning: thread list: %v\n", err)
	}
	var readers []rt.Applied
	for _, r := range t.readers {
		if r.thread != nil {
			readers = append(readers, r.applied)
		}
	}
	var cpus []int
	for _, r := range readers {
		cpus = append(cpus, r.CPUs...)
	}
	list, more, err := rt.ForeignThreads(cpus)
	if err != nil {
		fmt.Fprintf(t.run.opt.Log, "warning: %v\n", err)
	} else if t.shared != nil {
		t.shared.observe(list, rt.Monotonic())
	}
	for _, w := range append(rt.ReaderCPUWarnings(ts, readers), rt.OtherRTWarningsOf(list, more, cpus)...) {
		if !slices.Contains(t.res.ThreadWarnings, w) {
			t.res.ThreadWarnings = append(t.res.ThreadWarnings, w)
		}
	}
	return ts
}

// watchShared starts the shared watch over the readers whose threads
// started (sharedWatch): the thread listing at the trial's start is its
// first scan.
func (t *trial) watchShared() {
	var rs []sharedReader
	for _, r := range t.readers {
		if r.thread != nil {
			rs = append(rs, sharedReader{name: r.spec.Name, applied: r.applied})
		}
	}
	if len(rs) == 0 {
		return
	}
	t.shared = newSharedWatch(rs, t.win.t0)
}

// unwatchShared stops the shared watch (idempotent) and records its
// culprits; each reader that had any gets its MarkShared, said on the log.
func (t *trial) unwatchShared() {
	if t.shared == nil {
		return
	}
	t.shared.halt()
	culprits, marks := t.shared.result()
	t.shared = nil
	t.res.Culprits = culprits
	t.res.Marks = append(t.res.Marks, marks...)
	for _, m := range marks {
		fmt.Fprintf(t.run.opt.Log, "warning: trial %d: %s\n", t.tr.Index+1, m.Text)
	}
}

// watchKernel starts watching the kernel for the trial (clocksource,
// TSC, RT throttling), its event times counted from the window's t0.
func (t *trial) watchKernel() {
	t.kw = sysinfo.WatchKernel(sysinfo.KernelWatchConfig{Start: t.win.t0})
}

// unwatchKernel stops the kernel watch (idempotent) and records what it
// saw; a trial the kernel changed is marked invalid (kernelInvalid).
func (t *trial) unwatchKernel() {
	if t.kw == nil {
		return
	}
	rep := t.kw.Stop()
	t.res.Kernel = &rep
	why := kernelInvalid(rep, t.run.clocksource)
	if t.run.clocksource == "" {
		t.run.clocksource = rep.ClocksourceStart
	}
	if why != "" {
		t.res.Marks = append(t.res.Marks, results.Mark{Kind: results.MarkInvalid, Text: why})
		fmt.Fprintf(t.run.opt.Log, "warning: trial %d: invalid: %s\n", t.tr.Index+1, why)
	}
}

// kernelInvalid is why the kernel made a trial something other than the
// run asked for, "" when it did not: the watch's events and a changed RT
// throttling setting (KernelReport.Invalid), and a clocksource at the
// trial's start other than the run's first trial's (runClocksource, ""
// for the first trial): its latencies were read through another clock.
func kernelInvalid(rep sysinfo.KernelReport, runClocksource string) string {
	reason := rep.Invalid()
	if runClocksource == "" || rep.ClocksourceStart == "" || rep.ClocksourceStart == runClocksource {
		return reason
	}
	other := fmt.Sprintf("clocksource %s at the trial's start, not %s as in the run's first trial", rep.ClocksourceStart, runClocksource)
	if reason == "" {
		return other
	}
	return reason + "; " + other
}

// checkClockRate measures a tsc clock's rate over the trial against
// CLOCK_MONOTONIC, from the window's start to now (the readers have
// ended), into the trial's ClockRate, and marks the trial invalid when it
// strays from the calibration by more than results.ClockRateTolerance
// beyond the two readings' own uncertainty: its ticks would not be the
// run's (a VM migrated to a host whose TSC runs at another rate, a TSC
// that is not invariant after all). Nothing for other clocks.
func (t *trial) checkClockRate() {
	if !t.rateOK {
		return
	}
	t.rateOK = false
	p1, _ := t.run.clock.RatePoint()
	r, ok := t.run.clock.RateBetween(t.rate0, p1)
	if !ok {
		return
	}
	t.res.ClockRate = &r
	if why := clockRateInvalid(r, t.run.clock.Info().Hz); why != "" {
		t.res.Marks = append(t.res.Marks, results.Mark{Kind: results.MarkInvalid, Text: why})
		fmt.Fprintf(t.run.opt.Log, "warning: trial %d: invalid: %s\n", t.tr.Index+1, why)
	}
}

// clockRateInvalid is why a trial's TSC rate r makes it invalid against
// the calibration hz, "" when it agrees (results.ClockRate.Disagrees).
func clockRateInvalid(r results.ClockRate, hz float64) string {
	if !r.Disagrees() {
		return ""
	}
	return fmt.Sprintf("the TSC ran at %.3f MHz against CLOCK_MONOTONIC over the trial's %.1f s, %+.3f%% from its calibration %.3f MHz (tolerance ±%g%%): its ticks are not the run's",
		r.Hz/1e6, r.Seconds, r.Deviation*100, hz/1e6, results.ClockRateTolerance*100)
}
