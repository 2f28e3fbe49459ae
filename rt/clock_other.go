//go:build !amd64

package rt

// haveTSC and haveRdpmc are false off amd64: there is no rdtscp nor
// rdpmc, NewClock(ClockTSC) and NewClock(ClockCycles) return ErrNotSupported,
// and "auto" falls back to CLOCK_MONOTONIC. (arm64's PMCCNTR_EL0 user
// access, kernel.perf_user_access, is not implemented.)
const (
	haveTSC   = false
	haveRdpmc = false
)

// rdtscp is never called off amd64 (Clock.tsc is always false there).
func rdtscp() uint64 { return 0 }

// rdtscFenced is never called off amd64 (Clock.tsc is always false there).
func rdtscFenced() uint64 { return 0 }

// cpuid is never called off amd64 (haveTSC is false).
func cpuid(leaf, sub uint32) (a, b, c, d uint32) { return }

// rdpmc is never called off amd64: no counter is ever bound there.
func rdpmc(uint32) uint64 { return 0 }
