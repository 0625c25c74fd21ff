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
