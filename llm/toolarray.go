package llm

import (
	"hash/maphash"
	"sync"
	"unsafe"
)

// Bounds of the joined arrays a [ToolEncodings] keeps: real programs send
// a handful of distinct tool lists (a list changes with the pool's
// restrictions and the deferred tools a session loaded). The bounds only
// protect against a program that sends a new list on every request: the
// arrays are then emptied and made again.
const (
	maxToolArrays     = 256
	maxToolArrayBytes = 32 << 20
)

// toolArrays is the store of joined tool arrays, found by the identity of
// the pieces (the encodings [ToolEncodings.Get] shares are the same slices
// from one request to the next: no byte is read) and else by their
// content.
type toolArrays struct {
	mu        sync.RWMutex
	byID      map[uint64][]*toolArray
	byContent map[uint64][]*toolArray
	n, size   int
}

type toolArray struct {
	pieces [][]byte // what it was made from, referenced: identity is a key
	joined []byte
}

// Array returns the JSON array of the encoded definitions encs —
// "[" + encs[0] + "," + encs[1] + … + "]" — as one immutable slice shared
// by every request that sends the same list, in this or another session:
// a request body references it (see [StreamBody]) instead of holding a
// slice header per tool and per comma, and the bytes of a tool list exist
// once per content, not once per request. It is content-addressed: a list
// of the same encodings in the same order gives the same array, whether
// its pieces are the shared slices of [ToolEncodings.Get] (found by their
// identity, without reading a byte) or pieces an adapter encodes on every
// request, such as a server tool (found by hashing and comparing their
// bytes). An empty encs gives nil. The returned bytes must not be
// modified, nor the pieces after the call.
func (c *ToolEncodings) Array(encs [][]byte) []byte {
	if len(encs) == 0 {
		return nil
	}
	c.once.Do(func() { c.seed = maphash.MakeSeed() })
	a := &c.arrays
	idKey := identityKey(encs)
	a.mu.RLock()
	for _, e := range a.byID[idKey] {
		if samePieces(e.pieces, encs) {
			a.mu.RUnlock()
			return e.joined
		}
	}
	a.mu.RUnlock()

	var ck uint64 = 0x9e3779b97f4a7c15
	n := 1 + len(encs) // the brackets and the commas
	for _, e := range encs {
		ck = (ck ^ maphash.Bytes(c.seed, e)) * 0xff51afd7ed558ccd
		n += len(e)
	}
	a.mu.RLock()
	for _, e := range a.byContent[ck] {
		if equalPieces(e.pieces, encs) {
			a.mu.RUnlock()
			return e.joined
		}
	}
	a.mu.RUnlock()

	j := make([]byte, 0, n)
	j = append(j, '[')
	for i, e := range encs {
		if i > 0 {
			j = append(j, ',')
		}
		j = append(j, e...)
	}
	j = append(j, ']')
	e := &toolArray{pieces: append([][]byte(nil), encs...), joined: j}

	a.mu.Lock()
	defer a.mu.Unlock()
	for _, old := range a.byContent[ck] {
		if equalPieces(old.pieces, encs) {
			return old.joined
		}
	}
	if a.byID == nil || a.n >= maxToolArrays || a.size+n > maxToolArrayBytes {
		a.byID, a.byContent, a.n, a.size = make(map[uint64][]*toolArray), make(map[uint64][]*toolArray), 0, 0
	}
	a.byID[idKey] = append(a.byID[idKey], e)
	a.byContent[ck] = append(a.byContent[ck], e)
	a.n++
	a.size += n
	return j
}

// identityKey hashes the addresses and lengths of the pieces.
func identityKey(encs [][]byte) uint64 {
	h := uint64(len(encs))
	for _, e := range encs {
		h = (h ^ uint64(uintptr(unsafe.Pointer(unsafe.SliceData(e))))) * 0xff51afd7ed558ccd
		h = (h ^ uint64(len(e))) * 0xc4ceb9fe1a85ec53
	}
	return h ^ h>>33
}

// samePieces reports whether a and b are the same slices.
func samePieces(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) || unsafe.SliceData(a[i]) != unsafe.SliceData(b[i]) {
			return false
		}
	}
	return true
}

// equalPieces reports whether a and b hold equal bytes, piece by piece.
func equalPieces(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			return false
		}
	}
	return true
}

// Arrays returns the number of joined arrays held (see
// [ToolEncodings.Array]).
func (c *ToolEncodings) Arrays() int {
	c.arrays.mu.RLock()
	defer c.arrays.mu.RUnlock()
	return c.arrays.n
}
