package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/profile"
	"github.com/rtload/rtload/profile/sampler"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/scenario"
)

// Profiled trials (issue 16). A reader of a profiled trial gets a
// sampler (profile/sampler) opened on its thread once it runs pinned,
// drained by the trial's writer goroutine, never by the reader, and
// stopped after the reader ends; it keeps only the samples of the
// measured window. The run's profileSet merges each variant's samples
// over rounds and readers and writes profile-<variant>.pb.gz and
// .folded after every profiled trial.

// samplerConfig is the sampler of a profiled trial's reader thread tid:
// event (cpu-clock: one sample every 1e9/freq ns of the thread's CPU
// time; cycles: the kernel adapts the period to freq samples a second),
// the measured window [from, until), and a ring that holds ample samples
// between two of the writer's drains.
func samplerConfig(ev sampler.Event, freq, tid int, from, until int64) sampler.Config {
	freq = max(freq, 1)
	cfg := sampler.Config{TID: tid, Event: ev, RingPages: ringPages(freq), From: from, Until: until}
	if ev == sampler.EventCycles {
		cfg.FreqHz = uint64(freq)
	} else {
		cfg.Period = uint64(1e9 / freq)
	}
	return cfg
}

// ringPages sizes a sampler's ring for freq samples per second of a
// thread that never leaves the CPU: 4 of the writer's 50 ms polls of
// 512-byte samples (a 40-frame chain and its header), a power of two in
// [sampler.DefaultRingPages, 4096] pages.
func ringPages(freq int) int {
	bytes := uint64(freq) * 512 / 5 // 200 ms of samples
	pages := (bytes + uint64(os.Getpagesize()) - 1) / uint64(os.Getpagesize())
	p := 1 << bits.Len64(max(pages, 1)-1)
	return min(max(p, sampler.DefaultRingPages), 4096)
}

// startProfiler opens the sampler of r's thread for a profiled trial.
func (r *reader) startProfiler(ps *profileSet, freq int, from, until int64) error {
	s, err := sampler.Open(samplerConfig(ps.event, freq, r.applied.TID, from, until))
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	r.sampler = s
	return nil
}

// drainProfiler empties r's sampler ring (the writer goroutine's job).
func (r *reader) drainProfiler() {
	if r.sampler != nil {
		r.sampler.Drain()
	}
}

// closeProfiler releases r's sampler; it is idempotent.
func (r *reader) closeProfiler() {
	if r.sampler != nil {
		r.sampler.Close()
	}
}

// profileSet is the run's profiled trials: the symbols (kallsyms read
// once per run), and each variant's profiles and measurements so far.
type profileSet struct {
	event    sampler.Event // what every profiled trial samples (auto resolved once)
	hz       float64       // per-call clock ticks per second
	binary   string        // the executable, the pprof mapping's file
	syms     profile.Symbols
	symsRead bool
	notes    []string // the run's profiling notes (symbols)
	order    []string
	variants map[string]*variantProfiles
}

// variantProfiles is one variant's profiles (one per reader and profiled
// trial) and its summary entry without the sample counts.
type variantProfiles struct {
	profiles []*profile.Profile
	vp       results.VariantProfile
}

// newProfileSet returns the run's profile set and its trials, nil and
// trials unchanged when none is profiled. It first opens a sampler on the
// calling thread to find out what profiling can sample here (auto:
// cycles where a PMU counts them, else cpu-clock, noted): when nothing
// can (perf_event_paranoid without CAP_PERFMON), the error is returned,
// or with allowDegraded the profiled trials are left out and degraded
// says why.
func newProfileSet(trials []scenario.Trial, hz float64, allowDegraded bool) (ps *profileSet, kept []scenario.Trial, degraded string, err error) {
	var spec *scenario.Profile
	for _, tr := range trials {
		if tr.Profiled {
			spec = &tr.Spec.Profile
			break
		}
	}
	if spec == nil {
		return nil, trials, "", nil
	}
	ps = &profileSet{hz: hz, binary: os.Args[0], variants: map[string]*variantProfiles{}}
	if exe, err := os.Executable(); err == nil {
		ps.binary = exe
	}
	if err := ps.chooseEvent(*spec); err != nil {
		if !allowDegraded {
			return nil, nil, "", fmt.Errorf("profiled trials: %w", err)
		}
		for _, tr := range trials {
			if !tr.Profiled {
				kept = append(kept, tr)
			}
		}
		return nil, kept, fmt.Sprintf("profiled trials left out: %v", err), nil
	}
	return ps, trials, "", nil
}

// chooseEvent finds the event the profiled trials sample, by opening a
// sampler of it on this thread: the scenario's, or for auto cycles and
// then cpu-clock.
func (ps *profileSet) chooseEvent(p scenario.Profile) error {
	try := func(ev sampler.Event) error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread() // nothing about the thread changed
		s, err := sampler.Open(samplerConfig(ev, p.Frequency, unix.Gettid(), 0, 0))
		if err != nil {
			return err
		}
		return s.Close()
	}
	ev, auto := profileEvent(p.Event)
	if !auto {
		ps.event = ev
		return try(ev)
	}
	err := try(sampler.EventCycles)
	if err == nil {
		ps.event = sampler.EventCycles
		return nil
	}
	ps.notes = append(ps.notes, fmt.Sprintf("event auto: %v; sampled cpu-clock instead", err))
	ps.event = sampler.EventCPUClock
	return try(ps.event)
}

