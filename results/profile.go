package results

// MaxProfileBytes is the largest profile file store.ReadProfileFile reads,
// compressed or not: what a compressed one may inflate to (a profile
// written without gzip is not spared the bound; issue 34: a 72 MB one
// took explain to 4.4 GB).
const MaxProfileBytes = MaxProfileInflatedBytes

// MaxProfiles bounds a summary's variant profiles.
const MaxProfiles = 1 << 12

// ReaderProfile is what the sampler of one reader thread took in one
// profiled trial (Reader.Profile).
type ReaderProfile struct {
	// TID is the sampled thread (the reader's, Applied.TID); Event the
	// event sampled ("cpu-clock" or "cycles").
	TID   int    `json:"tid"`
	Event string `json:"event"`
	// Samples is the samples kept: taken on the reader's thread inside
	// the measured window. ThreadSamples counts those whose TID is TID
	// (all of them, unless the kernel attributed one elsewhere).
	Samples       uint64 `json:"samples"`
	ThreadSamples uint64 `json:"thread_samples"`
	// Outside counts samples taken in the warm-up or tail, dropped; Lost
	// the samples the kernel dropped for a full ring buffer; Throttles
	// the times it stopped sampling because sampling cost too much.
	Outside   uint64 `json:"outside_window"`
	Lost      uint64 `json:"lost"`
	Throttles uint64 `json:"throttles"`
	// Notes say what the sampler fell back to, and why.
	Notes []string `json:"notes,omitempty"`
}

// VariantProfile is one variant's profile: the samples of its profiled
// trials' readers, rounds and readers merged, written as Pprof and
// Folded, with what the same trials measured (what `rtload explain`
// converts the samples' shares into ns per call with).
type VariantProfile struct {
	Variant string `json:"variant"`
	// Pprof and Folded are the files in the results directory:
	// profile-<variant>.pb.gz (pprof's format, every sample labelled
	// phase=drain|sleep|other) and profile-<variant>.folded.
	Pprof  string `json:"pprof"`
	Folded string `json:"folded"`
	// Trials are the indices (Trial.Index) of the profiled trials merged.
	Trials []int `json:"trials"`
	// Event is what was sampled ("cpu-clock" or "cycles"), Unit the unit
	// of Period ("nanoseconds" or "cycles"); Period is 0 when sampling by
	// frequency (FreqHz).
	Event  string `json:"event"`
	Unit   string `json:"unit"`
	Period uint64 `json:"period"`
	FreqHz uint64 `json:"freq_hz,omitempty"`
	// Samples by the reader's phase: in the drain (a receive syscall or
	// the drain's own code), the sleep and wakeup path, or elsewhere.
	Samples      uint64 `json:"samples"`
	DrainSamples uint64 `json:"drain_samples"`
	SleepSamples uint64 `json:"sleep_samples"`
	OtherSamples uint64 `json:"other_samples"`
	// DrainCPUNs is the drain samples' weight for cpu-clock: the readers'
	// CPU time in the drain as sampled, in ns (0 for cycles).
	DrainCPUNs uint64 `json:"drain_cpu_ns,omitempty"`
	// Outside, Lost and Throttles are the readers' sums (ReaderProfile).
	Outside   uint64 `json:"outside_window"`
	Lost      uint64 `json:"lost"`
	Throttles uint64 `json:"throttles"`
	// Calls is the receive calls the profiled trials' readers measured,
	// DrainNs the sum of those calls' measured times (per-call clock
	// ticks converted with Summary.Clock.Hz), in ns: DrainNs / Calls is
	// the variant's cost per call while it was profiled.
	Calls   uint64 `json:"calls"`
	DrainNs int64  `json:"drain_ns"`
	// RealTime says every profiled reader ran at SCHED_FIFO or SCHED_RR:
	// its measured time is its CPU time (nothing preempts it).
	RealTime bool     `json:"real_time"`
	Notes    []string `json:"notes,omitempty"`
}

// Profile returns s's profile of variant, or nil.
func (s *Summary) Profile(variant string) *VariantProfile {
	for i := range s.Profiles {
		if s.Profiles[i].Variant == variant {
			return &s.Profiles[i]
		}
	}
	return nil
}

// ProfilerCost is what sampling cost one (variant, reader): its per-call
// cost in its profiled trials against its timed ones, rounds merged.
type ProfilerCost struct {
	Variant, Reader string
	// Timed and Profiled are the per-call costs in clock ticks
	// (Summary.Clock), all calls; each is exact (HDR-merged) when its
	// rounds all carry their HDR encoding.
	Timed, Profiled           TickStats
	TimedExact, ProfiledExact bool
}

// P50Change is the change of the per-call p50 under the profiler,
// (profiled − timed) / timed, or 0 without a timed p50.
func (c ProfilerCost) P50Change() float64 {
	t := c.Timed.Ticks(P50)
	if t == 0 {
		return 0
	}
	return (c.Profiled.Ticks(P50) - t) / t
}

// ProfilerCosts returns the profiler's cost for every (variant, reader)
// of s's profiled trials that also has timed trials, in the order of
// Columns.
func ProfilerCosts(s *Summary) []ProfilerCost {
	prof := map[[2]string][]TickStats{}
	for _, t := range s.ProfiledTrials {
		for _, r := range t.Readers {
			k := [2]string{t.Variant, r.Name}
			prof[k] = append(prof[k], r.PerCallTicks)
		}
	}
	var out []ProfilerCost
	for _, c := range Columns(s) {
		ps, ok := prof[[2]string{c.Variant, c.Reader}]
		if !ok {
			continue
		}
		var ts []TickStats
		for _, rd := range c.Rounds {
			ts = append(ts, rd.Reader.PerCallTicks)
		}
		pc := ProfilerCost{Variant: c.Variant, Reader: c.Reader}
		pc.Timed, pc.TimedExact = MergeTickStats(ts...)
		pc.Profiled, pc.ProfiledExact = MergeTickStats(ps...)
		out = append(out, pc)
	}
	return out
}

// MaxProfileInflatedBytes is the most a gzip-compressed profile may
// inflate to before it is parsed (pprof's own parser inflates with no
// bound), and the most an uncompressed one may hold: rtload's profiles
// are tens of KiB. 16 MiB, not 64: a reader holds the bytes, pprof's
// copy of its strings and what it builds, twice for compare's two runs,
// and a results directory's reader stays under 256 MB (issue 34: a
// profile of one 60 MB string took compare to 354 MB at 64 MiB).
const MaxProfileInflatedBytes = 16 << 20
