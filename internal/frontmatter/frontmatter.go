// Package frontmatter reads Markdown files that start with a YAML header
// between "---" lines: skills (SKILL.md), agent definitions and slash
// commands. It is the one place that decides what such a header is.
//
// The tolerance, the same for every caller:
//
//   - a UTF-8 byte-order mark before the first line is dropped;
//   - CRLF line endings are read as LF;
//   - the first line must be "---", the closing line the next line that is
//     "---"; both may end in spaces or tabs ("----" or "--- x" is not a
//     delimiter);
//   - an empty header is no fields; the body is everything after the
//     closing line (with no closing line there is no front matter at all:
//     an error, not a file that is all header).
package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/gantry-dev/gantry/toolset"
)

var (
	// ErrMissing is returned for a file that does not start with a "---" line.
	ErrMissing = errors.New("no front matter: the file must start with a --- line")
	// ErrUnclosed is returned for a header with no closing "---" line.
	ErrUnclosed = errors.New("the front matter is not closed by a --- line")
)

// Split separates data's header (the YAML between the delimiter lines,
// without them) from its body, with the tolerance of the package comment.
func Split(data []byte) (header, body string, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	first, rest, _ := strings.Cut(text, "\n")
	if !isDelimiter(first) {
		return "", "", ErrMissing
	}
	for off := 0; off <= len(rest); {
		line, _, more := strings.Cut(rest[off:], "\n")
		if isDelimiter(line) {
			header = strings.TrimSuffix(rest[:off], "\n")
			if more {
				body = rest[off+len(line)+1:]
			}
			return header, body, nil
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	return "", "", ErrUnclosed
}

func isDelimiter(line string) bool { return strings.TrimRight(line, " \t") == "---" }

// Parse splits data (see [Split]) and decodes its header into v, a pointer
// to a struct with yaml tags. An empty header leaves v as it is. Errors
// from the YAML decoder are wrapped with "front matter: " and their line
// numbers are the file's.
func Parse(data []byte, v any) (body string, err error) {
	header, body, err := Split(data)
	if err != nil {
		return "", err
	}
	// The leading newline stands for the opening "---", so that the
	// decoder's line numbers are the file's.
	if err := yaml.NewDecoder(strings.NewReader("\n" + header)).Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("front matter: %w", err)
	}
	return body, nil
}

// Names is a header field that lists names (tools, most often): a YAML
// list, or one string of names separated by commas or spaces as
// [toolset.SplitNames] reads it, so "Bash(git diff:*), Read" keeps the
// parentheses together. Items of a list are split the same way; empty
// names are dropped.
type Names []string

// UnmarshalYAML implements yaml.Unmarshaler.
func (l *Names) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = toolset.SplitNames(n.Value)
		return nil
	case yaml.SequenceNode:
		var out Names
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return errors.New("want a list of tool names")
			}
			out = append(out, toolset.SplitNames(c.Value)...)
		}
		*l = out
		return nil
	}
	return errors.New("want a list or a comma-separated string of tool names")
}