// symbols reads /proc/kallsyms once per run.
func (ps *profileSet) symbols() profile.Symbols {
	if !ps.symsRead {
		ps.symsRead = true
		ps.syms.User = profile.SelfSymbols{}
		ks, err := profile.LoadKallsyms()
		if err != nil {
			ps.notes = append(ps.notes, fmt.Sprintf("kernel frames not symbolised: %v", err))
		} else {
			ps.syms.Kernel = ks
		}
	}
	return ps.syms
}

// add stops the samplers of a profiled trial's readers (after the
// readers and the writer have ended), records each reader's Profile in
// res and the trial's samples and measurements under its variant.
func (ps *profileSet) add(res *results.Trial, readers []*reader) {
	v := ps.variants[res.Variant]
	if v == nil {
		v = &variantProfiles{vp: results.VariantProfile{Variant: res.Variant, RealTime: true}}
		ps.variants[res.Variant] = v
		ps.order = append(ps.order, res.Variant)
	}
	v.vp.Trials = append(v.vp.Trials, res.Index)
	syms := ps.symbols()
	for i, r := range readers {
		if r.sampler == nil || i >= len(res.Readers) {
			continue
		}
		rr := &res.Readers[i]
		stopErr := r.sampler.Stop()
		p := r.sampler.Profile(syms, profile.DefaultPhaseRule())
		st := r.sampler.Stats()
		rp := &results.ReaderProfile{TID: r.applied.TID, Event: p.Event, Samples: st.Samples, Outside: st.Outside,
			Lost: p.Lost, Throttles: p.Throttles, Notes: p.Notes}
		for _, t := range p.Threads {
			if t.TID == r.applied.TID {
				rp.ThreadSamples = t.Samples
			}
		}
		if stopErr != nil {
			rp.Notes = append(rp.Notes, stopErr.Error())
		}
		rr.Profile = rp
		v.profiles = append(v.profiles, p)
		v.vp.Outside += st.Outside
		v.vp.Calls += rr.PerCallTicks.Count
		if ps.hz > 0 {
			v.vp.DrainNs += int64(rr.PerCallTicks.MeanTicks * float64(rr.PerCallTicks.Count) / ps.hz * 1e9)
		}
		if rr.Applied.Policy != "SCHED_FIFO" && rr.Applied.Policy != "SCHED_RR" {
			v.vp.RealTime = false
		}
	}
}

// write merges each variant's profiles, writes its pprof and folded files
// into d (replacing the previous round's, link-safe) and returns the
// summary's profiles. With d nil nothing is written and the file names
// stay empty.
func (ps *profileSet) write(d *store.Dir) ([]results.VariantProfile, error) {
	var out []results.VariantProfile
	var errs []error
	for _, name := range ps.order {
		v := ps.variants[name]
		p := profile.Merge(v.profiles...)
		vp := v.vp
		vp.Event, vp.Unit, vp.Period, vp.FreqHz = p.Event, p.Unit, p.Period, p.FreqHz
		vp.Lost, vp.Throttles = p.Lost, p.Throttles
		ph := p.PhaseSamples()
		vp.Samples, vp.DrainSamples, vp.SleepSamples, vp.OtherSamples = p.Samples(), ph[profile.PhaseDrain], ph[profile.PhaseSleep], ph[profile.PhaseOther]
		if p.Event == string(sampler.EventCPUClock) {
			vp.DrainCPUNs = p.PhaseWeight(profile.PhaseDrain)
		}
		vp.Notes = append(append([]string(nil), p.Notes...), ps.notes...)
		if d != nil {
			if err := writeProfileFiles(d, p, name, ps.binary); err != nil {
				errs = append(errs, err)
			} else {
				vp.Pprof, vp.Folded = profile.PprofName(name), profile.FoldedName(name)
			}
		}
		out = append(out, vp)
	}
	return out, errors.Join(errs...)
}

// writeProfileFiles writes p as variant's pprof profile and folded stacks.
func writeProfileFiles(d *store.Dir, p *profile.Profile, variant, binary string) error {
	var pb, folded bytes.Buffer
	if err := p.WritePprof(&pb, binary); err != nil {
		return fmt.Errorf("profile of %s: %w", variant, err)
	}
	if err := p.WriteFolded(&folded); err != nil {
		return fmt.Errorf("profile of %s: %w", variant, err)
	}
	if err := d.WriteFile(profile.PprofName(variant), pb.Bytes()); err != nil {
		return err
	}
	return d.WriteFile(profile.FoldedName(variant), folded.Bytes())
}

// writeInto writes the profiles (write) and sets sum.Profiles; a nil
// set does nothing.
func (ps *profileSet) writeInto(sum *results.Summary, d *store.Dir) error {
	if ps == nil {
		return nil
	}
	vps, err := ps.write(d)
	sum.Profiles = vps
	return err
}
