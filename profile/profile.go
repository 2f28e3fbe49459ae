package profile

import "slices"

// Profile is the sampled call chains of one variant's reader threads,
// symbolised and split by phase.
type Profile struct {
	// Event is what was sampled: "cpu-clock" (PERF_COUNT_SW_CPU_CLOCK) or
	// "cycles" (PERF_COUNT_HW_CPU_CYCLES).
	Event string
	// Unit is the unit of Period and of each Stack's Weight: "nanoseconds"
	// for cpu-clock, "cycles" for cycles.
	Unit string
	// Period is the sampling period in Unit (0 when sampling by frequency);
	// FreqHz the frequency asked for (0 when sampling by period).
	Period, FreqHz uint64
	// Lost is the number of samples the kernel dropped for a full ring
	// buffer (in LostRecords records); Throttles counts the times it
	// stopped sampling because sampling cost too much CPU.
	Lost, LostRecords, Throttles uint64
	// StartNs and EndNs are the perf clock (CLOCK_MONOTONIC) times of the
	// first and last sample.
	StartNs, EndNs uint64
	// Threads are the sampled thread ids with their sample counts, by TID.
	Threads []ThreadCount
	// Notes say what the sampler fell back to and why ("cycles: not
	// supported by this CPU/VM: perf_event_open returned ENOENT; sampled
	// cpu-clock").
	Notes []string
	// Stacks are the distinct call chains in first-seen order.
	Stacks []Stack
}

// ThreadCount is one sampled thread.
type ThreadCount struct {
	TID     int
	Samples uint64
}

// Samples is the number of samples in p's stacks.
func (p *Profile) Samples() uint64 {
	var n uint64
	for _, s := range p.Stacks {
		n += s.Count
	}
	return n
}

// PhaseSamples is the number of samples of each phase, indexed by Phase.
func (p *Profile) PhaseSamples() [3]uint64 {
	var n [3]uint64
	for _, s := range p.Stacks {
		n[s.Phase] += s.Count
	}
	return n
}

// PhaseWeight is the sum of the sample periods of phase ph, in Unit: the
// sampled thread's CPU time in that phase, in ns, for cpu-clock.
func (p *Profile) PhaseWeight(ph Phase) uint64 {
	var w uint64
	for _, s := range p.Stacks {
		if s.Phase == ph {
			w += s.Weight
		}
	}
	return w
}

// Select returns a copy of p holding only the stacks of phase ph (the
// Stack values are shared, not deep-copied).
func (p *Profile) Select(ph Phase) *Profile {
	q := *p
	q.Threads, q.Notes = slices.Clone(p.Threads), slices.Clone(p.Notes)
	q.Stacks = nil
	for _, s := range p.Stacks {
		if s.Phase == ph {
			q.Stacks = append(q.Stacks, s)
		}
	}
	return &q
}

// Merge returns the profile of several samplers of one variant (one per
// reader thread, or one per profiled round): stacks with the same frames
// and phase add up, as do lost and throttle counts and thread samples.
// Event, Unit, Period and FreqHz are the first profile's; Notes are
// concatenated without duplicates.
func Merge(ps ...*Profile) *Profile {
	out := &Profile{}
	idx := map[string]int{}
	tids := map[int]int{}
	for i, p := range ps {
		if i == 0 {
			out.Event, out.Unit, out.Period, out.FreqHz = p.Event, p.Unit, p.Period, p.FreqHz
			out.StartNs = p.StartNs
		}
		out.Lost += p.Lost
		out.LostRecords += p.LostRecords
		out.Throttles += p.Throttles
		if p.StartNs != 0 && (out.StartNs == 0 || p.StartNs < out.StartNs) {
			out.StartNs = p.StartNs
		}
		out.EndNs = max(out.EndNs, p.EndNs)
		for _, n := range p.Notes {
			if !slices.Contains(out.Notes, n) {
				out.Notes = append(out.Notes, n)
			}
		}
		for _, t := range p.Threads {
			if j, ok := tids[t.TID]; ok {
				out.Threads[j].Samples += t.Samples
				continue
			}
			tids[t.TID] = len(out.Threads)
			out.Threads = append(out.Threads, t)
		}
		for _, s := range p.Stacks {
			key := s.Phase.String() + "|" + framesKey(s.Frames)
			if j, ok := idx[key]; ok {
				out.Stacks[j].Count += s.Count
				out.Stacks[j].Weight += s.Weight
				continue
			}
			idx[key] = len(out.Stacks)
			out.Stacks = append(out.Stacks, s)
		}
	}
	slices.SortFunc(out.Threads, func(a, b ThreadCount) int { return a.TID - b.TID })
	return out
}
