package explain

import (
	"fmt"
	"math"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// machineCheck sets each spike against the machine's windows of its
// reader's CPU (results.MachineWatch): steal time in the spike's window,
// and more interrupts and softirqs there than the watch's rate gives a
// window of that length.
type machineCheck struct {
	w    *Wakeups
	m    *results.MachineWatch
	rate float64 // interrupts + softirqs per ns over the watch
	seen map[int]bool
	// the windows of the spikes with an interrupt burst: their counts,
	// length and top sources
	burstN, burstNs float64
	tops            map[string]uint64
}

// newMachineCheck prepares the check of w's spikes against m (nil: not
// recorded, and w says so).
func newMachineCheck(w *Wakeups, m *results.MachineWatch) *machineCheck {
	c := &machineCheck{w: w, m: m, seen: map[int]bool{}, tops: map[string]uint64{}}
	switch {
	case m == nil:
		w.MachineNote = "steal time and interrupts per window not recorded in these results (rtload before the machine watch)"
		return c
	case m.Polls < 2 || m.ToNs <= m.FromNs:
		w.MachineNote = "the reader's CPU was not polled: " + m.Error
		c.m = nil
		return c
	}
	w.MachineCPU = m.CPU
	span := float64(m.ToNs - m.FromNs)
	c.rate = float64(m.IRQs+m.SoftIRQs) / span
	w.IRQPer100ms = c.rate * 1e8
	w.StealPer100msNs = float64(m.StealNs) / span * 1e8
	w.StealSource = m.Steal
	w.Checked = append(w.Checked, fmt.Sprintf("steal time on CPU %d", m.CPU), fmt.Sprintf("interrupts on CPU %d", m.CPU))
	if m.Error != "" {
		w.MachineNote = "the writer stopped polling the reader's CPU: " + m.Error
	}
	return c
}

// spike checks one spike and reports whether the machine explains it.
func (c *machineCheck) spike(wk record.Wakeup) bool {
	if c.m == nil {
		return false
	}
	wake := wk.DeadlineNs + wk.LatencyNs
	i := -1
	for j, win := range c.m.Windows {
		if win.FromNs <= wake && wake <= win.ToNs {
			i = j
			break
		}
	}
	if i < 0 {
		return false
	}
	win := c.m.Windows[i]
	c.w.MachineKnown++
	explained := false
	if win.StealNs > 0 {
		c.w.Steal++
		if !c.seen[i] {
			c.w.StealNs += win.StealNs
		}
		explained = true
	}
	exp := c.rate * float64(win.ToNs-win.FromNs)
	if n := float64(win.IRQs + win.SoftIRQs); n > 1.5*exp && n > exp+3*math.Sqrt(exp) {
		c.w.IRQBurst++
		if !c.seen[i] {
			c.burstN += n
			c.burstNs += float64(win.ToNs - win.FromNs)
			if win.Top != "" {
				c.tops[win.Top] += win.TopCount
			}
		}
		explained = true
	}
	c.seen[i] = true
	return explained
}

// done fills the burst windows' rate and top source.
func (c *machineCheck) done() {
	if c.burstNs > 0 {
		c.w.SpikeIRQPer100ms = c.burstN / c.burstNs * 1e8
	}
	for k, v := range c.tops {
		if v > c.w.BurstTopCount || v == c.w.BurstTopCount && k < c.w.BurstTop {
			c.w.BurstTop, c.w.BurstTopCount = k, v
		}
	}
	if c.m != nil && c.w.MachineKnown < c.w.Spikes {
		c.w.MachineNote = fmt.Sprintf("%d of %d spikes fall outside the %d windows the writer kept (the latest wakeups' polls)",
			c.w.Spikes-c.w.MachineKnown, c.w.Spikes, len(c.m.Windows))
	}
}
