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
