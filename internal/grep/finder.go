package grep

import (
	"bytes"
	"math"
)

// finder looks for a literal in a text the way fast grep tools do, by its
// rare bytes rather than its first byte: a common first byte — the "e" of
// "errors.New" — would stop a first-byte scan every few bytes.
//
// It has two scans. The pair scan (where [pairBlocks] is vectorised, see
// [pairScan]) tests 16 positions at a time for the literal's two rarest
// bytes at their offsets — "." and "N" of "errors.New" occur together far
// less often than either alone — and compares the literal at each
// position where both are found. The byte scan looks for the rarest byte
// alone with [bytes.IndexByte] and compares the literal around each hit.
// When hits that do not lead to a match become frequent (a literal of
// common bytes only), an exact finder hands the rest of the text to
// [bytes.Index].
//
// A folding finder matches ASCII letters of either case (its literal is
// lower-case). The pair scan tests a letter in both cases at once (the
// text byte with its 0x20 bit set equals the lower-case letter); the byte
// scan scans for a byte that is not a letter, or for one case of a letter
// — [foldFinders] pairs two finders for the two cases.
type finder struct {
	lit  []byte
	fold bool
	// The byte scan: rare is the index in lit of the byte scanned for, c
	// that byte (lit[rare], or its upper case).
	rare int
	c    byte
	// The pair scan (when pair is set): the bytes at i1 and i2 (i1 the
	// rarest) equal c1 and c2 once or-ed with m1 and m2 (0x20 for a
	// folded letter, else 0).
	pair           bool
	i1, i2         int
	c1, c2, m1, m2 byte
}

func newFinder(lit []byte) *finder {
	f := &finder{lit: lit}
	for i, c := range lit {
		if byteRank[c] < byteRank[lit[f.rare]] {
			f.rare = i
		}
	}
	if len(lit) > 0 {
		f.c = lit[f.rare]
	}
	f.setPair(pairScan)
	return f
}

// foldFinders returns the finders of the lower-case ASCII literal lit
// matched case-insensitively. With the pair scan that is one finder; with
// the byte scan one scanning for its rarest non-letter, when that byte is
// about as rare as its rarest letter, else two, scanning for the rarest
// letter in each case.
func foldFinders(lit []byte) []*finder {
	return foldFindersScan(lit, pairScan)
}

func foldFindersScan(lit []byte, pair bool) []*finder {
	if len(lit) == 0 {
		return []*finder{{fold: true}}
	}
	if pair {
		f := &finder{lit: lit, fold: true}
		f.setPair(true)
		return []*finder{f}
	}
	letter, other := -1, -1
	for i, c := range lit {
		if 'a' <= c && c <= 'z' {
			// Both cases are scanned for: the more common one bounds
			// the hits.
			if letter < 0 || foldRank(c) < foldRank(lit[letter]) {
				letter = i
			}
		} else if other < 0 || byteRank[c] < byteRank[lit[other]] {
			other = i
		}
	}
	if other >= 0 && (letter < 0 || int(byteRank[lit[other]]) <= int(foldRank(lit[letter]))+8) {
		return []*finder{{lit: lit, rare: other, c: lit[other], fold: true}}
	}
	c := lit[letter]
	return []*finder{
		{lit: lit, rare: letter, c: c, fold: true},
		{lit: lit, rare: letter, c: c - 'a' + 'A', fold: true},
	}
}

func foldRank(c byte) uint8 { return max(byteRank[c], byteRank[c-'a'+'A']) }

