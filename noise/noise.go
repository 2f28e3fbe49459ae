// Package noise is background load that runs beside the measured readers:
// each Source starts its own OS threads (rt.Start: policy, priority, nice
// and affinity applied and read back), does real work, and reports the
// work it achieved (record.Work) so a report proves the noise was there.
//
// Kinds (Config.Kind): spin (busy loop, loops), memory (streaming copies
// between the halves of a buffer, bytes), syscall (a tight loop of a cheap
// raw syscall, syscalls), messaging (workload.Messaging rounds, the hackbench
// model, messages received), file_write (workload.FileWrite passes, the fstime
// loop, bytes written), udp (a paced loopback flood into a sink socket the
// same thread drains, messages sent).
//
// Every thread checks a stop flag after each slice of work (well under
// 1 ms for spin, memory, syscall and udp; one write pass for file_write;
// one workload.Messaging round, which watches the flag itself, for messaging),
// and counts its work in atomics on its own cache lines.
package noise

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

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

// Work is everything a Noise did: the record.Work a report prints (Count
// in the kind's Unit over Elapsed ns) plus the other counters.
type Work struct {
	record.Work
	// Kind is the Config's kind ("" read as spin).
	Kind string
	// Threads is the number of noise threads started (1 for messaging:
	// the thread that runs the rounds).
	Threads int
	// Bytes moved: memory copied, file_write written, messaging and udp
	// payload bytes (udp: sent).
	Bytes uint64
	// Sent and Received messages (messaging, udp); 0 for other kinds.
	Sent, Received uint64
	// Drops is udp's sink drop counter (sk_drops) at Stop.
	Drops uint64
	// OnNs is the time the threads spent in the "on" phase, summed over
	// threads; Duty = OnNs / (Threads × Elapsed). Both are what the
	// machine gave: a thread woken late for its phase starts it late.
	OnNs int64
	Duty float64
	// CPUNs is the threads' time on a CPU while they ran (schedstat, read
	// by each thread at its start and end; 0 when procfs could not be
	// read); CPUShare = CPUNs / (Threads × Elapsed): the share of a CPU
	// the noise really got, which a duty cycle's on phases only bound.
	CPUNs    int64
	CPUShare float64
	// Applied is each thread's scheduling state read back from the kernel.
	Applied []rt.Applied
}

// Noise is one running noise entry: Threads OS threads doing one kind of
// work, with an optional duty cycle. Create it with New; Start and Stop
// once each. Report, State, DutyObserved and TIDs are safe to call from any
// goroutine at any time.
type Noise struct {
	cfg Config

	mu      sync.Mutex // Start/Stop
	state   atomic.Int32
	stop    atomic.Bool
	quit    chan struct{} // closed by Stop: wakes threads sleeping in "off"
	begin   chan struct{} // closed by Start once every thread is ready
	t0      atomic.Int64  // CLOCK_MONOTONIC ns at which the threads began
	end     atomic.Int64  // ns at which Stop ended the threads
	threads []*rt.Thread
	workers []worker
	applied []rt.Applied // written by thread i before Start returns
	errnos  []unix.Errno // written by thread i before it ends
	slots   []slot
	addrs   []netip.AddrPort // udp sinks
	closed  error            // workers' close errors, from Stop
	// phases is each thread's log of its on phases (at most maxPhases;
	// phasesDropped counts the rest) and cpuNs its time on a CPU, both
	// written only by that thread and read after it ended (Phases,
	// Report after Stop).
	phases        [][]Phase
	phasesDropped []int
	cpuNs         []atomic.Int64
}

// Phase is one on phase as a noise thread ran it (CLOCK_MONOTONIC ns):
// it began at StartNs, checked its clock for the last time before its
// last slice of work at LastStepNs (a slice begins only after a check that
// the phase's time is not up) and ended at EndNs (a slice in progress
// when the time is up runs to its end).
type Phase struct {
	StartNs, LastStepNs, EndNs int64
}

// maxPhases bounds each thread's phase log: 20 ms + 30 ms phases for
// 50 s.
const maxPhases = 1000

var _ Source = (*Noise)(nil)

// Noise states (State).
const (
	idle int32 = iota
	running
	stopped
)

// slot is one thread's counters, written only by that thread. It fills
// two cache lines so no two threads' counters share one, nor a pair the
// adjacent-line prefetcher fetches together.
type slot struct {
	units atomic.Uint64 // in the kind's Unit
	bytes atomic.Uint64
	sent  atomic.Uint64
	recv  atomic.Uint64
	onNs  atomic.Int64 // completed "on" phases
	since atomic.Int64 // start of the current "on" phase; 0 while off
	drops atomic.Uint64
	_     [128 - 7*8]byte
}

