package testutil

import (
	"sync"
	"testing"

	"github.com/rtload/rtload/rt"
)

// autoClock calibrates the auto clock once per test binary (NewClock
// measures for about 100 ms).
var autoClock = sync.OnceValues(func() (*rt.Clock, error) { return rt.NewClock(rt.ClockAuto) })

// AutoClock returns the test binary's one rt.NewClock(rt.ClockAuto) (TSC where
// invariant, else CLOCK_MONOTONIC), failing the test if it cannot be made.
func AutoClock(t testing.TB) *rt.Clock {
	t.Helper()
	c, err := autoClock()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
