package workload

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/rt"
)

// MessagingConfig is hackbench's model (seed 001_4d16c5daf9962626;
// hackbench -T -g Groups -f FDs -l Loops -s Size [--pipe]): in each group,
// every sender writes Loops messages of Size bytes to every receiver of its
// group, each receiver over its own socketpair or pipe. Counts have no
// defaults: the zero value is invalid.
type MessagingConfig struct {
	// Groups of senders and receivers, ≥ 1 (hackbench default 10).
	Groups int
	// FDs is the senders and the receivers per group, ≥ 1 (default 20).
	FDs int
	// Loops is the messages each sender sends to each receiver of its
	// group, ≥ 1 (default 100).
	Loops int
	// Size is the bytes per message, ≥ 1 (default 100).
	Size int
	// Transport is the channel of each sender–receiver pair.
	Transport Transport
	// CPUs (optional) pins worker thread i to CPUs[i%len(CPUs)]. Workers
	// are numbered group by group, receivers before senders.
	CPUs []int
	// Nice of every worker thread (SCHED_OTHER), -20–19.
	Nice int
	// Pool keeps the worker threads across Runs: NewMessaging starts them
	// once (failing if one cannot start), each Run releases them for one
	// round, Close ends them. Without Pool every Run starts its own
	// threads, which exit at its end, as hackbench -T does (seed 001's
	// probe, one Run per Messaging). Rounds run back to back (the
	// messaging noise) want the pool: the Go runtime ends the OS thread
	// of every locked goroutine that exits and makes a new one for the
	// next, about 52 KB of heap a round of 8 threads.
	Pool bool
	// Sched is the template of every worker's rt.Sched: Exempt,
	// AllowDegraded, TimerSlackNs and Mlock apply as given; Name, when
	// set, becomes Name + "." + i for worker i (rt.Comm shortens it).
	// Policy, Priority, Nice and CPUs must be zero: workers run at
	// SCHED_OTHER at Nice above, pinned by CPUs above.
	Sched rt.Sched
}

// Transport is the channel a messaging round's pairs talk over.
type Transport uint8

// The transports: TransportSocket, the zero value, an AF_UNIX SOCK_STREAM
// socketpair (hackbench's default); TransportPipe, a pipe (hackbench
// --pipe).
const (
	TransportSocket Transport = iota
	TransportPipe
)

// String is "socket" or "pipe".
func (t Transport) String() string {
	switch t {
	case TransportSocket:
		return "socket"
	case TransportPipe:
		return "pipe"
	}
	return fmt.Sprintf("transport(%d)", uint8(t))
}

// validate lists every problem of c; it does not change c.
func (c MessagingConfig) validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"groups", c.Groups}, {"fds", c.FDs}, {"loops", c.Loops}, {"size", c.Size}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("%s %d: must be ≥ 1", f.name, f.v))
		}
	}
	if c.Transport != TransportSocket && c.Transport != TransportPipe {
		errs = append(errs, fmt.Errorf("%s unknown (allowed: socket, pipe)", c.Transport))
	}
	for _, cpu := range c.CPUs {
		if cpu < 0 {
			errs = append(errs, fmt.Errorf("cpu %d: must be ≥ 0", cpu))
		}
	}
	if c.Nice < -20 || c.Nice > 19 {
		errs = append(errs, fmt.Errorf("nice %d out of range (allowed: -20–19)", c.Nice))
	}
	if s := c.Sched; s.Policy != rt.Other || s.Priority != 0 || s.Nice != 0 || len(s.CPUs) > 0 {
		errs = append(errs, fmt.Errorf("sched template %s priority %d nice %d cpus %v: must be zero (workers run at SCHED_OTHER; set Nice and CPUs)",
			s.Policy, s.Priority, s.Nice, s.CPUs))
	}
	if len(errs) > 0 {
		return fmt.Errorf("messaging config: %w", errors.Join(errs...))
	}
	return nil
}

// MessagingResult is one Run's accounting.
type MessagingResult struct {
	// ElapsedNs is CLOCK_MONOTONIC from the release of the workers to the
	// last worker's end.
	ElapsedNs int64
	// UserNs and SysNs sum the workers' getrusage(RUSAGE_THREAD) CPU time
	// from their release to their end (not thread creation or set-up). The
	// kernel splits a thread's exact runtime between user and system in
	// the ratio of the ticks that sampled each (unless it does full
	// dynticks accounting), so the split of a run of a few ticks is coarse;
	// CPUNs is the exact sum.
	UserNs, SysNs int64
	// CPUNs sums the workers' CLOCK_THREAD_CPUTIME_ID time (the scheduler's
	// sum_exec_runtime) over the same span.
	CPUNs int64
	// Sent counts messages written whole by senders; Received complete
	// Size-byte messages read by receivers (bytes/Size per receiver).
	Sent, Received uint64
	// Bytes is the bytes received.
	Bytes uint64
	// Workers is the threads that ran (Groups*FDs*2 unless Err is set).
	Workers int
	// Stopped is true when stop ended the run before every message was sent.
	Stopped bool
	// Errors counts failed read(2)/write(2) calls (EINTR is retried, not
	// counted); LastErrno is the last of them.
	Errors    uint64
	LastErrno unix.Errno
	// Err is a set-up failure (a worker thread could not start, without
	// Pool; the Messaging is closed; or rebuilding its fds failed); the
	// counts then cover what ran.
	Err error
}

