package load

import (
	"github.com/rtload/rtload/results"
)

// withControls gives every reader of s drift controls: trial i's null
// syscall null(i) and user loop loop(i) ticks on average, and every
// interleaved block the same means (its sums over 640 calls each).
func withControls(s *results.Summary, null, loop func(i int) float64) *results.Summary {
	for i := range s.Trials {
		t := &s.Trials[i]
		for r := range t.Readers {
			t.Readers[r].Controls = &results.Controls{PerTick: 64, UserLoopIters: 180,
				NullSyscall: results.TickStats{Count: 6400, MeanTicks: null(i)}, UserLoop: results.TickStats{Count: 6400, MeanTicks: loop(i)}}
		}
		if il := t.Interleave; il != nil {
			for b := range il.Blocks {
				il.Blocks[b].Controls = &results.BlockControls{NullCalls: 640, NullSumTicks: uint64(640 * null(i)), LoopCalls: 640, LoopSumTicks: uint64(640 * loop(i))}
			}
		}
	}
	return s
}
