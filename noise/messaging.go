package noise

import (
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/workload"
)

// messagingWorker is the messaging kind: hackbench's model as load.
// workload.Messaging rounds (Groups × FDs senders each writing Loops
// messages of Size bytes to each of FDs receivers over AF_UNIX
// socketpairs) run back to back until Stop or the end of an "on" phase,
// counted in messages received. Config.Threads does not apply: one noise
// thread runs the rounds on a pool of Groups × FDs × 2 worker threads at
// Config.Nice, pinned round-robin to Config.CPUs, started once by Start
// and ended by Stop (workload.MessagingConfig.Pool), so a soak creates no
// thread after its start.
type messagingWorker struct {
	m     *workload.Messaging
	stop  *atomic.Bool // the Noise's
	halt  atomic.Bool  // Run's stop: set by Stop or at the end of the phase
	timer *time.Timer  // sets halt at the end of the phase
	err   error        // the set-up error that ended the thread
}

func newMessagingWorker(cfg Config, stop *atomic.Bool) (*messagingWorker, error) {
	m, err := workload.NewMessaging(workload.MessagingConfig{
		Groups: cfg.Groups, FDs: cfg.FDs, Loops: cfg.Loops, Size: cfg.Size,
		CPUs: cfg.CPUs, Nice: cfg.Nice, Pool: true, Sched: messagingSched(cfg),
	})
	if err != nil {
		return nil, err
	}
	w := &messagingWorker{m: m, stop: stop}
	w.timer = time.AfterFunc(time.Hour, func() { w.halt.Store(true) })
	w.timer.Stop()
	return w, nil
}

// messagingSched is the template of the pool's worker threads' rt.Sched
// (workload.MessagingConfig.Sched; Nice and CPUs are set apart): worker i
// is named rtl-nz/<Name>.<i> and exempt from cfg.Exempt.
func messagingSched(cfg Config) rt.Sched {
	return rt.Sched{Name: rt.NoisePrefix + cfg.name(), Exempt: cfg.Exempt, AllowDegraded: cfg.AllowDegraded}
}

func (*messagingWorker) phase(int64) {}

// interrupt ends the running round (senders stop between messages).
func (w *messagingWorker) interrupt() { w.halt.Store(true) }

// step runs one round, cut short at end or Stop.
func (w *messagingWorker) step(s *slot, end int64) unix.Errno {
	w.halt.Store(false)
	if w.stop.Load() { // Stop set stop before interrupt: seen here or by Run
		return 0
	}
	if end != math.MaxInt64 {
		w.timer.Reset(time.Duration(end - rt.Monotonic()))
	}
	r := w.m.Run(&w.halt)
	if end != math.MaxInt64 {
		w.timer.Stop()
	}
	s.units.Add(r.Received)
	s.recv.Add(r.Received)
	s.sent.Add(r.Sent)
	s.bytes.Add(r.Bytes)
	switch {
	case r.Err != nil:
		w.err = r.Err
		return unix.EIO
	case r.Errors > 0 && !r.Stopped:
		return r.LastErrno
	}
	return 0
}

func (w *messagingWorker) finish(*slot) error {
	w.timer.Stop()
	if err := w.m.Close(); err != nil {
		return err
	}
	return w.err
}