// pair is one receiver's channel: the receiver reads rx; every sender of
// its group writes tx.
type pair struct{ rx, tx int }

// worker is one thread's slot, written by that thread, read by Run after
// its part of the round ended.
type worker struct {
	buf           []byte
	msgs, bytes   uint64
	errors        uint64
	errno         unix.Errno
	userNs, sysNs int64
	cpuNs         int64
	endNs         int64
	incomplete    bool // a sender that did not send all its messages
	stopped       bool
	_             [64]byte // keep slots of different threads off one cache line
}

// Messaging runs hackbench's message passing between thread pairs over
// blocking AF_UNIX socketpairs or pipes, driven by raw read(2)/write(2)
// (never the netpoller). Run and Close must not be called concurrently.
type Messaging struct {
	cfg     MessagingConfig
	pipe    bool
	pairs   []pair // index g*FDs + r
	workers []worker
	// senders and all count the workers of the running round still busy
	// (senders: the senders only); abort, set before a release, makes
	// them end at once (a thread of the round could not start).
	senders, all sync.WaitGroup
	abort        atomic.Bool
	// pool is the Pool's per-worker release channels (one stop flag per
	// round; closed by Close), threads and read-back scheduling.
	pool    []chan *atomic.Bool
	threads []*rt.Thread
	applied []rt.Applied
	// broken: a stopped or failed Run shut down write ends; the next Run
	// makes every pair again.
	broken bool
	closed bool
}

// NewMessaging creates every socketpair (or pipe) up front, one per
// receiver, all blocking and close-on-exec, preallocates one Size-byte
// buffer per worker and, with Pool, starts the worker threads. On error
// nothing stays open and no thread stays.
func NewMessaging(cfg MessagingConfig) (*Messaging, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := cfg.Groups * cfg.FDs
	m := &Messaging{cfg: cfg, pipe: cfg.Transport == TransportPipe, pairs: make([]pair, n), workers: make([]worker, 2*n)}
	for i := range m.pairs {
		m.pairs[i] = pair{-1, -1}
	}
	if err := m.open(); err != nil {
		m.Close()
		return nil, err
	}
	for i := range m.workers {
		m.workers[i].buf = make([]byte, cfg.Size)
		for j := range m.workers[i].buf {
			m.workers[i].buf[j] = byte(j)
		}
	}
	if cfg.Pool {
		if err := m.startPool(); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// sched is worker i's scheduling: the template at SCHED_OTHER and Nice,
// pinned to CPUs[i%len(CPUs)] when CPUs is set.
func (m *Messaging) sched(i int) rt.Sched {
	s := m.cfg.Sched
	s.Policy, s.Nice = rt.Other, m.cfg.Nice
	if s.Name != "" {
		s.Name += "." + strconv.Itoa(i)
	}
	if len(m.cfg.CPUs) > 0 {
		s.CPUs = []int{m.cfg.CPUs[i%len(m.cfg.CPUs)]}
	}
	return s
}

// isSender reports whether worker i is a sender: workers are numbered
// group by group, receivers before senders.
func (m *Messaging) isSender(i int) bool { return i%(2*m.cfg.FDs) >= m.cfg.FDs }

// startPool starts one thread per worker that runs a round each time Run
// releases it, until Close closes its channel. It returns once every
// thread runs; the threads already started stay for Close on error.
func (m *Messaging) startPool() error {
	m.pool = make([]chan *atomic.Bool, len(m.workers))
	m.applied = make([]rt.Applied, len(m.workers))
	for i := range m.workers {
		release := make(chan *atomic.Bool, 1)
		t, a, err := rt.Start(m.sched(i), nil, func(rt.Applied) {
			for stop := range release {
				m.work(i, stop)
			}
		})
		if err != nil {
			return fmt.Errorf("messaging worker %d (group %d): %w", i, i/(2*m.cfg.FDs), err)
		}
		m.pool[i], m.applied[i], m.threads = release, a, append(m.threads, t)
	}
	return nil
}

// Applied returns the Pool's workers' scheduling as read back from the
// kernel, index = worker number (receivers of group 0, its senders, then
// group 1, …); nil without Pool.
func (m *Messaging) Applied() []rt.Applied {
	return append([]rt.Applied(nil), m.applied...)
}

// open creates every pair still closed.
func (m *Messaging) open() error {
	for i := range m.pairs {
		if m.pairs[i].rx >= 0 {
			continue
		}
		var fds [2]int
		if m.pipe {
			if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
				return fmt.Errorf("messaging receiver %d: %w", i, os.NewSyscallError("pipe2", err))
			}
		} else {
			var err error
			if fds, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
				return fmt.Errorf("messaging receiver %d: %w", i, os.NewSyscallError("socketpair", err))
			}
		}
		m.pairs[i] = pair{rx: fds[0], tx: fds[1]}
	}
	return nil
}