var _ [0]struct{} = [unsafe.Sizeof(slot{}) % 128]struct{}{}

// worker is one thread's work of one kind. Its methods run on that thread
// only, except finish (after the thread ended) and interrupt.
type worker interface {
	// phase is called at the start of every "on" phase (now in ns).
	phase(now int64)
	// step does one slice of work, adds it to s, and returns; end is the
	// phase's end (CLOCK_MONOTONIC ns; MaxInt64 when always on), which
	// paced kinds do not sleep past. A non-zero errno ends the thread.
	step(s *slot, end int64) unix.Errno
	// finish does the last accounting into s and releases what the
	// worker holds (fds, files, buffers). Called once, after the thread
	// ended, or on a Start error path.
	finish(s *slot) error
}

// interrupter is a worker whose step blocks beyond one slice (messaging):
// Stop calls interrupt after setting the stop flag.
type interrupter interface{ interrupt() }

// New validates cfg (see Config.Validate) and returns a stopped Noise.
// FIFO/RR without AllowRT is refused with an error wrapping ErrRTNoise.
// Nothing is opened or allocated on the kernel side until Start.
func New(cfg Config) (*Noise, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.CPUs = append([]int(nil), cfg.CPUs...) // our copy; the caller's stays theirs
	n := threadCount(cfg)
	return &Noise{cfg: cfg, quit: make(chan struct{}), begin: make(chan struct{}),
		slots: make([]slot, n), applied: make([]rt.Applied, n), errnos: make([]unix.Errno, n),
		phases: make([][]Phase, n), phasesDropped: make([]int, n), cpuNs: make([]atomic.Int64, n)}, nil
}

// threadCount is the number of threads Start runs for cfg.
func threadCount(cfg Config) int {
	if cfg.kind() == "messaging" {
		return 1
	}
	return cfg.Threads
}

// newWorker builds thread i's worker (sockets, files, buffers) before the
// thread starts.
func newWorker(cfg Config, stop *atomic.Bool) (worker, error) {
	switch cfg.kind() {
	case "spin":
		return &spinWorker{}, nil
	case "memory":
		return newMemoryWorker(cfg.size()), nil
	case "syscall":
		return newSyscallWorker(orDefault(cfg.Syscall, DefaultSyscall)), nil
	case "udp":
		return newUDPWorker(cfg.size(), orDefault(cfg.Rate, DefaultRate))
	case "file_write":
		return newFileWriteWorker(cfg)
	case "messaging":
		return newMessagingWorker(cfg, stop)
	}
	return nil, fmt.Errorf("kind %q unknown", cfg.Kind)
}

// sched is thread i's scheduling request.
func (n *Noise) sched(i int) rt.Sched {
	c := n.cfg
	s := rt.Sched{Name: rt.NoiseName(c.name(), i), Exempt: c.Exempt, Policy: c.Policy, AllowDegraded: c.AllowDegraded}
	if c.isRT() {
		s.Priority = c.Priority
	} else {
		s.Nice = c.Nice
	}
	if c.kind() == "messaging" {
		// The thread only runs rounds; workload.Messaging applies CPUs and
		// Nice to the workers that do the messaging (and their names).
		return rt.Sched{Name: rt.NoisePrefix + c.name(), Exempt: c.Exempt, AllowDegraded: c.AllowDegraded}
	}
	if len(c.CPUs) > 0 {
		s.CPUs = []int{c.CPUs[i%len(c.CPUs)]}
	}
	return s
}

