package web

import "unicode/utf8"

func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

func countRunes(s string) int { return utf8.RuneCountInString(s) }
