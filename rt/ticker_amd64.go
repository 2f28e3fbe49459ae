package rt

import "golang.org/x/sys/unix"

// haveWakeTSC: sleepWake stamps the wake time with RDTSCP (sleepWakeFenced
// with LFENCE;RDTSC;LFENCE where CPUID offers no RDTSCP; used where the
// TSC is invariant; see wakeTSC).
const haveWakeTSC = true

// sleepWake calls clock_nanosleep(2) (CLOCK_MONOTONIC, TIMER_ABSTIME) until
// ts and reads the TSC right after the SYSCALL instruction returns (see
// ticker_amd64.s). errno is 0 or the call's error (EINTR included: the
// caller retries). No allocation, no preemption point.
//
//go:noescape
func sleepWake(ts *unix.Timespec) (errno uintptr, tsc uint64)

// sleepWakeFenced is sleepWake for a CPU whose CPUID does not offer
// RDTSCP: the wake stamp is LFENCE;RDTSC;LFENCE, still the first
// instructions after SYSCALL.
//
//go:noescape
func sleepWakeFenced(ts *unix.Timespec) (errno uintptr, tsc uint64)
