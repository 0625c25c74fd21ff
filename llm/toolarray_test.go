package llm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gantry-dev/gantry/llm"
)

func TestToolArray(t *testing.T) {
	var c llm.ToolEncodings
	b := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, v := range s {
			out[i] = []byte(v) // new backing arrays every time: content decides
		}
		return out
	}
	if got := c.Array(nil); got != nil {
		t.Fatalf("Array(nil) = %q, want nil", got)
	}
	a1 := c.Array(b(`{"a":1}`, `{"b":2}`))
	if string(a1) != `[{"a":1},{"b":2}]` || !json.Valid(a1) {
		t.Fatalf("Array = %s", a1)
	}
	a2 := c.Array(b(`{"a":1}`, `{"b":2}`))
	if unsafe.SliceData(a1) != unsafe.SliceData(a2) {
		t.Error("the same list from other slices: a second array, want the shared one")
	}
	for _, other := range [][][]byte{
		b(`{"b":2}`, `{"a":1}`),      // order
		b(`{"a":1}`),                 // fewer
		b(`{"a":1}`, `{"b":2}`, `3`), // more
		b(`{"a":1},{"b":2}`),         // the same bytes split otherwise: another list
		b(`{"a":1}`, `{"b":3}`),      // content
	} {
		got := c.Array(other)
		want := "[" + string(joinPieces(other)) + "]"
		if string(got) != want {
			t.Errorf("Array(%q) = %s, want %s", other, got, want)
		}
	}
	if n := c.Arrays(); n != 6 {
		t.Errorf("Arrays = %d, want 6", n)
	}
	// The shared pieces themselves: found by identity, the same array.
	shared := b(`{"x":1}`, `{"y":2}`)
	if x, y := c.Array(shared), c.Array(shared); unsafe.SliceData(x) != unsafe.SliceData(y) || string(x) != `[{"x":1},{"y":2}]` {
		t.Errorf("Array of the same pieces: %s and %s, not one array", x, y)
	}
}

func joinPieces(p [][]byte) []byte {
	var s []string
	for _, x := range p {
		s = append(s, string(x))
	}
	return []byte(strings.Join(s, ","))
}

// TestToolArrayBounded: a program that sends a new list on every request
// does not grow the store without bound, and every array stays right.
func TestToolArrayBounded(t *testing.T) {
	var c llm.ToolEncodings
	for i := range 1000 {
		got := c.Array([][]byte{[]byte(fmt.Sprintf(`{"n":%d}`, i))})
		if want := fmt.Sprintf(`[{"n":%d}]`, i); string(got) != want {
			t.Fatalf("Array = %s, want %s", got, want)
		}
	}
	if n := c.Arrays(); n > 256 {
		t.Errorf("Arrays = %d, want at most 256", n)
	}
}

func TestToolArrayConcurrent(t *testing.T) {
	var c llm.ToolEncodings
	lists := [][][]byte{{[]byte(`1`), []byte(`2`)}, {[]byte(`3`)}, {[]byte(`1`), []byte(`2`), []byte(`3`)}}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				l := lists[(g+i)%len(lists)]
				if got, want := c.Array(l), "["+string(joinPieces(l))+"]"; string(got) != want {
					t.Errorf("Array = %s, want %s", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := c.Arrays(); n != len(lists) {
		t.Errorf("Arrays = %d, want %d", n, len(lists))
	}
}

// BenchmarkToolArray: the lookup of a built-in-sized tools array (40
// definitions of ~1 KB) that is already held: by the pieces' identity (the
// shared encodings, every request), by content (a list with a piece made
// for the request).
func BenchmarkToolArray(b *testing.B) {
	var c llm.ToolEncodings
	encs := make([][]byte, 40)
	for i := range encs {
		encs[i] = []byte(fmt.Sprintf(`{"name":"T%d","description":%q}`, i, strings.Repeat("d", 1000)))
	}
	c.Array(encs)
	b.Run("identity", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Array(encs)
		}
	})
	b.Run("content", func(b *testing.B) {
		fresh := append([][]byte(nil), encs...)
		b.ReportAllocs()
		for b.Loop() {
			fresh[39] = append([]byte(nil), encs[39]...)
			c.Array(fresh)
		}
	})
}