// Start builds every thread's worker, starts the threads with their
// scheduling applied and read back (rt.Start), and returns once all run
// from a common start time. On error every thread already started is
// stopped and everything opened is closed. Start may be called once.
func (n *Noise) Start() (err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state.Load() != idle {
		return fmt.Errorf("noise %s: already started", n.cfg.kind())
	}
	n.state.Store(stopped) // a failed Start leaves the Noise stopped
	defer func() {
		if err != nil {
			n.stop.Store(true)
			close(n.begin)
			n.endThreads()
			n.closed = n.finishWorkers()
		}
	}()
	var ready sync.WaitGroup
	for i := range n.slots {
		w, err := newWorker(n.cfg, &n.stop)
		if err != nil {
			return fmt.Errorf("noise %s thread %d: %w", n.cfg.kind(), i, err)
		}
		n.workers = append(n.workers, w)
		if u, ok := w.(*udpWorker); ok {
			n.addrs = append(n.addrs, u.addr())
		}
		ready.Add(1)
		n.phases[i] = make([]Phase, 0, maxPhases)
		t, err := rt.Start(n.sched(i), func(a rt.Applied) {
			n.applied[i] = a
			base, baseErr := threadCPU()
			ready.Done()
			<-n.begin
			n.errnos[i] = n.run(i, w)
			if end, err := threadCPU(); err == nil && baseErr == nil {
				n.cpuNs[i].Store(end - base)
			}
		})
		if err != nil {
			ready.Done()
			return fmt.Errorf("noise %s thread %d: %w", n.cfg.kind(), i, err)
		}
		n.threads = append(n.threads, t)
	}
	ready.Wait()
	n.t0.Store(rt.Monotonic())
	n.state.Store(running)
	close(n.begin)
	return nil
}

// run is thread i's life: work slices until stop, in "on" phases when a
// duty cycle is set: phase k runs in [t0 + k·(On+Off), t0 + k·(On+Off) +
// On), entered only inside it (a thread woken after its phase's end skips
// the phase). It returns the errno that ended it early, or 0.
func (n *Noise) run(i int, w worker) unix.Errno {
	if n.stop.Load() {
		return 0
	}
	on, off := int64(n.cfg.On), int64(n.cfg.Off)
	if off <= 0 {
		return n.onPhase(i, w, rt.Monotonic(), math.MaxInt64)
	}
	period := on + off
	t0 := n.t0.Load()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for !n.stop.Load() {
		now := rt.Monotonic()
		k := (now - t0) / period
		start := t0 + k*period
		if now < start+on {
			if errno := n.onPhase(i, w, now, start+on); errno != 0 {
				return errno
			}
		}
		// Off: sleep to the next cycle, or until Stop closes quit.
		timer.Reset(time.Duration(start + period - rt.Monotonic()))
		select {
		case <-timer.C:
		case <-n.quit:
			return 0
		}
	}
	return 0
}

// onPhase works from now until end (ns) or stop, keeping thread i's
// phase clock and log.
func (n *Noise) onPhase(i int, w worker, now, end int64) unix.Errno {
	s := &n.slots[i]
	s.since.Store(now)
	w.phase(now)
	var errno unix.Errno
	last := now // each slice begins right after a check that the phase's time is not up
	for !n.stop.Load() {
		if errno = w.step(s, end); errno != 0 {
			break
		}
		t := rt.Monotonic()
		if end != math.MaxInt64 && t >= end {
			break
		}
		last = t
	}
	done := rt.Monotonic()
	s.onNs.Add(done - now)
	s.since.Store(0)
	if len(n.phases[i]) < cap(n.phases[i]) {
		n.phases[i] = append(n.phases[i], Phase{StartNs: now, LastStepNs: last, EndNs: done})
	} else {
		n.phasesDropped[i]++
	}
	return errno
}

// threadCPU is the calling thread's CPU time so far, user and system, in
// ns (getrusage(2) RUSAGE_THREAD). A raw system call: a real-time noise
// thread leaving an ordinary one can spin behind a SCHED_OTHER runtime
// thread (see rt.SleepUntilRaw).
func threadCPU() (int64, error) {
	var ru unix.Rusage
	if _, _, e := unix.RawSyscall(unix.SYS_GETRUSAGE, uintptr(unix.RUSAGE_THREAD), uintptr(unsafe.Pointer(&ru)), 0); e != 0 {
		return 0, os.NewSyscallError("getrusage", e)
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), nil
}

// Phases returns each thread's on phases, in order, and how many were
// not logged (past maxPhases), once Stop returned (nil before). With the
// schedule (Schedule) they show what the noise was told to do and did:
// the share of the machine it then got is Work.CPUShare.
func (n *Noise) Phases() ([][]Phase, []int) {
	if n.state.Load() != stopped {
		return nil, nil
	}
	return n.phases, n.phasesDropped
}

// Schedule is the duty cycle's time origin (CLOCK_MONOTONIC ns, 0 before
// Start) and its On and Off phases (Off 0: always on).
func (n *Noise) Schedule() (t0 int64, on, off time.Duration) {
	return n.t0.Load(), n.cfg.On, n.cfg.Off
}

// endThreads sets stop, interrupts blocking workers and waits for every
// thread.
func (n *Noise) endThreads() {
	n.stop.Store(true)
	for _, w := range n.workers {
		if i, ok := w.(interrupter); ok {
			i.interrupt()
		}
	}
	select {
	case <-n.quit:
	default:
		close(n.quit)
	}
	for _, t := range n.threads {
		t.Wait()
	}
}

