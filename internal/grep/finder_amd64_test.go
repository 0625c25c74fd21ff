//go:build !purego

package grep

import "golang.org/x/sys/cpu"

type pairBlocksImpl struct {
	name string
	f    func(a, b *byte, n int, c1, m1, c2, m2 byte) int
}

// pairBlocksImpls are the loops this processor can run.
func pairBlocksImpls() []pairBlocksImpl {
	impls := []pairBlocksImpl{{"sse2", pairBlocksSSE2}}
	if cpu.X86.HasAVX2 {
		impls = append(impls, pairBlocksImpl{"avx2", pairBlocksAVX2})
	}
	return impls
}
