//go:build !purego

#include "textflag.h"

// func pairBlocksSSE2(a, b *byte, n int, c1, m1, c2, m2 byte) int
TEXT ·pairBlocksSSE2(SB), NOSPLIT, $0-40
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

// func pairBlocksAVX2(a, b *byte, n int, c1, m1, c2, m2 byte) int
TEXT ·pairBlocksAVX2(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), DX
	VPBROADCASTB c1+24(FP), Y0
	VPBROADCASTB m1+25(FP), Y1
	VPBROADCASTB c2+26(FP), Y2
	VPBROADCASTB m2+27(FP), Y3
	XORQ CX, CX
	MOVQ DX, R9
	ANDQ $~63, R9
	MOVQ DX, R8
	ANDQ $~31, R8

loop64:
	CMPQ CX, R9
	JGE  loop32
	VMOVDQU (SI)(CX*1), Y4
	VMOVDQU (DI)(CX*1), Y5
	VMOVDQU 32(SI)(CX*1), Y6
	VMOVDQU 32(DI)(CX*1), Y7
	VPOR     Y1, Y4, Y4
	VPOR     Y3, Y5, Y5
	VPOR     Y1, Y6, Y6
	VPOR     Y3, Y7, Y7
	VPCMPEQB Y0, Y4, Y4
	VPCMPEQB Y2, Y5, Y5
	VPCMPEQB Y0, Y6, Y6
	VPCMPEQB Y2, Y7, Y7
	VPAND    Y5, Y4, Y4
	VPAND    Y7, Y6, Y6
	VPOR     Y4, Y6, Y8
	VPTEST   Y8, Y8
	JNZ      found64
	ADDQ     $64, CX
	JMP      loop64

found64:
	VPMOVMSKB Y4, AX
	TESTL    AX, AX
	JNZ      found
	VPMOVMSKB Y6, AX
	ADDQ     $32, CX
	JMP      found

loop32:
	CMPQ CX, R8
	JGE  tail16
	VMOVDQU (SI)(CX*1), Y4
	VMOVDQU (DI)(CX*1), Y5
	VPOR     Y1, Y4, Y4
	VPOR     Y3, Y5, Y5
	VPCMPEQB Y0, Y4, Y4
	VPCMPEQB Y2, Y5, Y5
	VPAND    Y5, Y4, Y4
	VPMOVMSKB Y4, AX
	TESTL    AX, AX
	JNZ      found
	ADDQ     $32, CX
	JMP      loop32

tail16:
	// n is a multiple of 16: at most one 16-byte block is left.
	CMPQ CX, DX
	JGE  none
	VMOVDQU (SI)(CX*1), X4
	VMOVDQU (DI)(CX*1), X5
	VPOR     X1, X4, X4
	VPOR     X3, X5, X5
	VPCMPEQB X0, X4, X4
	VPCMPEQB X2, X5, X5
	VPAND    X5, X4, X4
	VPMOVMSKB X4, AX
	TESTL    AX, AX
	JNZ      found

none:
	VZEROUPPER
	MOVQ $-1, ret+32(FP)
	RET

found:
	VZEROUPPER
	BSFL AX, AX
	ADDQ CX, AX
	MOVQ AX, ret+32(FP)
	RET
