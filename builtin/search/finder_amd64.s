//go:build !purego

#include "textflag.h"

// func pairBlocks(a, b *byte, n int, c1, m1, c2, m2 byte) int
TEXT ·pairBlocks(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), DX

	// X0..X3: c1, m1, c2, m2 in every byte.
	MOVBLZX c1+24(FP), AX
	MOVQ    AX, X0
	PUNPCKLBW X0, X0
	PUNPCKLBW X0, X0
	PSHUFL  $0, X0, X0
	MOVBLZX m1+25(FP), AX
	MOVQ    AX, X1
	PUNPCKLBW X1, X1
	PUNPCKLBW X1, X1
	PSHUFL  $0, X1, X1
	MOVBLZX c2+26(FP), AX
	MOVQ    AX, X2
	PUNPCKLBW X2, X2
	PUNPCKLBW X2, X2
	PSHUFL  $0, X2, X2
	MOVBLZX m2+27(FP), AX
	MOVQ    AX, X3
	PUNPCKLBW X3, X3
	PUNPCKLBW X3, X3
	PSHUFL  $0, X3, X3

	XORQ CX, CX

loop:
	CMPQ CX, DX
	JGE  none
	MOVOU (SI)(CX*1), X4
	MOVOU (DI)(CX*1), X5
	POR     X1, X4
	POR     X3, X5
	PCMPEQB X0, X4
	PCMPEQB X2, X5
	PAND    X5, X4
	PMOVMSKB X4, AX
	TESTL   AX, AX
	JNZ     found
	ADDQ    $16, CX
	JMP     loop

found:
	BSFL AX, AX
	ADDQ CX, AX
	MOVQ AX, ret+32(FP)
	RET

none:
	MOVQ $-1, ret+32(FP)
	RET
