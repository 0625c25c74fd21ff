package search

import "bytes"

// finder looks for a literal in a text the way fast grep tools do: it
// scans for one rare byte of the literal (by [byteRank]) with
// [bytes.IndexByte], which is vectorised, and compares the literal around
// each hit. A common first byte — the "e" of "errors.New" — would stop a
// first-byte scan every few bytes; the rarest byte rarely stops it. When
// hits that do not lead to a match become frequent (a literal of common
// bytes only), an exact finder hands the rest of the text to [bytes.Index].
//
// A folding finder matches ASCII letters of either case (its literal is
// lower-case): it scans for a byte that is not a letter, or for one case
// of a letter — [foldFinders] pairs two finders for the two cases.
type finder struct {
	lit  []byte
	rare int  // index in lit of the byte scanned for
	c    byte // the byte scanned for: lit[rare], or its upper case
	fold bool
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
	return f
}

// foldFinders returns the finders of the lower-case ASCII literal lit
// matched case-insensitively: one, scanning for its rarest non-letter, when
// that byte is about as rare as its rarest letter; else two, scanning for
// the rarest letter in each case.
func foldFinders(lit []byte) []*finder {
	if len(lit) == 0 {
		return []*finder{{fold: true}}
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

// index returns the index of the first instance of the literal in h, or -1.
func (f *finder) index(h []byte) int {
	n, r := len(f.lit), f.rare
	switch {
	case n == 0:
		return 0
	case n == 1 && !f.fold:
		return bytes.IndexByte(h, f.c)
	case n > len(h):
		return -1
	}
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
		// Like bytes.Index's own cutover: after too many false hits
		// for the bytes scanned, a general search is cheaper.
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
