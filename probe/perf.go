package probe

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/rt"
)

// Counters is a set of perf_event_open(2) counters on one reader thread:
// the software events always, hardware ones where the CPU (or VM) and the
// kernel's settings allow. It is read by the non-real-time writer with
// read(2) at interval boundaries, never by the real-time thread, so the
// measured path does not pay for it.
type Counters struct {
	fds []int
	// Names of the open counters, in Read order.
	Names []string
	// Skipped lists the events not counted and why ("cycles: not supported
	// by this CPU/VM: perf_event_open returned ENOENT").
	Skipped []string
}

// OpenCounters opens events on thread tid. An event the machine lacks or
// the settings forbid is skipped with its reason; the error is non-nil
// (and nothing stays open) only when no event opened.
func OpenCounters(tid int, events []rt.PerfEvent) (*Counters, error) {
	c := &Counters{}
	var errs []error
	for _, ev := range events {
		fd, err := rt.OpenPerfEvent(ev, tid)
		if err != nil {
			c.Skipped = append(c.Skipped, ev.Name+": "+err.Error())
			errs = append(errs, fmt.Errorf("%s: %w", ev.Name, err))
			continue
		}
		c.fds = append(c.fds, fd)
		c.Names = append(c.Names, ev.Name)
	}
	if len(c.fds) == 0 {
		return nil, fmt.Errorf("perf counters on thread %d: %w", tid, errors.Join(errs...))
	}
	return c, nil
}

// Read reads every open counter into into (len(Names) values, scaled for
// multiplexing); it does not allocate.
func (c *Counters) Read(into []uint64) error {
	for i, fd := range c.fds {
		v, err := rt.ReadPerfEvent(fd)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Names[i], err)
		}
		into[i] = v
	}
	return nil
}

// Close closes every counter; it is idempotent.
func (c *Counters) Close() error {
	var errs []error
	for _, fd := range c.fds {
		if err := unix.Close(fd); err != nil {
			errs = append(errs, err)
		}
	}
	c.fds = nil
	return errors.Join(errs...)
}