// closePairs closes every fd of every pair and reports the first error.
func (m *Messaging) closePairs() error {
	var first error
	for i := range m.pairs {
		for _, fd := range []*int{&m.pairs[i].rx, &m.pairs[i].tx} {
			if *fd >= 0 {
				if err := unix.Close(*fd); err != nil && first == nil {
					first = fmt.Errorf("messaging: %w", os.NewSyscallError("close", err))
				}
				*fd = -1
			}
		}
	}
	return first
}

// Run starts Groups*FDs*2 worker threads (rt.Start, SCHED_OTHER at Nice,
// pinned when CPUs is set), waits until all are ready, releases them
// together and returns when every one ended; with Pool it releases the
// threads NewMessaging started and returns when every one is back
// waiting. Each sender writes Loops
// rounds of one Size-byte message to each receiver of its group (write(2)
// repeated on short writes); each receiver reads Size bytes at a time until
// it has FDs*Loops*Size. When stop (nil = none) is set, senders stop
// between messages; once every sender ended, Run shuts down the write ends
// (shutdown(2) SHUT_WR, or close for a pipe), so receivers read what is
// queued, see EOF and end. The next Run then makes every pair again. A
// stop set before Run starts (or releases) no thread and returns Stopped.
// Counters are fresh on each call.
func (m *Messaging) Run(stop *atomic.Bool) MessagingResult {
	var res MessagingResult
	if m.closed {
		res.Err = errors.New("messaging: run after Close")
		return res
	}
	if stop != nil && stop.Load() {
		res.Stopped = true
		return res
	}
	if m.broken {
		if err := m.closePairs(); err != nil {
			res.Err = err
			return res
		}
		m.broken = false
		if err := m.open(); err != nil {
			m.broken = true
			res.Err = err
			return res
		}
	}
	for i := range m.workers {
		w := &m.workers[i]
		*w = worker{buf: w.buf}
	}
	m.abort.Store(false)
	var t0 int64
	started := len(m.pool)
	if m.pool != nil {
		t0 = m.release(stop)
	} else {
		t0, started, res.Err = m.startRound(stop)
	}
	m.senders.Wait()
	incomplete := m.abort.Load()
	for i := range m.workers {
		incomplete = incomplete || m.isSender(i) && m.workers[i].incomplete // receivers still run
	}
	if incomplete {
		// Receivers wait for bytes that will never come: end their streams.
		m.shutdownWriters()
	}
	m.all.Wait()
	for i := range m.workers {
		if m.workers[i].incomplete {
			m.broken = true // make every pair again before the next Run
		}
	}

	res.Workers = started
	for i := range m.workers {
		w := &m.workers[i]
		if m.isSender(i) {
			res.Sent += w.msgs
		} else {
			res.Received += w.msgs
			res.Bytes += w.bytes
		}
		res.UserNs += w.userNs
		res.SysNs += w.sysNs
		res.CPUNs += w.cpuNs
		res.Errors += w.errors
		if w.errno != 0 {
			res.LastErrno = w.errno
		}
		if w.stopped {
			res.Stopped = true
		}
		if w.endNs-t0 > res.ElapsedNs {
			res.ElapsedNs = w.endNs - t0
		}
	}
	return res
}

// release hands the Pool's workers one round (its stop flag) and returns
// the release time (CLOCK_MONOTONIC ns).
func (m *Messaging) release(stop *atomic.Bool) int64 {
	m.all.Add(len(m.workers))
	m.senders.Add(len(m.workers) / 2)
	t0 := rt.Monotonic()
	for _, c := range m.pool {
		c <- stop // buffered: the worker takes it when it is back waiting
	}
	return t0
}

