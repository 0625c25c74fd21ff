package agenttool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/frontmatter"

	"github.com/gantry-dev/gantry/tool"
)

// Definition is one type of subagent: what the Agent tool's subagent_type
// names. The zero value of every field but Name means "inherit".
type Definition struct {
	// Name is the type's name (subagent_type): 1-64 of [a-zA-Z0-9_-].
	Name string `json:"name"`
	// Description says when to use the type; the Agent tool's description
	// lists it for the model.
	Description string `json:"description"`
	// Tools are the tools the child may use (tool names or the patterns of
	// toolset.Options.Allow, "mcp__server" for a server's tools); empty
	// means every tool of the parent except Agent (unless nesting is
	// allowed). The child can never use a tool the parent cannot.
	Tools []string `json:"tools,omitempty"`
	// DisallowedTools are removed from Tools.
	DisallowedTools []string `json:"disallowedTools,omitempty"`
	// Model is the child's model ("" or "inherit" = the parent's).
	Model string `json:"model,omitempty"`
	// PermissionMode is the child's mode ("" = the parent's). A mode wider
	// than the parent's is not applied: the child keeps the parent's.
	PermissionMode tool.Mode `json:"permissionMode,omitempty"`
	// MaxTurns bounds the child's turns (0 = the runner's default).
	MaxTurns int `json:"maxTurns,omitempty"`
	// OutputSchema, if set, is a JSON Schema of the child's final answer:
	// the child ends by calling StructuredOutput with input it accepts,
	// and the parent receives that JSON as the Agent tool's result (see
	// agent.Options.OutputSchema).
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Prompt is the child's system prompt (the body of a definition file).
	Prompt string `json:"prompt"`
	// Source says where the definition comes from: "built-in", "user",
	// "project", "cli" or "sdk"; Path is its file, if any.
	Source string `json:"source,omitempty"`
	Path   string `json:"path,omitempty"`
}

// Validate reports the first problem of d: a bad name, an empty prompt, an
// unknown permission mode, a negative MaxTurns.
func (d *Definition) Validate() error {
	switch {
	case !tool.ValidName(d.Name):
		return fmt.Errorf("agent name %q: want 1-64 of [a-zA-Z0-9_-]", d.Name)
	case strings.TrimSpace(d.Description) == "":
		return fmt.Errorf("agent %s: description is required", d.Name)
	case strings.TrimSpace(d.Prompt) == "":
		return fmt.Errorf("agent %s: the system prompt (body) is empty", d.Name)
	case d.PermissionMode != "" && !d.PermissionMode.Valid():
		return fmt.Errorf("agent %s: unknown permissionMode %q", d.Name, d.PermissionMode)
	case d.MaxTurns < 0:
		return fmt.Errorf("agent %s: maxTurns %d is negative", d.Name, d.MaxTurns)
	case len(d.OutputSchema) > 0 && !isJSONObject(d.OutputSchema):
		return fmt.Errorf("agent %s: outputSchema is not a JSON Schema object", d.Name)
	}
	return nil
}

// frontMatter is the YAML header of a definition file. Tools lists may be
// a YAML list or one comma-separated string, as in Claude Code's files.
type frontMatter struct {
	Name            string            `yaml:"name"`
	Description     string            `yaml:"description"`
	Tools           frontmatter.Names `yaml:"tools"`
	DisallowedTools frontmatter.Names `yaml:"disallowedTools"`
	Model           string            `yaml:"model"`
	PermissionMode  tool.Mode         `yaml:"permissionMode"`
	MaxTurns        int               `yaml:"maxTurns"`
	OutputSchema    any               `yaml:"outputSchema"`
}

// isJSONObject reports whether raw is one JSON object.
func isJSONObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// maxDefinitionBytes bounds a definition file.
const maxDefinitionBytes = 256 << 10

