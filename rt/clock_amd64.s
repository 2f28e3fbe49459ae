#include "textflag.h"

// func rdtscp() uint64
TEXT ·rdtscp(SB),NOSPLIT,$0-8
	RDTSCP
	LFENCE
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET

// func rdpmc(ecx uint32) uint64
TEXT ·rdpmc(SB),NOSPLIT,$0-16
	MOVL	ecx+0(FP), CX
	LFENCE
	RDPMC
	LFENCE
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+8(FP)
	RET

// func rdtscFenced() uint64
//
// LFENCE;RDTSC;LFENCE: the read for a CPU (or a VM) whose CPUID does not
// offer RDTSCP. The first LFENCE waits for every earlier instruction to
// complete, the second keeps later ones from starting before the read:
// the same bracketing as RDTSCP;LFENCE.
TEXT ·rdtscFenced(SB),NOSPLIT,$0-8
	LFENCE
	RDTSC
	LFENCE
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET

// func cpuid(leaf, sub uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB),NOSPLIT,$0-24
	MOVL	leaf+0(FP), AX
	MOVL	sub+4(FP), CX
	CPUID
	MOVL	AX, a+8(FP)
	MOVL	BX, b+12(FP)
	MOVL	CX, c+16(FP)
	MOVL	DX, d+20(FP)
	RET
