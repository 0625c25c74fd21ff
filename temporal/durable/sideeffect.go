package durable

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/tool"
)

// progress is what a tool activity heartbeats: the marker that the call
// started, and for Write and Edit the file's hash before it.
type progress struct {
	Started bool      `json:"started"`
	At      time.Time `json:"at"`
	Attempt int32     `json:"attempt"`
	// Path is the file Write or Edit changes (absolute); Before is its
	// SHA-256 before the call ("" = it did not exist).
	Path   string `json:"path,omitempty"`
	Before string `json:"before,omitempty"`
}

// Recovery outcomes (ToolOutcome.Recovered).
const (
	RecoveredRerun       = "rerun"
	RecoveredConfirmed   = "confirmed"
	RecoveredInterrupted = "interrupted"
)

// fileTools are the tools whose effect is one file's content: a second
// attempt can tell from the file whether the first one wrote.
var fileTools = map[string]bool{"Write": true, "Edit": true}

type fileInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// fileBefore returns the absolute path a Write or Edit call changes and
// the file's hash now ("" for other tools or a missing file).
func fileBefore(name string, input json.RawMessage, wd string) (path, hash string) {
	if !fileTools[name] {
		return "", ""
	}
	var in fileInput
	if json.Unmarshal(input, &in) != nil || in.FilePath == "" {
		return "", ""
	}
	path = in.FilePath
	if !filepath.IsAbs(path) {
		path = filepath.Join(wd, path)
	}
	h, _ := hashFile(path)
	return path, h
}

func hashFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// recoverCall decides about a side-effecting call whose earlier attempt
// started on a worker that is gone (prev is that attempt's heartbeat). It
// returns rerun when the call is proven not to have had its effect (a
// Write or Edit whose file is unchanged): the call runs again. Otherwise
// the call is not run again and the model gets what is known in out.
func recoverCall(name string, in toolInput, prev progress, now time.Time) (out *toolOutput, rerun bool) {
	out = &toolOutput{Outcome: ToolOutcome{ID: in.ID, Name: in.Name}}
	since := ""
	if !prev.At.IsZero() {
		since = fmt.Sprintf(" It started at %s (%s ago).", prev.At.UTC().Format(time.RFC3339), now.Sub(prev.At).Round(time.Second))
	}
	if fileTools[name] && prev.Path != "" {
		cur, err := hashFile(prev.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			cur = "unreadable"
		}
		if cur == prev.Before {
			return nil, true
		}
		if name == "Write" {
			var fi fileInput
			if json.Unmarshal(in.Input, &fi) == nil {
				sum := sha256.Sum256([]byte(fi.Content))
				if cur == hex.EncodeToString(sum[:]) {
					out.Result = tool.TextResult(fmt.Sprintf("The file %s was written. (The worker running this call stopped after writing; Gantry checked that the file has the content and did not write it again.)", prev.Path))
					out.Outcome.Recovered = RecoveredConfirmed
					return out, false
				}
			}
		}
		out.Result = tool.Errorf("This %s call was interrupted: the worker running it stopped.%s The file %s changed since the call started, so the edit may or may not have been applied; Gantry did not run it again. Read the file to see its content before changing it again.", name, since, prev.Path)
		out.Outcome.Recovered, out.Outcome.Kind, out.Outcome.IsError = RecoveredInterrupted, "interrupted", true
		return out, false
	}
	desc := name
	if d := strings.TrimSpace(describeInput(in.Input)); d != "" {
		desc = fmt.Sprintf("%s (%s)", name, d)
	}
	out.Result = tool.Errorf("This %s call was interrupted: the worker running it stopped while it ran.%s It may have run in part or in full; Gantry did not run it again, because running a call with side effects twice is not safe. Check what it did (with read-only tools) before deciding whether to run it again.", desc, since)
	out.Outcome.Recovered, out.Outcome.Kind, out.Outcome.IsError = RecoveredInterrupted, "interrupted", true
	return out, false
}

// describeInput shows a call's input briefly (a Bash command, a path).
func describeInput(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "path", "url"} {
		if s, ok := m[k].(string); ok {
			return k + ": " + textutil.Truncate(s, 200)
		}
	}
	return ""
}
