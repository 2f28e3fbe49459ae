package probe

import (
	"sync/atomic"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// Ticked is a Probe that also reports what its last Step did (for the
// per-wakeup log).
type Ticked interface {
	Probe
	LastTick() Tick
}

// Loop runs a Ticked probe on every tick of a real-time thread. Phases, by
// deadline (CLOCK_MONOTONIC ns): before MeasureFrom (warm-up) Steps run
// unrecorded; in [MeasureFrom, MeasureUntil) they are recorded and each
// wakeup is logged; from MeasureUntil on (tail) they run unrecorded again
// until Stop is set, then one last Step drains what is left.
type Loop struct {
	Ticker                    *rt.Ticker
	Probe                     Ticked
	Drain                     *Drain // optional: its Measure flag follows the phase
	MeasureFrom, MeasureUntil int64
	// Stop ends the loop at the next tick (set by the engine once senders stopped).
	Stop atomic.Bool
	// HardStop is the deadline (CLOCK_MONOTONIC ns) after which the loop
	// ends even without Stop; it must be set (0 stops after the first tick).
	HardStop int64
	// Wakeups is the per-wakeup log ring (measured ticks only).
	Wakeups *record.Ring[record.Wakeup]
	// Latency (wakeup latency, ns) and DrainTime (ns) of measured ticks.
	Latency, DrainTime *record.HDR
	// Stats counted by Run.
	Ticks, MeasuredTicks, Overruns, MissedTicks uint64
	TailMessages                                uint64
	Errno                                       uintptr
}

// Run loops until Stop or HardStop. Call it on the real-time thread.
//
//go:nosplit
func (l *Loop) Run() {
	for {
		k, deadline, lat, missed, errno := l.Ticker.Wait()
		if errno != 0 {
			l.Errno = uintptr(errno)
			return
		}
		l.Ticks++
		stop := l.Stop.Load() || deadline >= l.HardStop
		measured := deadline >= l.MeasureFrom && deadline < l.MeasureUntil
		if l.Drain != nil {
			l.Drain.Measure = measured
		}
		t0 := rt.Monotonic()
		l.Probe.Step()
		t1 := rt.Monotonic()
		if measured {
			l.MeasuredTicks++
			if missed > 0 {
				l.Overruns++
				l.MissedTicks += missed
			}
			l.Latency.RecordSigned(lat)
			l.DrainTime.RecordSigned(t1 - t0)
			tk := l.Probe.LastTick()
			l.Wakeups.Put(record.Wakeup{Tick: k, DeadlineNs: deadline, LatencyNs: lat, DrainNs: t1 - t0,
				Messages: tk.Messages, Calls: tk.Calls, EAGAIN: tk.EAGAIN, Missed: uint32(missed)})
		} else if deadline >= l.MeasureUntil {
			l.TailMessages += uint64(l.Probe.LastTick().Messages)
		}
		if stop {
			return
		}
	}
}
