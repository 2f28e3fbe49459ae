#include "textflag.h"

// func sleepWake(ts *unix.Timespec) (errno uintptr, tsc uint64)
//
// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ts, NULL), then RDTSCP
// as the very next instruction after SYSCALL returns: the wake time is
// stamped before any other user-space instruction runs (the Go syscall
// return path through three functions in three code pages, cold after the
// sleep, took 4–6 µs at p50 before the first clock read; bench/GAPS.md).
// errno is the negated kernel return (0 on success).
TEXT ·sleepWake(SB),NOSPLIT,$0-24
	MOVQ	$1, DI	// CLOCK_MONOTONIC
	MOVQ	$1, SI	// TIMER_ABSTIME
	MOVQ	ts+0(FP), DX
	MOVQ	$0, R10	// no remaining time: the deadline is absolute
	MOVQ	$230, AX	// SYS_clock_nanosleep
	SYSCALL
	MOVQ	AX, R8
	RDTSCP
	LFENCE
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, tsc+16(FP)
	NEGQ	R8
	MOVQ	R8, errno+8(FP)
	RET

// func sleepWakeFenced(ts *unix.Timespec) (errno uintptr, tsc uint64)
//
// sleepWake for a CPU whose CPUID does not offer RDTSCP: the wake stamp
// is LFENCE;RDTSC;LFENCE, still the first instructions after SYSCALL.
TEXT ·sleepWakeFenced(SB),NOSPLIT,$0-24
	MOVQ	$1, DI	// CLOCK_MONOTONIC
	MOVQ	$1, SI	// TIMER_ABSTIME
	MOVQ	ts+0(FP), DX
	MOVQ	$0, R10	// no remaining time: the deadline is absolute
	MOVQ	$230, AX	// SYS_clock_nanosleep
	SYSCALL
	MOVQ	AX, R8
	LFENCE
	RDTSC
	LFENCE
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, tsc+16(FP)
	NEGQ	R8
	MOVQ	R8, errno+8(FP)
	RET
