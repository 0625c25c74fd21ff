// Package textutil holds the text rules Gantry applies in many places: how a
// string is cut to a length, and how it is put on one line. Every cut is on a
// rune boundary, so a cut never splits a UTF-8 character in two.
package textutil

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks the place where [Truncate] cut a string.
const Ellipsis = "…"

// Head returns the first n runes of s and whether anything was cut, that is
// whether s has more than n runes. An invalid UTF-8 byte counts as one rune,
// as in a range loop, and is kept as it is. A negative n counts as 0.
//
// Head reads at most the first n+1 runes of s and does not allocate.
func Head(s string, n int) (head string, cut bool) {
	if n < 0 {
		n = 0
	}
	if len(s) <= n { // at most n bytes, so at most n runes
		return s, false
	}
	i := 0
	for range n {
		if i >= len(s) {
			return s, false
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i], i < len(s)
}

// Truncate bounds s to at most n runes: a string of n runes or fewer comes
// back unchanged, a longer one as its first n-1 runes followed by [Ellipsis]
// (so the result has exactly n runes). Truncate(s, 0) is "" and Truncate(s, 1)
// of a longer string is "…".
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if _, cut := Head(s, n); !cut {
		return s
	}
	head, _ := Head(s, n-1)
	return head + Ellipsis
}

// OneLine puts s on one line, replacing every run of white space (newlines
// included) by one space and dropping leading and trailing white space, then
// bounds it to n runes as [Truncate] does.
func OneLine(s string, n int) string {
	return Truncate(strings.Join(strings.Fields(s), " "), n)
}
