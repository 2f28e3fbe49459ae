//go:build !amd64

package rt

// haveTSC is false off amd64: there is no rdtscp, and NewClock("tsc")
// returns ErrNotSupported; "auto" falls back to CLOCK_MONOTONIC.
const haveTSC = false

// rdtscp is never called off amd64 (Clock.tsc is always false there).
func rdtscp() uint64 { return 0 }
