package interaction

import (
	"encoding/json"
	"strings"
)

// CallPreview is what a tool call will do, in the form a person must see
// before approving it: the exact command of a shell call, the file and the
// change of a file edit, the address of a fetch, else the input itself.
// Every field holds the full text — nothing is shortened here; a front end
// that cannot show all of it at once must let the person scroll or expand
// it. The text is raw (it comes from the model): escape it for display.
//
// The model's description of a call ([PermissionRequest.Description]) is
// secondary: it says what the model claims the call is for, the preview
// what the call does.
type CallPreview struct {
	// Command is the full command of a shell call (Bash's "command").
	Command string
	// Path is the file a file change writes (Edit, Write, NotebookEdit);
	// Removed and Added are its old and new text ("" for none): what is
	// replaced and what replaces it.
	Path           string
	Removed, Added string
	// ReplaceAll reports an Edit that replaces every occurrence.
	ReplaceAll bool
	// URL is the address a WebFetch reads.
	URL string
	// Input is the call's input as compact JSON when none of the above
	// applies (or the input is not an object).
	Input string
}

// Preview returns the [CallPreview] of a call of the named tool with
// input.
func Preview(toolName string, input json.RawMessage) CallPreview {
	var in map[string]any
	if err := json.Unmarshal(input, &in); err != nil || in == nil {
		return CallPreview{Input: strings.TrimSpace(string(input))}
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	switch toolName {
	case "Bash":
		if c, ok := in["command"].(string); ok {
			return CallPreview{Command: c}
		}
	case "Edit":
		all, _ := in["replace_all"].(bool)
		return CallPreview{Path: str("file_path"), Removed: str("old_string"), Added: str("new_string"), ReplaceAll: all}
	case "Write":
		return CallPreview{Path: str("file_path"), Added: str("content")}
	case "NotebookEdit":
		return CallPreview{Path: str("notebook_path"), Added: str("new_source")}
	case "WebFetch":
		if u := str("url"); u != "" {
			return CallPreview{URL: u}
		}
	}
	b, _ := json.Marshal(in)
	return CallPreview{Input: string(b)}
}

// DiffLines returns the change of a file edit as lines: each line of
// removed prefixed "- ", then each line of added prefixed "+ ". It is the
// whole change, never shortened.
func DiffLines(removed, added string) []string {
	var lines []string
	add := func(prefix, s string) {
		if s == "" {
			return
		}
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			lines = append(lines, prefix+l)
		}
	}
	add("- ", removed)
	add("+ ", added)
	return lines
}