// startRound starts one thread per worker for this round only (rt.Start
// returns once each is applied) and releases them together. It returns the
// release time (CLOCK_MONOTONIC ns) and the threads started; when one
// cannot start it sets abort, so the started ones end at once, and
// returns the error.
func (m *Messaging) startRound(stop *atomic.Bool) (t0 int64, started int, err error) {
	release := make(chan struct{})
	for i := range m.workers {
		sender := m.isSender(i)
		m.all.Add(1)
		if sender {
			m.senders.Add(1)
		}
		_, _, err = rt.Start(m.sched(i), nil, func(rt.Applied) {
			<-release
			m.work(i, stop)
		})
		if err != nil {
			m.all.Done()
			if sender {
				m.senders.Done()
			}
			err = fmt.Errorf("messaging worker %d (group %d): %w", i, i/(2*m.cfg.FDs), err)
			m.abort.Store(true)
			break
		}
		started++
	}
	t0 = rt.Monotonic()
	close(release)
	return t0, started, err
}

// work is worker i's part of one round, on its own thread: a receiver or
// a sender timed from its release to its end with getrusage(2)
// RUSAGE_THREAD and CLOCK_THREAD_CPUTIME_ID. It marks the worker done in
// senders (a sender, once its sending ended) and all.
func (m *Messaging) work(i int, stop *atomic.Bool) {
	defer m.all.Done()
	w := &m.workers[i]
	sender := m.isSender(i)
	if m.abort.Load() {
		w.incomplete = true
		if sender {
			m.senders.Done()
		}
		return
	}
	fds, size := m.cfg.FDs, m.cfg.Size
	g, k := i/(2*fds), i%(2*fds)
	var ru0, ru1 unix.Rusage
	var cpu0, cpu1 unix.Timespec
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru0)
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &cpu0)
	if sender {
		w.send(m.pairs[g*fds:(g+1)*fds], m.cfg.Loops, stop)
		m.senders.Done()
	} else {
		w.receive(&m.pairs[g*fds+k], m.pipe, uint64(fds)*uint64(m.cfg.Loops)*uint64(size), size)
	}
	w.endNs = rt.Monotonic()
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &cpu1)
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru1)
	w.userNs = ru1.Utime.Nano() - ru0.Utime.Nano()
	w.sysNs = ru1.Stime.Nano() - ru0.Stime.Nano()
	w.cpuNs = cpu1.Nano() - cpu0.Nano()
}

// shutdownWriters ends every stream: shutdown(2) SHUT_WR on socket write
// ends, close(2) on pipe write ends. Called once every sender ended.
func (m *Messaging) shutdownWriters() {
	m.broken = true
	for i := range m.pairs {
		p := &m.pairs[i]
		if p.tx < 0 {
			continue
		}
		if m.pipe {
			_ = unix.Close(p.tx)
			p.tx = -1
		} else {
			_ = unix.Shutdown(p.tx, unix.SHUT_WR)
		}
	}
}

// send is a sender thread: loops rounds of one message to each receiver of
// its group, stopping between messages when stop is set.
func (w *worker) send(group []pair, loops int, stop *atomic.Bool) {
	for l := 0; l < loops; l++ {
		for _, p := range group {
			if stop != nil && stop.Load() {
				w.stopped, w.incomplete = true, true
				return
			}
			if errno := w.writeFull(p.tx); errno != 0 {
				w.incomplete = true
				return
			}
			w.msgs++
		}
	}
}

// writeFull writes w.buf whole to fd with write(2), again after a short
// write or EINTR.
func (w *worker) writeFull(fd int) unix.Errno {
	for done := 0; done < len(w.buf); {
		n, err := unix.Write(fd, w.buf[done:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			w.errors++
			w.errno = errnoOf(err)
			return w.errno
		}
		done += n
	}
	return 0
}

// receive is a receiver thread: read(2) of up to size bytes from p.rx
// until want bytes arrived, EOF or an error.
func (w *worker) receive(p *pair, pipe bool, want uint64, size int) {
	for w.bytes < want {
		n, err := unix.Read(p.rx, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			w.errors++
			w.errno = errnoOf(err)
			w.incomplete = true
			// Senders blocked on this stream get EPIPE instead of waiting
			// forever; the next Run makes every pair again.
			if pipe {
				_ = unix.Close(p.rx)
				p.rx = -1
			} else {
				_ = unix.Shutdown(p.rx, unix.SHUT_RD)
			}
			break
		}
		if n == 0 {
			break // EOF: the senders stopped
		}
		w.bytes += uint64(n)
	}
	w.msgs = w.bytes / uint64(size)
}

// Close ends the Pool's threads (waiting between rounds, they end at
// once) and closes every fd. It is idempotent; Run after Close returns an
// Err.
func (m *Messaging) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	for _, c := range m.pool {
		if c != nil {
			close(c)
		}
	}
	for _, t := range m.threads {
		t.Wait()
	}
	return m.closePairs()
}
