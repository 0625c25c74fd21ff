// Package ignorefile reads .gitignore-syntax files into go-git's gitignore
// patterns (github.com/go-git/go-git/v5/plumbing/format/gitignore). It is
// the one place that decides which lines of such a file are patterns;
// go-git matches them, for Grep/Glob's walk and for checkpoints alike.
package ignorefile

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// MaxSize bounds the bytes of an ignore file that are read; the rest is
// not.
const MaxSize = 4 << 20

// Parse reads the patterns of data: one per line, CR of a CRLF ending
// dropped, blank lines and lines starting with "#" skipped. domain is the
// path (split on "/") of the directory the file applies to, relative to
// where matching starts; nil for that directory itself.
func Parse(data []byte, domain []string) []gitignore.Pattern {
	var out []gitignore.Pattern
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		l := strings.TrimSuffix(string(line), "\r")
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, gitignore.ParsePattern(l, domain))
	}
	return out
}

// ReadFile parses the ignore file at path (at most [MaxSize] bytes of it);
// a missing or unreadable file has no patterns.
func ReadFile(path string, domain []string) []gitignore.Pattern {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	return Read(f, domain)
}

// Read parses the ignore file r (at most [MaxSize] bytes of it).
func Read(r io.Reader, domain []string) []gitignore.Pattern {
	data, _ := io.ReadAll(io.LimitReader(r, MaxSize))
	return Parse(data, domain)
}
