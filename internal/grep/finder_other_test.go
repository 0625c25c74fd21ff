//go:build !amd64 || purego

package grep

type pairBlocksImpl struct {
	name string
	f    func(a, b *byte, n int, c1, m1, c2, m2 byte) int
}

func pairBlocksImpls() []pairBlocksImpl { return []pairBlocksImpl{{"go", pairBlocks}} }
