package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/internal/outbuf"
)

// rendered is command output prepared for the model and for people.
type rendered struct {
	// Model is the text for the model: escapes stripped, at most the inline
	// budget, cut in the middle with a note when longer.
	Model string
	// Display is the same span for people with escapes made visible.
	Display string
	// Truncated reports that the middle was cut.
	Truncated bool
	// Path is the file holding the whole output when Truncated ("" if it
	// could not be saved).
	Path string
}

// render prepares output held as head and tail bytes (contiguous when elided
// is zero). When the output is longer than maxChars it is cut to the first
// and last maxChars/2 characters with a note; the whole output must then be
// in a file: path if set, else it is written to dir (possible only when
// head+tail is the whole output).
func render(head, tail []byte, elided, total int64, maxChars int, path, dir, pattern string) rendered {
	head, tail = outbuf.TrimPartialRunes(head, tail)
	var rawHead, rawTail string
	if elided == 0 {
		rawHead = string(head) + string(tail)
	} else {
		rawHead, rawTail = string(head), string(tail)
	}
	model := outbuf.StripEscapes(rawHead)
	if elided == 0 && utf8.RuneCountInString(model) <= maxChars {
		return rendered{Model: trimNewline(model), Display: trimNewline(outbuf.EscapeDisplay(rawHead))}
	}
	// Cut: first half from the head, last half from the tail (or from the
	// whole when it is contiguous).
	half := maxChars / 2
	var mHead, mTail, dHead, dTail string
	if elided == 0 {
		mHead, mTail = firstRunes(model, half), lastRunes(model, half)
		dHead, dTail = outbuf.EscapeDisplay(firstRunes(rawHead, half)), outbuf.EscapeDisplay(lastRunes(rawHead, half))
		if path == "" && dir != "" {
			path = saveFile(dir, pattern, head, tail)
		}
	} else {
		mHead, mTail = firstRunes(model, half), lastRunes(outbuf.StripEscapes(rawTail), half)
		dHead, dTail = outbuf.EscapeDisplay(firstRunes(rawHead, half)), outbuf.EscapeDisplay(lastRunes(rawTail, half))
	}
	where := "it could not be saved"
	if path != "" {
		where = "the full output is in " + path
	}
	note := fmt.Sprintf("\n\n… [output truncated: %d bytes in all, the middle omitted; %s] …\n\n", total, where)
	return rendered{
		Model:     mHead + note + trimNewline(mTail),
		Display:   dHead + note + trimNewline(dTail),
		Truncated: true,
		Path:      path,
	}
}

func saveFile(dir, pattern string, parts ...[]byte) string {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return ""
	}
	for _, p := range parts {
		if _, err := f.Write(p); err != nil {
			f.Close()
			os.Remove(f.Name())
			return ""
		}
	}
	if err := f.Close(); err != nil {
		return ""
	}
	return f.Name()
}

func trimNewline(s string) string { return strings.TrimRight(s, "\n") }

func firstRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

func lastRunes(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// lastLines returns up to n of the last non-empty lines of b, escapes
// stripped.
func lastLines(b []byte, n int) string {
	s := outbuf.StripEscapes(string(b))
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// sanitizeName makes s safe as part of a file name.
func sanitizeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// resultsDir is where output files go: env's ToolResultsDir, else a
// directory under the system temp dir.
func resultsDir(dir string) string {
	if dir != "" {
		return dir
	}
	return filepath.Join(os.TempDir(), "gantry-tool-results")
}
