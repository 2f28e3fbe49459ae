// Package noise is background load that runs beside the measured readers:
// each Source starts its own OS threads, does real work, and reports the
// work it achieved (record.Work) so a report proves the noise was there.
package noise

import (
	"fmt"
	"sync/atomic"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// Source is background load on its own threads.
type Source interface {
	// Start launches the threads; it returns once they run (or failed).
	Start() error
	// Stop ends every thread and returns the work done.
	Stop() (record.Work, error)
}

// SpinConfig configures Spin.
type SpinConfig struct {
	// Threads is the number of busy threads, ≥ 1.
	Threads int
	// CPUs pins thread i to CPUs[i%len(CPUs)]; empty = unpinned.
	CPUs []int
	// Nice for the threads (SCHED_OTHER), -20–19.
	Nice int
	// AllowDegraded carries on unpinned / at nice 0 when not permitted.
	AllowDegraded bool
}

// Spin is Threads busy loops (the seed's "5 other threads are also busy").
// Work is counted in loop iterations.
type Spin struct {
	cfg     SpinConfig
	stop    atomic.Bool
	threads []*rt.Thread
	counts  []paddedCount
	start   int64
	elapsed int64
	stopped bool
}

type paddedCount struct {
	n atomic.Uint64
	_ [56]byte // own cache line: counters must not share one
}

var _ Source = (*Spin)(nil)

// NewSpin returns a stopped Spin.
func NewSpin(cfg SpinConfig) (*Spin, error) {
	if cfg.Threads < 1 {
		return nil, fmt.Errorf("spin noise: threads %d < 1", cfg.Threads)
	}
	return &Spin{cfg: cfg, counts: make([]paddedCount, cfg.Threads)}, nil
}

// Start launches the threads.
func (s *Spin) Start() error {
	s.start = rt.Monotonic()
	for i := 0; i < s.cfg.Threads; i++ {
		sched := rt.Sched{Policy: rt.Other, Nice: s.cfg.Nice, AllowDegraded: s.cfg.AllowDegraded}
		if len(s.cfg.CPUs) > 0 {
			sched.CPUs = []int{s.cfg.CPUs[i%len(s.cfg.CPUs)]}
		}
		c := &s.counts[i].n
		t, err := rt.Start(sched, func(rt.Applied) { spin(&s.stop, c) })
		if err != nil {
			s.Stop()
			return fmt.Errorf("spin noise thread %d: %w", i, err)
		}
		s.threads = append(s.threads, t)
	}
	return nil
}

// spin counts loop iterations in batches until stop is set.
func spin(stop *atomic.Bool, count *atomic.Uint64) {
	for !stop.Load() {
		sink.Store(spinBatch(sink.Load()))
		count.Add(1 << 16)
	}
}

// spinBatch is 2^16 dependent integer operations. It is a real call (not
// inlined) so its prologue is a preemption point even with
// GODEBUG=asyncpreemptoff=1: a stop-the-world never waits on a spinner.
//
//go:noinline
func spinBatch(x uint64) uint64 {
	for i := 0; i < 1<<16; i++ {
		x += uint64(i) ^ x>>3
	}
	return x
}

var sink atomic.Uint64

// Stop ends the threads and returns the iterations done. Idempotent.
func (s *Spin) Stop() (record.Work, error) {
	if !s.stopped {
		s.stopped = true
		s.stop.Store(true)
		for _, t := range s.threads {
			t.Wait()
		}
		s.elapsed = rt.Monotonic() - s.start
	}
	var total uint64
	for i := range s.counts {
		total += s.counts[i].n.Load()
	}
	return record.Work{Unit: "loops", Count: total, Elapsed: s.elapsed}, nil
}