// setPair chooses the pair scan's bytes (when on is set and the literal is
// longer than one byte, or folded): the rarest byte, and the rarest of the
// others, preferring a different byte value (an "x" next to an "x" says
// little more than one "x").
func (f *finder) setPair(on bool) {
	lit := f.lit
	if !on || len(lit) == 0 || (len(lit) == 1 && !f.fold) {
		return
	}
	rank := func(c byte) int {
		if f.fold && 'a' <= c && c <= 'z' {
			return int(foldRank(c))
		}
		return int(byteRank[c])
	}
	i1 := 0
	for i, c := range lit {
		if rank(c) < rank(lit[i1]) {
			i1 = i
		}
	}
	i2 := -1
	for i, c := range lit {
		if i == i1 {
			continue
		}
		if i2 < 0 {
			i2 = i
			continue
		}
		if differs, cur := c != lit[i1], lit[i2] != lit[i1]; differs != cur {
			if differs {
				i2 = i
			}
		} else if rank(c) < rank(lit[i2]) {
			i2 = i
		}
	}
	if i2 < 0 {
		i2 = i1 // a one-byte folded literal
	}
	f.pair, f.i1, f.i2 = true, i1, i2
	f.c1, f.m1 = f.foldMask(lit[i1])
	f.c2, f.m2 = f.foldMask(lit[i2])
}

func (f *finder) foldMask(c byte) (byte, byte) {
	if f.fold && 'a' <= c && c <= 'z' {
		return c, 0x20
	}
	return c, 0
}

// litBits estimates, in quarter bits of byteBits, how rarely the scan for
// lit stops: at its two rarest bytes with the pair scan (taken as
// independent), at its rarest byte otherwise. Folded, a letter counts with
// both its cases.
func litBits(lit []byte, fold bool) int {
	b1, b2 := 0, 0 // the two largest
	for _, c := range lit {
		b := int(byteBits[c])
		if fold && 'a' <= c && c <= 'z' {
			u := math.Exp2(-float64(b)/4) + math.Exp2(-float64(byteBits[c-'a'+'A'])/4)
			b = int(math.Round(-4 * math.Log2(u)))
		}
		if b > b1 {
			b1, b2 = b, b1
		} else if b > b2 {
			b2 = b
		}
	}
	if pairScan && len(lit) > 1 {
		return b1 + b2
	}
	return b1
}

// index returns the index of the first instance of the literal in h, or -1.
func (f *finder) index(h []byte) int {
	n := len(f.lit)
	switch {
	case n == 0:
		return 0
	case n == 1 && !f.fold:
		return bytes.IndexByte(h, f.lit[0])
	case n > len(h):
		return -1
	case f.pair:
		return f.indexPair(h)
	}
	return f.indexByte(h)
}

// indexPair is index by the pair scan.
func (f *finder) indexPair(h []byte) int {
	n := len(f.lit)
	end := len(h) - n + 1 // candidate starts are below end
	fails := 0
	for k := 0; k < end; {
		p := -1
		if blocks := (end - k) &^ 15; blocks > 0 {
			if j := pairBlocks(&h[k+f.i1], &h[k+f.i2], blocks, f.c1, f.m1, f.c2, f.m2); j >= 0 {
				p = k + j
			} else {
				k += blocks
			}
		}
		if p < 0 {
			for ; k < end; k++ {
				if h[k+f.i1]|f.m1 == f.c1 && h[k+f.i2]|f.m2 == f.c2 {
					p = k
					break
				}
			}
			if p < 0 {
				return -1
			}
		}
		if f.equal(h[p : p+n]) {
			return p
		}
		k = p + 1
		// Like bytes.Index's own cutover: after too many false hits
		// for the bytes scanned, a general search is cheaper.
		if fails++; !f.fold && fails > 4+k>>4 {
			if j := bytes.Index(h[k:], f.lit); j >= 0 {
				return k + j
			}
			return -1
		}
	}
	return -1
}

// indexByte is index by the byte scan.
func (f *finder) indexByte(h []byte) int {
	n, r := len(f.lit), f.rare
	last := len(h) - n + r // the last position the scanned byte can take
	fails := 0
	for i := r; i <= last; {
		j := bytes.IndexByte(h[i:last+1], f.c)
		if j < 0 {
			return -1
		}
		i += j
		if f.equal(h[i-r : i-r+n]) {
			return i - r
		}
		i++
		if fails++; !f.fold && fails > 4+i>>4 {
			if k := bytes.Index(h[i-r:], f.lit); k >= 0 {
				return i - r + k
			}
			return -1
		}
	}
	return -1
}

func (f *finder) equal(b []byte) bool {
	if !f.fold {
		return string(b) == string(f.lit)
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != f.lit[i] {
			return false
		}
	}
	return true
}