// finishWorkers lets every worker do its last accounting and close.
func (n *Noise) finishWorkers() error {
	var errs []error
	for i, w := range n.workers {
		if err := w.finish(&n.slots[i]); err != nil {
			errs = append(errs, fmt.Errorf("noise %s thread %d: %w", n.cfg.kind(), i, err))
		}
	}
	n.workers = nil // let buffers go
	return errors.Join(errs...)
}

// Stop ends every thread, closes what Start opened (sockets, files) and
// returns the work done; a thread that ended early on a syscall error is
// reported in err, with the work still counted. Idempotent; before Start
// it returns zero work and Start is refused afterwards.
func (n *Noise) Stop() (record.Work, error) {
	n.mu.Lock()
	n.state.CompareAndSwap(idle, stopped) // Stop before Start: no Start after it
	if n.state.Load() == running {
		n.endThreads()
		n.end.Store(rt.Monotonic())
		n.state.Store(stopped)
		n.closed = n.finishWorkers()
	}
	n.mu.Unlock()
	var errs []error
	for i, e := range n.errnos {
		if e != 0 {
			errs = append(errs, fmt.Errorf("noise %s thread %d ended early: %w", n.cfg.kind(), i, e))
		}
	}
	if n.closed != nil {
		errs = append(errs, n.closed)
	}
	return n.Report().Work, errors.Join(errs...)
}

// Report returns the work done so far (all of it after Stop).
func (n *Noise) Report() Work {
	w := Work{Work: record.Work{Unit: Unit(n.cfg.kind())}, Kind: n.cfg.kind()}
	st := n.state.Load()
	t0 := n.t0.Load()
	if t0 == 0 {
		return w
	}
	now := rt.Monotonic()
	if st == stopped {
		now = n.end.Load()
	}
	w.Elapsed = now - t0
	w.Threads = len(n.slots)
	for i := range n.slots {
		s := &n.slots[i]
		w.Count += s.units.Load()
		w.Bytes += s.bytes.Load()
		w.Sent += s.sent.Load()
		w.Received += s.recv.Load()
		w.OnNs += s.onNs.Load()
		w.Drops += s.drops.Load()
		if since := s.since.Load(); since != 0 && st == running {
			w.OnNs += max(0, now-since)
		}
	}
	for i := range n.cpuNs {
		w.CPUNs += n.cpuNs[i].Load()
	}
	if w.Elapsed > 0 {
		w.Duty = float64(w.OnNs) / (float64(w.Threads) * float64(w.Elapsed))
		w.CPUShare = float64(w.CPUNs) / (float64(w.Threads) * float64(w.Elapsed))
	}
	// t0 is stored after every thread wrote its applied entry.
	w.Applied = append([]rt.Applied(nil), n.applied...)
	return w
}

// DutyObserved is the fraction of wall time since Start (to Stop) that
// the threads were in their "on" phase, averaged over threads, measured
// with CLOCK_MONOTONIC: ≈ On/(On+Off) with a duty cycle, ≈ 1 without.
func (n *Noise) DutyObserved() float64 { return n.Report().Duty }

// State is "on" while any thread is in its "on" phase, "off" while all
// sleep in "off", and "stopped" before Start and after Stop. It allocates
// nothing and can tag wakeups.
func (n *Noise) State() string {
	if n.state.Load() != running {
		return "stopped"
	}
	for i := range n.slots {
		if n.slots[i].since.Load() != 0 {
			return "on"
		}
	}
	return "off"
}

// TIDs returns the kernel thread ids of the noise threads (nil before
// Start), for reading their scheduling back (rt.ThreadSched).
func (n *Noise) TIDs() []int {
	if n.t0.Load() == 0 { // t0 is stored after every thread wrote its applied entry
		return nil
	}
	tids := make([]int, len(n.applied))
	for i, a := range n.applied {
		tids[i] = a.TID
	}
	return tids
}

// Addrs returns the udp kind's sink addresses, one per thread, all on
// 127.0.0.1: the only destinations it sends to. Nil for other kinds and
// before Start.
func (n *Noise) Addrs() []netip.AddrPort {
	if n.t0.Load() == 0 {
		return nil
	}
	return append([]netip.AddrPort(nil), n.addrs...)
}

// Config returns the configuration n was built from.
func (n *Noise) Config() Config { return n.cfg }
