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
