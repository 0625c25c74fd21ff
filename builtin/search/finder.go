package search

import "bytes"

// finder looks for a literal in a text the way fast grep tools do: it
// scans for the literal's rarest byte (by [byteRank]) with
// [bytes.IndexByte], which is vectorised, and compares the literal around
// each hit. A common first byte — the "e" of "errors.New" — would stop a
// first-byte scan every few bytes; the rarest byte rarely stops it. When
// hits that do not lead to a match become frequent (a literal of common
// bytes only), it hands the rest of the text to [bytes.Index].
type finder struct {
	lit  []byte
	rare int // index in lit of its rarest byte
}

func newFinder(lit []byte) *finder {
	f := &finder{lit: lit}
	for i, c := range lit {
		if byteRank[c] < byteRank[lit[f.rare]] {
			f.rare = i
		}
	}
	return f
}

// index returns the index of the first instance of the literal in h, or -1.
func (f *finder) index(h []byte) int {
	n, r := len(f.lit), f.rare
	switch {
	case n == 0:
		return 0
	case n == 1:
		return bytes.IndexByte(h, f.lit[0])
	case n > len(h):
		return -1
	}
	c := f.lit[r]
	last := len(h) - n + r // the last position the rare byte can take
	fails := 0
	for i := r; i <= last; {
		j := bytes.IndexByte(h[i:last+1], c)
		if j < 0 {
			return -1
		}
		i += j
		if bytes.Equal(h[i-r:i-r+n], f.lit) {
			return i - r
		}
		i++
		// Like bytes.Index's own cutover: after too many false hits
		// for the bytes scanned, a general search is cheaper.
		if fails++; fails > 4+i>>4 {
			if k := bytes.Index(h[i-r:], f.lit); k >= 0 {
				return i - r + k
			}
			return -1
		}
	}
	return -1
}
