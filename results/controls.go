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
	// UserLoopIters is the user loop's fixed iteration count: the same
	// count in every run compared, or the loop is not the same control.
	UserLoopIters int `json:"user_loop_iters"`
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
