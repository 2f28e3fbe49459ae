package rt

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// CountersConfig selects the hardware events counted per call on one
// thread. The zero value counts nothing.
type CountersConfig struct {
	// Events are CounterEvents names ("instructions", "cache-misses",
	// "branch-misses", …), each at most once, in ReadInto order.
	Events []string
	// AllowDegraded leaves out, listed in Skipped, each event the PMU or
	// the kernel's settings cannot give, instead of failing Open.
	AllowDegraded bool
}

// Counters are per-call hardware counters of one thread: one perf event
// group (the first event that opens leads it, pinned), each member's user
// page mapped and read with rdpmc like the cycles clock. Build it with
// NewCounters before the thread starts, Open it on the thread, ReadInto
// around each measured call, then Status and Close.
type Counters struct {
	cfg     CountersConfig
	events  []PerfEvent
	ctrs    []*perfCounter
	readers []*pmcReader // ctrs[i].r, for the nosplit read loop
	names   []string
	skipped []string
	opened  bool
	fake    bool // FakeCounters: Open does nothing
}

// FakeCounters returns Counters for names that need no PMU, for tests of
// code that records per-call counters (probe.Drain) on machines without
// one: each event has a synthetic user page (index i+1, cap_user_rdpmc,
// 64-bit width) read through the real seqlock protocol, with the RDPMC
// instruction replaced by rdpmc(i). Open on them does nothing and succeeds;
// Status is empty; Close leaves Len 0. rtload never builds them.
func FakeCounters(names []string, rdpmc func(event int) uint64) *Counters {
	c := &Counters{fake: true, opened: true, names: append([]string(nil), names...)}
	for i := range names {
		pg := &unix.PerfEventMmapPage{Index: uint32(i + 1), Capabilities: capUserRdpmc, Pmc_width: 64}
		c.readers = append(c.readers, &pmcReader{pg: pg, fake: func(ecx uint32) uint64 { return rdpmc(int(ecx)) }})
	}
	return c
}

// NewCounters checks cfg's event names (an unknown or repeated name is an
// error listing the allowed ones) and returns unopened Counters: Len 0,
// ReadInto writes nothing, until Open.
func NewCounters(cfg CountersConfig) (*Counters, error) {
	c := &Counters{cfg: cfg}
	var errs []error
	for _, name := range cfg.Events {
		i := slices.IndexFunc(CounterEvents, func(e PerfEvent) bool { return e.Name == name })
		switch {
		case i < 0:
			errs = append(errs, fmt.Errorf("counter %q: %w (allowed: %s)", name, ErrNotSupported, counterNames()))
		case slices.ContainsFunc(c.events, func(e PerfEvent) bool { return e.Name == name }):
			errs = append(errs, fmt.Errorf("counter %q: listed twice", name))
		default:
			c.events = append(c.events, CounterEvents[i])
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func counterNames() string {
	var n []string
	for _, e := range CounterEvents {
		n = append(n, e.Name)
	}
	return strings.Join(n, ", ")
}

// Open opens the events on the calling thread, which must be locked
// (runtime.LockOSThread) and pinned, before its measured window: only this
// thread can read them. Each event is a perf_event_open(2) counting event
// (kernel and user, exclude_hv; the first one that opens leads the group,
// pinned, so the group is on the PMU whole or in error state, never
// multiplexed) with its user page mapped; rdpmc must be able to read it
// (cap_user_rdpmc, index ≠ 0). An event that cannot be given fails Open,
// naming each such event and what to change, with nothing left open; with
// AllowDegraded it is left out instead and listed in Skipped ("cache-misses:
// not supported by this CPU/VM: perf_event_open returned ENOENT (…)").
// Opening twice is an error.
func (c *Counters) Open() (err error) {
	if c.fake {
		return nil
	}
	if c.opened {
		return errors.New("counters: already opened")
	}
	c.opened = true
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	var errs []error
	for _, ev := range c.events {
		p, err := c.openOne(ev)
		if err != nil {
			c.skipped = append(c.skipped, ev.Name+": "+err.Error())
			errs = append(errs, fmt.Errorf("counter %s: %w", ev.Name, err))
			continue
		}
		c.ctrs = append(c.ctrs, p)
		c.readers = append(c.readers, &p.r)
		c.names = append(c.names, ev.Name)
	}
	if len(errs) > 0 && !c.cfg.AllowDegraded {
		return fmt.Errorf("per-call counters: %w (or --allow-degraded to leave them out and mark the results)", errors.Join(errs...))
	}
	return nil
}

// openOne opens ev in the group (leading it when it is the first).
func (c *Counters) openOne(ev PerfEvent) (*perfCounter, error) {
	if !haveRdpmc {
		return nil, fmt.Errorf("%w on %s: rtload reads counters with the x86 rdpmc instruction", ErrNotSupported, runtime.GOARCH)
	}
	group := -1
	if len(c.ctrs) > 0 {
		group = c.ctrs[0].fd
	}
	p, err := openPerfCounter(ev, group, group < 0)
	var pe *PerfError
	if group >= 0 && errors.As(err, &pe) && pe.Errno == unix.EINVAL {
		// x86's validate_group: the group does not fit the PMU's counters.
		return nil, fmt.Errorf("%w: does not fit on the PMU together with %s (perf_event_open returned EINVAL: too few counters)", ErrNotSupported, strings.Join(c.names, ", "))
	}
	return p, err
}

// Names are the open events, in ReadInto order (empty before Open).
func (c *Counters) Names() []string { return c.names }

// Skipped lists each event left out with its reason (AllowDegraded).
func (c *Counters) Skipped() []string { return c.skipped }

// Len is how many values ReadInto writes.
func (c *Counters) Len() int { return len(c.readers) }

// ReadInto writes the current value of each open counter into buf[0:Len()]
// (raw 64-bit counts: the count of a call is the difference of two reads,
// exact modulo 2^64). buf shorter than Len() panics. Each read is one
// seqlock round and one rdpmc (a few dozen instructions, counted by the
// other counters as part of the call: measure an empty call to subtract
// it). Call it on the thread that opened c. No allocation, no system call,
// no preemption point.
//
//go:nosplit
func (c *Counters) ReadInto(buf []uint64) {
	for i, r := range c.readers {
		buf[i] = r.read()
	}
}

// Status reads each open counter's state (see PerfStatus): a non-empty
// Reason marks the trial. Call it at the end of the measured window,
// before Close.
func (c *Counters) Status() []PerfStatus {
	s := make([]PerfStatus, len(c.ctrs))
	for i, p := range c.ctrs {
		s[i] = p.status()
	}
	return s
}

// Close closes every counter (members first, then the leader);
// idempotent. Afterwards Len is 0.
func (c *Counters) Close() error {
	c.readers, c.names = nil, nil
	var errs []error
	for i := len(c.ctrs) - 1; i >= 0; i-- {
		if err := c.ctrs[i].close(); err != nil {
			errs = append(errs, err)
		}
	}
	c.ctrs = nil
	return errors.Join(errs...)
}
