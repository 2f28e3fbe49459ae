package engine

import (
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/sysinfo"
)

// machineWatch follows what the kernel counts on a reader's CPU while the
// writer polls (every writerPoll of the measured window): its steal time
// (/proc/stat) and its interrupts and softirqs (/proc/interrupts,
// /proc/softirqs). It keeps the totals, and the results.MaxMachineWindows
// windows whose wakeups were the latest, each spanning the poll that
// drained them and the one before: explain sets each latency spike
// against what the machine did in its window and in a window of that
// length on average. Nothing here runs on a real-time thread; once its
// maps hold every interrupt source a poll allocates nothing (a soak polls
// for hours).
type machineWatch struct {
	cpu   int
	polls int
	// The last two polls' times, steal ticks and interrupt counts (irq[k%3]
	// is poll k's; the third map is read into next).
	at    [2]int64
	steal [2]uint64
	irq   [3]sysinfo.IRQCounts
	// first is the first poll's state, for the totals.
	firstNs    int64
	firstSteal uint64
	firstIRQ   sysinfo.IRQCounts
	hasSteal   bool
	// worst holds the windows kept, a min-heap on MaxLatencyNs.
	worst []results.MachineWindow
	err   string
}

// newMachineWatch watches cpu.
func newMachineWatch(cpu int) *machineWatch {
	m := &machineWatch{cpu: cpu, firstIRQ: sysinfo.IRQCounts{}, worst: make([]results.MachineWindow, 0, results.MaxMachineWindows)}
	for i := range m.irq {
		m.irq[i] = sysinfo.IRQCounts{}
	}
	return m
}

// poll samples the CPU at now (CLOCK_MONOTONIC ns); latest is the
// largest wakeup latency the writer drained since the last poll (0: none).
// A failed read stops the sampling and is kept in the result.
func (m *machineWatch) poll(p *sysinfo.ProcReader, now, latest int64) {
	if m.err != "" {
		return
	}
	st, err := p.CPUTimes(m.cpu)
	if err == nil {
		err = p.IRQCounts(m.cpu, m.irq[m.polls%3])
	}
	if err != nil {
		m.err = err.Error()
		return
	}
	cur := m.irq[m.polls%3]
	if m.polls == 0 {
		m.firstNs, m.firstSteal, m.hasSteal = now, st.Steal, st.HasSteal
		for k, v := range cur {
			m.firstIRQ[k] = v
		}
	}
	if m.polls >= 2 && latest > 0 {
		m.keep(latest, m.at[0], now, st.Steal-min(st.Steal, m.steal[0]), cur, m.irq[(m.polls+1)%3])
	}
	m.at[0], m.at[1] = m.at[1], now
	m.steal[0], m.steal[1] = m.steal[1], st.Steal
	m.polls++
}

// keep adds the window [from, to) whose latest wakeup was latest to the
// worst windows when it is among them: steal its steal ticks, cur and
// prev the interrupt counts at its end and start.
func (m *machineWatch) keep(latest, from, to int64, steal uint64, cur, prev sysinfo.IRQCounts) {
	if len(m.worst) == cap(m.worst) && latest <= m.worst[0].MaxLatencyNs {
		return
	}
	w := results.MachineWindow{FromNs: from, ToNs: to, MaxLatencyNs: latest, StealNs: steal * sysinfo.TickNs}
	for k, v := range cur {
		d := v - min(v, prev[k])
		if len(k) > 8 && k[:8] == "softirq:" {
			w.SoftIRQs += d
		} else {
			w.IRQs += d
		}
		if d > w.TopCount || d == w.TopCount && d > 0 && k < w.Top {
			w.Top, w.TopCount = k, d
		}
	}
	if len(m.worst) < cap(m.worst) {
		m.worst = append(m.worst, w)
		up(m.worst, len(m.worst)-1)
		return
	}
	m.worst[0] = w
	down(m.worst, 0)
}

// up and down keep h a min-heap on MaxLatencyNs (container/heap's sift,
// without its interface boxing).
func up(h []results.MachineWindow, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].MaxLatencyNs <= h[i].MaxLatencyNs {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func down(h []results.MachineWindow, i int) {
	for {
		l, s := 2*i+1, i
		if l < len(h) && h[l].MaxLatencyNs < h[s].MaxLatencyNs {
			s = l
		}
		if r := l + 1; r < len(h) && h[r].MaxLatencyNs < h[s].MaxLatencyNs {
			s = r
		}
		if s == i {
			return
		}
		h[s], h[i] = h[i], h[s]
		i = s
	}
}

// result is what was watched, nil before two polls.
func (m *machineWatch) result() *results.MachineWatch {
	if m == nil || m.polls < 2 {
		if m != nil && m.err != "" {
			return &results.MachineWatch{CPU: m.cpu, Error: m.err}
		}
		return nil
	}
	last := m.irq[(m.polls-1)%3]
	out := &results.MachineWatch{CPU: m.cpu, FromNs: m.firstNs, ToNs: m.at[1], Polls: m.polls,
		StealNs: (m.steal[1] - min(m.steal[1], m.firstSteal)) * sysinfo.TickNs, Error: m.err}
	switch {
	case m.hasSteal:
		out.Steal = "/proc/stat steal (USER_HZ ticks: 10 ms resolution)"
	default:
		out.Steal = "none: this kernel's /proc/stat has no steal column"
	}
	for k, v := range last {
		d := v - min(v, m.firstIRQ[k])
		if len(k) > 8 && k[:8] == "softirq:" {
			out.SoftIRQs += d
		} else {
			out.IRQs += d
		}
	}
	out.Windows = append([]results.MachineWindow(nil), m.worst...)
	// Latest first; the heap's order is only partial.
	for i := 1; i < len(out.Windows); i++ {
		for j := i; j > 0 && out.Windows[j].MaxLatencyNs > out.Windows[j-1].MaxLatencyNs; j-- {
			out.Windows[j], out.Windows[j-1] = out.Windows[j-1], out.Windows[j]
		}
	}
	return out
}