// ParseDefinition parses a definition file: a YAML front matter between
// "---" lines (name, description, tools, disallowedTools, model,
// permissionMode, maxTurns, outputSchema) followed by the system prompt. A file without
// a name takes fallbackName (the file's base name). The result is
// validated.
func ParseDefinition(data []byte, fallbackName string) (Definition, error) {
	if len(data) > maxDefinitionBytes {
		return Definition{}, fmt.Errorf("definition is larger than %d bytes", maxDefinitionBytes)
	}
	var fm frontMatter
	body, err := frontmatter.Parse(data, &fm)
	if err != nil {
		return Definition{}, err
	}
	d := Definition{
		Name: fm.Name, Description: strings.TrimSpace(fm.Description), Tools: fm.Tools, DisallowedTools: fm.DisallowedTools,
		Model: strings.TrimSpace(fm.Model), PermissionMode: fm.PermissionMode, MaxTurns: fm.MaxTurns,
		Prompt: strings.TrimSpace(body),
	}
	if fm.OutputSchema != nil {
		b, err := json.Marshal(fm.OutputSchema)
		if err != nil {
			return Definition{}, fmt.Errorf("front matter: outputSchema: %w", err)
		}
		d.OutputSchema = b
	}
	if d.Name == "" {
		d.Name = fallbackName
	}
	if d.Model == "inherit" {
		d.Model = ""
	}
	if err := d.Validate(); err != nil {
		return Definition{}, err
	}
	return d, nil
}

// LoadDir reads every *.md file of dir as a definition, in name order. A
// missing directory is no definitions; a file that does not parse is
// reported in the returned errors (joined) and skipped, so one bad file does
// not hide the others.
func LoadDir(dir, source string) ([]Definition, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Definition
	var errs []error
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := readLimited(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d, err := ParseDefinition(data, strings.TrimSuffix(e.Name(), ".md"))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		d.Source, d.Path = source, path
		out = append(out, d)
	}
	return out, errors.Join(errs...)
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if fi.Size() > maxDefinitionBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxDefinitionBytes)
	}
	return os.ReadFile(path)
}

// LoadOptions say where [Load] looks for definition files.
type LoadOptions struct {
	// ProjectDir is the project whose .gantry/agents and .claude/agents
	// are read ("" = none). Read them only in a trusted folder: a
	// definition's body becomes a system prompt.
	ProjectDir string
	// UserHome is the user's home, whose ~/.claude/agents is read, and
	// GantryHome the Gantry home (~/.gantry), whose agents directory is
	// read ("" = none).
	UserHome, GantryHome string
}

// Load reads the definition files: user level (~/.claude/agents, then
// <GantryHome>/agents) and project level (.claude/agents, then
// .gantry/agents), a later one replacing an earlier one of the same name.
// Errors of single files are joined in the error; the definitions read are
// returned anyway.
func Load(o LoadOptions) ([]Definition, error) {
	type src struct{ dir, source string }
	var dirs []src
	if o.UserHome != "" {
		dirs = append(dirs, src{filepath.Join(o.UserHome, ".claude", "agents"), "user"})
	}
	if o.GantryHome != "" {
		dirs = append(dirs, src{filepath.Join(o.GantryHome, "agents"), "user"})
	}
	if o.ProjectDir != "" {
		dirs = append(dirs, src{filepath.Join(o.ProjectDir, ".claude", "agents"), "project"},
			src{filepath.Join(o.ProjectDir, ".gantry", "agents"), "project"})
	}
	byName := map[string]Definition{}
	var errs []error
	for _, d := range dirs {
		defs, err := LoadDir(d.dir, d.source)
		errs = append(errs, err)
		for _, def := range defs {
			byName[def.Name] = def
		}
	}
	out := make([]Definition, 0, len(byName))
	for _, d := range byName {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// ParseJSON reads agent types given as one JSON object keyed by name (the
// CLI's --agents and the Agent SDKs' agents option): {"name":
// {"description": …, "prompt": …, "tools": […], …}}. Unknown fields are
// an error (a setting that would be silently ignored is a surprise); each
// definition is validated; source labels them. The result is sorted by
// name.
func ParseJSON(data []byte, source string) ([]Definition, error) {
	var m map[string]Definition
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	out := make([]Definition, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		d := m[name]
		d.Name, d.Source = name, source
		if err := d.Validate(); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
