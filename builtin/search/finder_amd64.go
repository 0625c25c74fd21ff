//go:build !purego

package search

// pairScan: pairBlocks is vectorised (SSE2, which every amd64 processor
// has), so finders use the pair scan.
const pairScan = true

// pairBlocks returns the first k in [0, n) with a[k]|m1 == c1 and
// b[k]|m2 == c2, or -1; n is a multiple of 16, and a[0:n] and b[0:n] are
// readable.
//
//go:noescape
func pairBlocks(a, b *byte, n int, c1, m1, c2, m2 byte) int
