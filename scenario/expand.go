package scenario

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Expand returns the trials to run: Rounds rounds (AutoRounds for rounds:
// auto), each running every variant once, in declaration order in even
// rounds and in reverse order in odd ones (ABBA: round 0: A B, round 1:
// B A, round 2: A B, …, so that a drift of the machine weighs on every
// variant alike), or one trial named "base" per round when there are no
// variants. With
// profile.enabled each timed trial is followed by its profiled twin
// (Trial.Profiled; round 0: A, A profiled, B, B profiled, …). Each Trial.Spec
// is a deep copy of s with its variant's overrides applied (in sorted key
// order); its Variants list is kept, so Trial.Spec.Variants still shows the
// overrides of Trial.Variant. Expand does not validate: call Validate first;
// it refuses only what it cannot do (rounds out of range, or more than
// MaxWork entries to copy).
func (s *Spec) Expand() ([]Trial, error) { return s.ExpandRounds(s.Rounds.planned()) }

// ExpandRounds is Expand with n rounds, whatever s.Rounds says: a rounds:
// auto run expands as many as it may run (its --max-rounds) and stops
// when its rule says so. n must be 1–MaxRounds.
func (s *Spec) ExpandRounds(n int) ([]Trial, error) {
	if n < 1 || n > MaxRounds {
		p := s.posOf("rounds")
		return nil, ErrorList{{File: s.File, Line: p.Line, Col: p.Col, Path: "rounds", Msg: fmt.Sprintf("%d out of range", n), Allowed: fmt.Sprintf("1–%d", MaxRounds)}}
	}
	if e := s.checkWorkRounds(n); e != nil {
		return nil, ErrorList{e}
	}
	variants := s.Variants
	if len(variants) == 0 {
		variants = []Variant{{Name: "base"}}
	}
	trials := make([]Trial, 0, n*len(variants))
	for r := range n {
		for k := range variants {
			i := k
			if r%2 == 1 {
				i = len(variants) - 1 - k
			}
			v := variants[i]
			c := s.Clone()
			if errs := c.applyVariant(i, v, s.posOf); len(errs) > 0 {
				for _, e := range errs {
					e.File = s.File
				}
				return nil, errs.err()
			}
			trials = append(trials, Trial{Index: len(trials), Round: r, Variant: v.Name, Spec: *c})
			if c.Profile.Enabled {
				trials = append(trials, Trial{Index: len(trials), Round: r, Variant: v.Name, Profiled: true, Spec: *c.Clone()})
			}
		}
	}
	return s.interleaveTrials(trials), nil
}

// Clone returns a deep copy of s: no slice, map or pointer is shared.
func (s *Spec) Clone() *Spec {
	c := s.cloneBase()
	c.Variants = slices.Clone(s.Variants)
	for i := range c.Variants {
		c.Variants[i].Set = maps.Clone(c.Variants[i].Set)
	}
	return c
}

// cloneBase is Clone without the variants (nil), the copy Validate applies
// one variant to.
func (s *Spec) cloneBase() *Spec {
	c := *s
	c.Endpoints = slices.Clone(s.Endpoints)
	c.HousekeepingCPUs = slices.Clone(s.HousekeepingCPUs)
	c.Requires.Config = slices.Clone(s.Requires.Config)
	c.Requires.Cmdline = slices.Clone(s.Requires.Cmdline)
	c.Requires.Features = slices.Clone(s.Requires.Features)
	c.Traffic = slices.Clone(s.Traffic)
	for i, t := range c.Traffic {
		if t.CPU != nil {
			cpu := *t.CPU
			c.Traffic[i].CPU = &cpu
		}
		c.Traffic[i].CPUs = slices.Clone(t.CPUs)
	}
	c.Readers = slices.Clone(s.Readers)
	for i := range c.Readers {
		c.Readers[i].Endpoints = slices.Clone(c.Readers[i].Endpoints)
	}
	c.Noise = slices.Clone(s.Noise)
	for i := range c.Noise {
		c.Noise[i].CPUs = slices.Clone(c.Noise[i].CPUs)
	}
	c.Probes = slices.Clone(s.Probes)
	for i, pr := range c.Probes {
		c.Probes[i].Size = slices.Clone(pr.Size)
		if pr.CPU != nil {
			cpu := *pr.CPU
			c.Probes[i].CPU = &cpu
		}
	}
	c.Variants = nil
	c.pos = maps.Clone(s.pos)
	c.cmdline = maps.Clone(s.cmdline)
	c.sets = slices.Clone(s.sets)
	c.defaulted = maps.Clone(s.defaulted)
	c.invalid = maps.Clone(s.invalid)
	return &c
}

// Pos returns the source position of the value at path
// ("readers[0].priority"). For a field the source left out, it returns the
// position of the nearest enclosing section that was given ("readers[0]");
// the zero Pos when none was (a Spec built in code) or when the value came
// from Apply (--set).
func (s *Spec) Pos(path string) Pos { return s.posOf(path) }

// MeasuredTime is the least time trials take to run: each trial's
// duration and warm-up, the warm-up once for an interleaved group (its
// members run as one trial, warmed up once). Setup (sockets, threads,
// namespaces) and probes' own lengths come on top. A soak's (duration 0)
// counts only its warm-ups.
func MeasuredTime(trials []Trial) time.Duration {
	var d time.Duration
	for _, tr := range trials {
		d += time.Duration(tr.Spec.Duration)
		if tr.Interleave == 0 || tr.Group == tr.Index {
			d += time.Duration(tr.Spec.Warmup)
		}
	}
	return d
}
