//go:build !purego

package grep

import "golang.org/x/sys/cpu"

// pairScan: pairBlocks is vectorised (AVX2 where the processor has it,
// else SSE2, which every amd64 processor has), so finders use the pair
// scan.
const pairScan = true

// hasAVX2 selects pairBlocks' AVX2 loop (32 positions a step).
var hasAVX2 = cpu.X86.HasAVX2

// pairBlocks returns the first k in [0, n) with a[k]|m1 == c1 and
// b[k]|m2 == c2, or -1; n is a multiple of 16, and a[0:n] and b[0:n] are
// readable.
func pairBlocks(a, b *byte, n int, c1, m1, c2, m2 byte) int {
	if hasAVX2 {
		return pairBlocksAVX2(a, b, n, c1, m1, c2, m2)
	}
	return pairBlocksSSE2(a, b, n, c1, m1, c2, m2)
}

//go:noescape
func pairBlocksSSE2(a, b *byte, n int, c1, m1, c2, m2 byte) int

//go:noescape
func pairBlocksAVX2(a, b *byte, n int, c1, m1, c2, m2 byte) int
