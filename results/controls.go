package results

// Controls are a reader's drift controls (issue 31): after each tick's
// drain the reader times PerTick null system calls (getppid(2), through the
// same raw-syscall and clock path as its recv calls) and PerTick runs of a
// fixed user-space loop. The machine's drift (another job's cache and
// memory traffic, frequency, a neighbour on the host) moves them with the
// recv calls; a change of the code or the kernel under test does not move
// the user loop. compare and check put their change beside the workload's
// and adjust the per-call cost by them (stats.Adjust).
//
// Units are the trial's clock ticks (Summary.Clock), as PerCallTicks.
type Controls struct {
	// PerTick is how many calls of each control one tick times.
	PerTick int `json:"per_tick"`
	// NullSyscall and UserLoop summarise every timed call of each control
	// over the trial (an HdrHistogram, as PerCallTicks).
	NullSyscall TickStats `json:"null_syscall"`
	UserLoop    TickStats `json:"user_loop"`
	// CacheLine and MemChase summarise the cache-line ping and the memory
	// chase (probe's xcontrols.go) where the reader timed them; nil
	// otherwise.
	CacheLine *TickStats `json:"cache_line,omitempty"`
	MemChase  *TickStats `json:"mem_chase,omitempty"`
	// RecvData and RecvEAGAIN summarise the recv control's calls (probe's
	// xrecv.go: every tick, probe.RecvRounds times, a 64-byte datagram the
	// reader sends to a loopback socket of its own, read with the
	// workload's recv call, then that call on the empty socket), timed by
	// every reader that times controls; nil in results before it.
	RecvData   *TickStats `json:"recv_data,omitempty"`
	RecvEAGAIN *TickStats `json:"recv_eagain,omitempty"`
	// UserLoopIters is the user loop's fixed iteration count: the same
	// count in every run compared, or the loop is not the same control.
	UserLoopIters int `json:"user_loop_iters"`
	// SkippedTicks counts the measured ticks that ran no controls because
	// their next deadline had passed or was too near (probe.ControlTick):
	// controls there would have made the next tick late. Their share of
	// the wakeups says how much of the window the controls saw.
	SkippedTicks uint64 `json:"skipped_ticks"`
}

// NullMeanTicks is the mean null-syscall cost in clock ticks (exact: the
// histogram's sum over its count); 0 for nil or no calls.
func (c *Controls) NullMeanTicks() float64 {
	if c == nil || c.NullSyscall.Count == 0 {
		return 0
	}
	return c.NullSyscall.MeanTicks
}

// LoopMeanTicks is the mean user-loop cost in clock ticks; 0 for nil or no
// calls.
func (c *Controls) LoopMeanTicks() float64 {
	if c == nil || c.UserLoop.Count == 0 {
		return 0
	}
	return c.UserLoop.MeanTicks
}

// NullMeanNs is NullMeanTicks in ns with clk (the summary's Clock); 0 when
// there are none or clk's frequency is unknown.
func (c *Controls) NullMeanNs(clk ClockInfo) float64 { return clk.Ns(c.NullMeanTicks()) }

// LoopMeanNs is LoopMeanTicks in ns with clk; 0 as NullMeanNs.
func (c *Controls) LoopMeanNs(clk ClockInfo) float64 { return clk.Ns(c.LoopMeanTicks()) }

// Means returns the mean null-syscall and user-loop costs in clock ticks,
// ok when both are > 0: what a verdict takes as one unit's control values.
func (c *Controls) Means() (null, loop float64, ok bool) {
	null, loop = c.NullMeanTicks(), c.LoopMeanTicks()
	return null, loop, null > 0 && loop > 0
}

// RecvMeanTicks is the recv control's mean data-call cost in clock ticks
// (RecvData); 0 for nil or none timed (results before it, controls: 0).
func (c *Controls) RecvMeanTicks() float64 {
	if c == nil || c.RecvData == nil || c.RecvData.Count == 0 {
		return 0
	}
	return c.RecvData.MeanTicks
}

// ControlMeans is r's Controls.Means: ok is false for a reader that timed
// no controls (older results, controls: 0, a timer-only reader).
func (r *Reader) ControlMeans() (null, loop float64, ok bool) { return r.Controls.Means() }

// Ns converts ticks of clock c to ns: ticks × 1e9 / Hz, ticks as they are
// for CLOCK_MONOTONIC, 0 when the frequency is unknown.
func (c ClockInfo) Ns(ticks float64) float64 {
	switch {
	case c.Kind == "monotonic":
		return ticks
	case c.Hz > 0:
		return ticks * 1e9 / c.Hz
	}
	return 0
}

// BlockControls are one interleaved block's control sums (Block.Controls):
// NullSumTicks / NullCalls is the block's mean null-syscall cost in clock
// ticks, LoopSumTicks / LoopCalls its mean user-loop cost.
type BlockControls struct {
	NullCalls    uint64 `json:"null_calls"`
	NullSumTicks uint64 `json:"null_sum_ticks"`
	LoopCalls    uint64 `json:"loop_calls"`
	LoopSumTicks uint64 `json:"loop_sum_ticks"`
}

// NullMeanTicks is the block's mean null-syscall cost in clock ticks; 0
// for nil or no calls.
func (b *BlockControls) NullMeanTicks() float64 {
	if b == nil || b.NullCalls == 0 {
		return 0
	}
	return float64(b.NullSumTicks) / float64(b.NullCalls)
}

// LoopMeanTicks is the block's mean user-loop cost in clock ticks; 0 for
// nil or no calls.
func (b *BlockControls) LoopMeanTicks() float64 {
	if b == nil || b.LoopCalls == 0 {
		return 0
	}
	return float64(b.LoopSumTicks) / float64(b.LoopCalls)
}

// Means returns the block's mean null-syscall and user-loop costs in clock
// ticks, ok when both are > 0 (a block whose every tick skipped its
// controls has none).
func (b *BlockControls) Means() (null, loop float64, ok bool) {
	null, loop = b.NullMeanTicks(), b.LoopMeanTicks()
	return null, loop, null > 0 && loop > 0
}
