// Package skill holds the built-in Skill tool: skills are folders with a
// SKILL.md file (YAML front matter with name, description, allowed-tools
// and an optional model, then the instructions) that the model loads on
// demand.
//
// Skills are found in, from weakest to strongest (a later skill replaces
// an earlier one of the same name): the user's ~/.claude/skills and
// $GANTRY_HOME/skills (default ~/.gantry/skills), the SDK's
// [Options.Skills] and [Options.Dirs], and the project's .claude/skills and
// .gantry/skills. The tool's description lists only names and descriptions
// (progressive disclosure); calling it appends the skill's instructions to
// the conversation, makes the skill's folder readable, narrows the tools to
// the skill's allowed-tools for the rest of the turn through the pool's
// restriction stack, and bounds nesting (a skill calling a skill).
package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/frontmatter"
)

// FileName is the name of a skill's instructions file.
const FileName = "SKILL.md"

// maxSkillBytes bounds a SKILL.md file.
const maxSkillBytes = 256 << 10

// Skill is one skill.
type Skill struct {
	// Name is what the model passes as `skill` (letters, digits, '-', '_',
	// ':' and '.'; at most 64 characters).
	Name string
	// Description tells the model when to use the skill. Required.
	Description string
	// AllowedTools, if not empty, narrows the tools the model may call
	// while the skill is active (tool names or patterns of the pool's
	// allow list; a permission rule's specifier is ignored here — the
	// permission layer still decides each call).
	AllowedTools []string
	// Model is the model the skill asks for ("" = the session's). It is
	// reported, not applied (see docs/rough-edges.md).
	Model string
	// Body is the instructions (the file after the front matter).
	Body string
	// Dir is the skill's folder ("" for skills given in code).
	Dir string
	// Source says where the skill was found ("project", "user", "sdk").
	Source string
}

// validNameRE is compiled on first use, not at init. The length bound is
// checked apart: a counted repetition ({0,63}) compiles to nested optional
// groups, a deep recursion and a large program.
var validNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`) })

// validName reports whether name is a usable skill name: a letter or digit,
// then letters, digits, - _ . :, at most 64 in all.
func validName(name string) bool { return len(name) <= 64 && validNameRE().MatchString(name) }

// frontMatter is the YAML header of SKILL.md.
type frontMatter struct {
	Name         string            `yaml:"name"`
	Description  string            `yaml:"description"`
	AllowedTools frontmatter.Names `yaml:"allowed-tools"`
	Model        string            `yaml:"model"`
}

// Parse reads a SKILL.md file's content. dirName is the folder's name,
// used when the front matter has no name.
func Parse(data []byte, dirName string) (*Skill, error) {
	if len(data) > maxSkillBytes {
		return nil, fmt.Errorf("%s is over %d KiB", FileName, maxSkillBytes>>10)
	}
	var fm frontMatter
	body, err := frontmatter.Parse(data, &fm)
	if errors.Is(err, frontmatter.ErrMissing) {
		return nil, fmt.Errorf("%w, then name and description, then ---", err)
	}
	if err != nil {
		return nil, err
	}
	s := &Skill{Name: strings.TrimSpace(fm.Name), Description: strings.TrimSpace(fm.Description), Model: strings.TrimSpace(fm.Model), Body: strings.TrimSpace(body)}
	if s.Name == "" {
		s.Name = dirName
	}
	if !validName(s.Name) {
		return nil, fmt.Errorf("invalid skill name %q (letters, digits, - _ . :, at most 64)", s.Name)
	}
	if s.Description == "" {
		return nil, fmt.Errorf("skill %q has no description", s.Name)
	}
	s.AllowedTools = fm.AllowedTools
	return s, nil
}

// Load reads every skill folder (a directory holding SKILL.md) directly
// under dir. A missing dir is no skills; a folder whose SKILL.md is
// invalid is reported in the returned problems and skipped.
func Load(dir, source string) (skills []*Skill, problems []error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			problems = append(problems, fmt.Errorf("skills in %s: %w", dir, err))
		}
		return nil, problems
	}
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		fi, err := os.Stat(sub) // follows a symlinked skill folder
		if err != nil || !fi.IsDir() {
			continue
		}
		p := filepath.Join(sub, FileName)
		b, err := readBounded(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", p, err))
			continue
		}
		s, err := Parse(b, e.Name())
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", p, err))
			continue
		}
		s.Dir, s.Source = sub, source
		skills = append(skills, s)
	}
	slices.SortFunc(skills, func(a, b *Skill) int { return strings.Compare(a.Name, b.Name) })
	return skills, problems
}

func readBounded(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > maxSkillBytes {
		return nil, fmt.Errorf("%s is over %d KiB", FileName, maxSkillBytes>>10)
	}
	return os.ReadFile(p)
}
