package interaction

import (
	"strings"

	"github.com/gantry-dev/gantry/internal/outbuf"
	"github.com/gantry-dev/gantry/internal/textutil"
)

// OneLine puts s on one line of at most n runes: every run of white space
// (newlines included) becomes one space, leading and trailing white space is
// dropped, and a longer string is cut to n-1 runes followed by "…". The cut
// never splits a UTF-8 character. OneLine does not escape control
// characters; use [DisplayLine] for text from a model or a tool.
func OneLine(s string, n int) string { return textutil.OneLine(s, n) }

// DisplayLine makes s safe to show on one terminal line of at most n runes:
// control and invisible characters are escaped as the [Terminal] escapes
// them, a newline is shown as \n, a tab as a space, and a longer string is
// cut to n-1 runes followed by "…" without splitting a UTF-8 character.
func DisplayLine(s string, n int) string {
	s = outbuf.EscapeDisplay(s)
	s = strings.NewReplacer("\n", `\n`, "\t", " ").Replace(s)
	return textutil.Truncate(s, n)
}
