package rt

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/results"
)

// DefaultHousekeepingInterval is how often the housekeeping watcher looks
// for threads to confine when HousekeepingConfig.Interval is 0.
const DefaultHousekeepingInterval = 100 * time.Millisecond

// maxHousekeepingErrors bounds HousekeepingReport.Errors; further errors
// are only counted (ErrorsDropped).
const maxHousekeepingErrors = 16

// HousekeepingConfig says where rtload's own machinery runs: the Go
// runtime's threads, main, the writer, the exporter.
type HousekeepingConfig struct {
	// CPUs are the housekeeping CPUs (the scenario's housekeeping_cpus, or
	// HousekeepingCPUs' default). Must not be empty, and every CPU must be
	// one this process may use.
	CPUs []int
	// Exempt are TIDs of threads already running that keep their own CPU
	// masks (readers started before confinement). Threads started later
	// exempt themselves with Sched.Exempt.
	Exempt []int
	// Interval between watcher passes; 0 means DefaultHousekeepingInterval.
	Interval time.Duration
}

// HousekeepingReport says what a Housekeeping did: results.Housekeeping,
// the record summary.json keeps.
type HousekeepingReport = results.Housekeeping

// Housekeeping confines every thread of this process except the exempt
// ones to the housekeeping CPUs, and keeps doing so: the Go runtime starts
// threads when it needs them, and a watcher goroutine (not a real-time
// thread) rescans /proc/self/task every Interval, confining new threads
// and any confined one whose mask widened. A pass costs one directory read
// and one sched_getaffinity(2) per non-exempt thread, plus one
// sched_setaffinity(2) per thread it changes. Safe for concurrent use.
type Housekeeping struct {
	set      unix.CPUSet // the housekeeping CPUs
	base     unix.CPUSet // union of every thread's mask before confinement
	interval time.Duration

	mu     sync.Mutex // held for a whole pass, so exemptSelf cannot race one
	exempt map[int]bool
	orig   map[int]unix.CPUSet // confined TID → its mask before confinement
	failed map[int]bool        // TIDs whose error is already reported
	alive  map[int]bool        // scratch: TIDs of the current pass
	rep    HousekeepingReport

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// ConfineHousekeeping confines this process's threads (all but c.Exempt)
// to c.CPUs once before it returns, then starts the watcher. Errors: an
// empty or out-of-range c.CPUs, a CPU this process may not use (its
// cpuset), or /proc/self/task unreadable. Per-thread failures do not fail
// it; they are in Report().Errors. Call Stop to end the watcher and give
// the confined threads their masks back.
func ConfineHousekeeping(c HousekeepingConfig) (*Housekeeping, error) {
	if len(c.CPUs) == 0 {
		return nil, errors.New("housekeeping: no CPUs given")
	}
	set, err := cpuSet(c.CPUs)
	if err != nil {
		return nil, fmt.Errorf("housekeeping cpus %s: %w", formatCPUs(c.CPUs), err)
	}
	h := &Housekeeping{set: set, interval: c.Interval, exempt: map[int]bool{}, orig: map[int]unix.CPUSet{},
		failed: map[int]bool{}, alive: map[int]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	if h.interval <= 0 {
		h.interval = DefaultHousekeepingInterval
	}
	h.rep.CPUs = cpuList(&set)
	for _, tid := range c.Exempt {
		h.exemptLocked(tid)
	}
	tids, err := listTasks()
	if err != nil {
		return nil, fmt.Errorf("housekeeping: %w", err)
	}
	for _, tid := range tids {
		var m unix.CPUSet
		if unix.SchedGetaffinity(tid, &m) == nil {
			h.base = union(h.base, m)
		}
	}
	for _, cpu := range h.rep.CPUs {
		if !h.base.IsSet(cpu) {
			return nil, fmt.Errorf("housekeeping cpus %s: cpu %d is not one this process may use (%s)",
				formatCPUs(c.CPUs), cpu, formatCPUs(cpuList(&h.base)))
		}
	}
	h.pass()
	go h.watch()
	return h, nil
}

// HousekeepingCPUs is the default housekeeping rule: the CPUs of allowed
// (this process's CPUs before any confinement, e.g. sysinfo's
// AllowedCPUs) that no reader uses, ascending. When the readers use every
// allowed CPU it returns nil and a warning that the machinery stays
// unconfined.
func HousekeepingCPUs(allowed, readerCPUs []int) (cpus []int, warning string) {
	for _, c := range allowed {
		if !slices.Contains(readerCPUs, c) && !slices.Contains(cpus, c) {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	if len(cpus) == 0 {
		return nil, fmt.Sprintf("housekeeping not confined: readers use every allowed CPU (%s), so rtload's own threads may run on reader CPUs",
			formatCPUs(allowed))
	}
	return cpus, ""
}

// Exempt registers tid as a thread that keeps its own CPU mask; its mask
// is not changed. Threads started by Start with Sched.Exempt are
// registered by Start itself, before their affinity is applied: prefer
// that, since a thread registered only after it set its mask may have
// been confined in between.
func (h *Housekeeping) Exempt(tid int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.exemptLocked(tid)
}

func (h *Housekeeping) exemptLocked(tid int) {
	if !h.exempt[tid] {
		h.exempt[tid] = true
		h.rep.Exempt++
	}
	delete(h.orig, tid)
}

// exemptSelf registers the calling thread (tid) as exempt and, when widen,
// gives it the process's mask from before confinement (it may have
// inherited the housekeeping mask, or run on a confined thread).
func (h *Housekeeping) exemptSelf(tid int, widen bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.exemptLocked(tid)
	if widen {
		if err := unix.SchedSetaffinity(tid, &h.base); err != nil {
			return fmt.Errorf("exempt from housekeeping: cpus %s: %w", formatCPUs(cpuList(&h.base)), os.NewSyscallError("sched_setaffinity", err))
		}
	}
	return nil
}

// watch runs a pass every interval until Stop.
func (h *Housekeeping) watch() {
	defer close(h.done)
	tk := time.NewTicker(h.interval)
	defer tk.Stop()
	for {
		select {
		case <-tk.C:
			h.pass()
		case <-h.stop:
			return
		}
	}
}

// pass confines every non-exempt thread whose mask is not the
// housekeeping mask, and forgets threads that have exited.
func (h *Housekeeping) pass() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rep.Passes++
	tids, err := listTasks()
	if err != nil {
		h.errorf(0, "housekeeping: %v", err)
		return
	}
	clear(h.alive)
	for _, tid := range tids {
		h.alive[tid] = true
		if h.exempt[tid] {
			continue
		}
		var cur unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &cur); err != nil {
			if !errors.Is(err, unix.ESRCH) { // ESRCH: exited since the listing
				h.errorf(tid, "sched_getaffinity(tid %d): %v", tid, err)
			}
			continue
		}
		_, known := h.orig[tid]
		if cur == h.set {
			if !known {
				h.orig[tid] = h.base // new, and born confined
				h.rep.Inherited++
			}
			continue
		}
		if err := unix.SchedSetaffinity(tid, &h.set); err != nil {
			if !errors.Is(err, unix.ESRCH) {
				h.errorf(tid, "sched_setaffinity(tid %d, cpus %s): %v", tid, formatCPUs(h.rep.CPUs), err)
			}
			continue
		}
		if known {
			h.rep.Reconfined++
		} else {
			h.orig[tid] = cur
			h.rep.Threads++
		}
	}
	for tid := range h.orig {
		if !h.alive[tid] {
			delete(h.orig, tid)
		}
	}
	for tid := range h.exempt {
		if !h.alive[tid] {
			delete(h.exempt, tid)
		}
	}
	for tid := range h.failed {
		if !h.alive[tid] {
			delete(h.failed, tid)
		}
	}
}

// errorf records one error, once per TID (tid 0: not about one thread).
func (h *Housekeeping) errorf(tid int, format string, args ...any) {
	if tid != 0 {
		if h.failed[tid] {
			return
		}
		h.failed[tid] = true
	}
	if len(h.rep.Errors) >= maxHousekeepingErrors {
		h.rep.ErrorsDropped++
		return
	}
	h.rep.Errors = append(h.rep.Errors, fmt.Sprintf(format, args...))
}

// Report returns what the housekeeping did so far.
func (h *Housekeeping) Report() HousekeepingReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rep
	r.CPUs = slices.Clone(r.CPUs)
	r.Errors = slices.Clone(r.Errors)
	return r
}

// stopPasses bounds Stop's rescans of /proc/self/task (see Stop).
const stopPasses = 8

// Stop ends the watcher, gives every thread it confined (or found born
// confined) that is still alive its earlier mask back, and returns the
// report. Threads born confined since the watcher's last pass (the Go
// runtime clones a new thread from a confined one, so it inherits the
// housekeeping mask) are found by a rescan and given the mask from before
// confinement; the rescan repeats, at most stopPasses times, until it
// finds none, since a thread cloned by a confined one while Stop restores
// the others is born confined too. (Without the rescan such threads stayed
// confined after Stop: under load, 2 of 60 runs of this package's tests
// found one, as a thread born later with the housekeeping mask.) Call it
// once every exempt thread has been started; later calls return the same
// report.
func (h *Housekeeping) Stop() HousekeepingReport {
	h.stopOnce.Do(func() {
		close(h.stop)
		<-h.done
		h.mu.Lock()
		defer h.mu.Unlock()
		for range stopPasses {
			h.adoptBornConfined()
			if len(h.orig) == 0 {
				break
			}
			h.restoreLocked()
		}
	})
	return h.Report()
}

// adoptBornConfined adds to orig every live, non-exempt thread not yet in
// it whose mask is the housekeeping mask: born confined since the last
// pass. Its earlier mask is the process's from before confinement.
func (h *Housekeeping) adoptBornConfined() {
	tids, err := listTasks()
	if err != nil {
		h.errorf(0, "housekeeping: %v", err)
		return
	}
	for _, tid := range tids {
		if _, known := h.orig[tid]; known || h.exempt[tid] {
			continue
		}
		var cur unix.CPUSet
		if unix.SchedGetaffinity(tid, &cur) == nil && cur == h.set {
			h.orig[tid] = h.base
			h.rep.Inherited++
		}
	}
}

// restoreLocked gives every thread in orig that still has the
// housekeeping mask its earlier mask back, and empties orig.
func (h *Housekeeping) restoreLocked() {
	for tid, m := range h.orig {
		var cur unix.CPUSet
		if unix.SchedGetaffinity(tid, &cur) != nil || cur != h.set {
			continue // exited, or changed by someone else since
		}
		if err := unix.SchedSetaffinity(tid, &m); err != nil {
			if !errors.Is(err, unix.ESRCH) {
				h.errorf(0, "restore sched_setaffinity(tid %d, cpus %s): %v", tid, formatCPUs(cpuList(&m)), err)
			}
			continue
		}
		h.rep.Restored++
	}
	clear(h.orig)
}
