package record_test

import (
	"fmt"

	"github.com/rtload/rtload/record"
)

// ExampleLinear records a few per-call costs in the seed's layout (128-tick
// buckets from 64, overflow at 8256) and prints the populated rows the way
// the report's table labels them.
func ExampleLinear() {
	h := record.NewLinear(128, 64, 8256)
	for _, ticks := range []uint64{1500, 1550, 2800, 9000} {
		h.Record(ticks)
	}
	s := h.Snapshot("TSC ticks")
	for i, n := range s.Counts {
		if n > 0 {
			fmt.Printf("%7d: %d\n", s.Lower(i), n)
		}
	}
	fmt.Printf("%7s: %d\n", fmt.Sprint(s.Overflow, "+"), s.OverflowCount)
	fmt.Printf("%7s: %d, mean %.0f %s\n", "Total", s.Total, s.Mean(), s.Unit)
	// Output:
	//    1472: 2
	//    2752: 1
	//   8256+: 1
	//   Total: 4, mean 3712 TSC ticks
}

// ExampleSet records one drain's calls the way probe.Drain does: every
// call into CallAll (linear and HDR), then by result, and prints what each
// class holds.
func ExampleSet() {
	s := record.NewSet(record.Layout{Width: 128, Origin: 64, Overflow: 8256})
	for _, call := range []struct {
		ticks uint64
		data  bool
	}{{1500, true}, {900, false}, {9000, false}} {
		s.Record(record.CallAll, call.ticks)
		if call.data {
			s.Record(record.CallData, call.ticks)
		} else {
			s.Record(record.CallEAGAIN, call.ticks)
		}
	}
	for _, c := range []record.Class{record.CallAll, record.CallData, record.CallEAGAIN} {
		snap := s.Snapshot(c, "ticks")
		fmt.Printf("%-11s %d calls, max %d %s\n", c, snap.Total, snap.Max, snap.Unit)
	}
	fmt.Printf("call_all HDR p50 %d ticks\n", s.HDR(record.CallAll).Quantile(0.5))
	// Output:
	// call_all    3 calls, max 9000 ticks
	// call_data   1 calls, max 1500 ticks
	// call_eagain 2 calls, max 9000 ticks
	// call_all HDR p50 1500 ticks
}
