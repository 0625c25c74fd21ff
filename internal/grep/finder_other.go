//go:build !amd64 || purego

package grep

import "unsafe"

// pairScan is false where pairBlocks is not vectorised: one byte scanned
// with bytes.IndexByte (vectorised on most platforms) is then faster.
const pairScan = false

// pairBlocks returns the first k in [0, n) with a[k]|m1 == c1 and
// b[k]|m2 == c2, or -1; a[0:n] and b[0:n] are readable.
func pairBlocks(a, b *byte, n int, c1, m1, c2, m2 byte) int {
	as, bs := unsafe.Slice(a, n), unsafe.Slice(b, n)
	for k := range n {
		if as[k]|m1 == c1 && bs[k]|m2 == c2 {
			return k
		}
	}
	return -1
}
