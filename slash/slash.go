// Package slash is the one registry of slash commands: the built-in ones
// (/compact and the reports of package slash/local, which front ends run
// themselves; /init and /review, built-in prompts) and the custom commands
// of Markdown files, expanded into the prompt the model gets. The terminal,
// `gantry -p` and the Agent SDK's stream-json sessions all read the same
// [Registry].
//
// Custom commands are the files *.md under, from weakest to strongest (a
// later command replaces an earlier one of the same name):
//
//   - the user's ~/.claude/commands and <Gantry home>/commands;
//   - a trusted project's .claude/commands and .gantry/commands (only
//     when the caller passes [LoadOptions.ProjectDir], which it does for
//     a trusted folder only: a command's text becomes a prompt and its
//     front matter picks tools and a model, like project settings).
//
// A file's name without .md is the command's name; a file in a subfolder
// is namespaced by it, as the reference agent does: frontend/component.md
// is /component with the namespace "frontend" (shown in its description)
// and is also reachable as /frontend:component — the only name it has
// when another command of its scope is called component.
//
// The optional front matter (internal/frontmatter, the reader of skills
// and agent definitions too) holds description, argument-hint, allowed-tools,
// model and disable-model-invocation. The body is the prompt: $ARGUMENTS
// is replaced by the command's arguments, $1, $2 … by single arguments
// (split like shell words, quotes kept together); a body with no
// placeholder gets the arguments appended after "ARGUMENTS: ".
package slash

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v4"

	"github.com/gantry-dev/gantry/internal/frontmatter"
	"github.com/gantry-dev/gantry/plugins"
	"github.com/gantry-dev/gantry/toolset"
)

// Sources of a [Command].
const (
	SourceBuiltin = "builtin"
	SourceUser    = "user"
	SourceProject = "project"
	SourcePlugin  = "plugin"
)

// maxFileBytes bounds a command file.
const maxFileBytes = 256 << 10

// Command is one slash command.
type Command struct {
	// Name is what follows the slash ("compact", "greet").
	Name string
	// Description says what the command does: the front matter's, else
	// the body's first line.
	Description string
	// ArgumentHint shows the arguments the command takes ("[name]").
	ArgumentHint string
	// AllowedTools, if not empty, narrows the tools of the command's turn
	// (tool names or patterns of the pool's allow list, as a skill's
	// allowed-tools; the permission layer still decides each call).
	AllowedTools []string
	// Model is the model of the command's turn ("" = the session's).
	Model string
	// DisableModelInvocation keeps the command from the model (it is the
	// person's or program's to run).
	DisableModelInvocation bool
	// Body is the prompt template (custom commands; "" for built-ins).
	Body string
	// Namespace is the subfolder the file is in ("" at the top; "a:b" for
	// a/b/), Path the file.
	Namespace, Path string
	// Source is where the command comes from (SourceBuiltin, SourceUser,
	// SourceProject).
	Source string
}

// Builtin reports whether the front end runs c itself (a built-in
// command without a prompt; /init and /review are built-in prompts the
// model runs, like custom commands).
func (c *Command) Builtin() bool { return c.Source == SourceBuiltin && c.Body == "" }

// builtins are the built-in commands, in the order they are listed. The
// ones without a Body are run by the front end (package slash/local holds
// what they do, for every front end); the others are prompts.
var builtins = []Command{
	{Name: "compact", Description: "Summarise the conversation so far to free context (optional: what the summary should keep)", ArgumentHint: "[instructions]"},
	{Name: "clear", Description: "Start a new session with an empty conversation (the current one stays resumable)"},
	{Name: "context", Description: "Show how much of the context window the conversation uses"},
	{Name: "cost", Description: "Show the tokens and cost of this session so far"},
	{Name: "model", Description: "Show the model, or continue with another", ArgumentHint: "[name]"},
	{Name: "permissions", Description: "Show the permission mode and the rules of the settings files"},
	{Name: "agents", Description: "List the agent types the Agent tool can start"},
	{Name: "mcp", Description: "List the MCP servers and their state"},
	{Name: "memory", Description: "List the memory files (AGENTS.md, CLAUDE.md, GANTRY.md) in the system prompt"},
	{Name: "init", Description: "Write a CLAUDE.md that documents this codebase for later sessions", Body: initPrompt, DisableModelInvocation: true},
	{Name: "review", Description: "Review a pull request (or the current branch's changes)", ArgumentHint: "[pr-number]", Body: reviewPrompt, DisableModelInvocation: true},
}

// initPrompt is /init's prompt.
const initPrompt = `Please analyse this codebase and create a CLAUDE.md file in the repository's root, which will be given to future sessions working in this repository.

What to add:
1. The commands that are commonly used: how to build, lint and run the tests, including how to run a single test.
2. The high-level architecture and structure of the code, the "big picture" that takes reading several files to understand.

Usage notes:
- If there is already a CLAUDE.md, suggest improvements to it instead of replacing it.
- Do not repeat yourself, and do not list every component or file structure that can be easily discovered.
- Do not include generic development practices or made-up information; only what you found in this repository (README.md, CONTRIBUTING.md, build files, existing AGENTS.md or editor rules are good sources).
- Begin the file with:

# CLAUDE.md

This file provides guidance to coding agents when working with code in this repository.`

// reviewPrompt is /review's prompt.
const reviewPrompt = `You are an expert code reviewer. Review the pull request $ARGUMENTS:

1. If no PR number is given, list the open PRs with ` + "`gh pr list`" + ` and review the changes of the current branch against its base (` + "`git diff`" + ` against the merge base) instead.
2. If a PR number is given, get its details with ` + "`gh pr view`" + ` and its diff with ` + "`gh pr diff`" + `.
3. Analyse the changes and give a thorough review: an overview of what the change does, its code quality and style, specific suggestions for improvement, and potential issues or risks (correctness, security, performance, tests).

Keep the review concise but thorough, in sections with clear headings.`

// Builtins returns the built-in commands (fresh copies).
func Builtins() []*Command {
	out := make([]*Command, len(builtins))
	for i := range builtins {
		c := builtins[i]
		c.Source = SourceBuiltin
		out[i] = &c
	}
	return out
}

// frontMatter is a command file's YAML header.
type frontMatter struct {
	Description            string            `yaml:"description"`
	ArgumentHint           yaml.Node         `yaml:"argument-hint"`
	AllowedTools           frontmatter.Names `yaml:"allowed-tools"`
	Model                  string            `yaml:"model"`
	DisableModelInvocation bool              `yaml:"disable-model-invocation"`
}

// validNameRE: a command name as the file name gives it.
var validNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) })

// ParseFile reads a command file's content; name is the command's name
// (the file's name without .md). A file without front matter is all body.
func ParseFile(data []byte, name string) (*Command, error) {
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("over %d KiB", maxFileBytes>>10)
	}
	if !validNameRE().MatchString(name) || len(name) > 64 {
		return nil, fmt.Errorf("invalid command name %q (letters, digits, - _ ., at most 64)", name)
	}
	c := &Command{Name: name}
	header, body, err := frontmatter.Split(data)
	switch {
	case errors.Is(err, frontmatter.ErrMissing):
		body = strings.ReplaceAll(strings.TrimPrefix(string(data), "\xef\xbb\xbf"), "\r\n", "\n")
	case err != nil:
		return nil, err
	default:
		var fm frontMatter
		if err := yaml.Unmarshal([]byte(header), &fm); err != nil {
			// The reference's own examples write argument-hint: [a] [b],
			// which is not YAML: read such a line as the text it is.
			fm = frontMatter{}
			if err2 := yaml.Unmarshal([]byte(quoteHint(header)), &fm); err2 != nil {
				return nil, fmt.Errorf("front matter: %w", err)
			}
		}
		if fm.ArgumentHint.Kind != 0 {
			// argument-hint: [name] [greeting] is a YAML list; the
			// reference shows the text as written.
			c.ArgumentHint = hintText(&fm.ArgumentHint)
		}
		c.AllowedTools = fm.AllowedTools
		c.Description, c.Model = strings.TrimSpace(fm.Description), strings.TrimSpace(fm.Model)
		c.DisableModelInvocation = fm.DisableModelInvocation
	}
	c.Body = strings.TrimSpace(body)
	if c.Description == "" {
		c.Description = firstLine(c.Body)
	}
	return c, nil
}

// quoteHint rewrites a top-level argument-hint line's value as a quoted
// YAML string.
func quoteHint(header string) string {
	lines := strings.Split(header, "\n")
	for i, l := range lines {
		if v, ok := strings.CutPrefix(l, "argument-hint:"); ok {
			b, _ := json.Marshal(strings.TrimSpace(v)) // a JSON string is a YAML string
			lines[i] = "argument-hint: " + string(b)
		}
	}
	return strings.Join(lines, "\n")
}

// hintText is an argument-hint as written: a flow list [a] [b] is YAML
// for nested lists, so it is given back in brackets.
func hintText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return strings.TrimSpace(n.Value)
	case yaml.SequenceNode:
		var parts []string
		for _, c := range n.Content {
			parts = append(parts, "["+strings.TrimSuffix(strings.TrimPrefix(hintText(c), "["), "]")+"]")
		}
		if len(parts) == 1 {
			return parts[0]
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// firstLine is the body's first non-empty line without Markdown heading
// marks, at most 100 characters.
func firstLine(body string) string {
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(line, "# "))
		if line == "" {
			continue
		}
		if r := []rune(line); len(r) > 100 {
			line = string(r[:99]) + "…"
		}
		return line
	}
	return ""
}

// LoadOptions say where [Load] looks.
type LoadOptions struct {
	// ProjectDir is a trusted project's folder ("" = no project commands;
	// give it only for a trusted folder).
	ProjectDir string
	// UserHome is the user's home ("" = no ~/.claude/commands);
	// GantryHome is Gantry's ("" = no <Gantry home>/commands).
	UserHome, GantryHome string
	// Plugins are plugins whose commands/ are read, each command named
	// "plugin:command" (see package plugins).
	Plugins []*plugins.Plugin
}

// Load reads the custom commands LoadOptions name, sorted by name, and
// the problems of files it could not use (those are skipped).
func Load(opts LoadOptions) ([]*Command, []error) {
	byName := map[string]*Command{}
	var problems []error
	add := func(dir, source string) {
		cmds, errs := loadDir(dir, source)
		problems = append(problems, errs...)
		for _, c := range cmds {
			byName[c.Name] = c
		}
	}
	if opts.UserHome != "" {
		add(filepath.Join(opts.UserHome, ".claude", "commands"), SourceUser)
	}
	if opts.GantryHome != "" {
		add(filepath.Join(opts.GantryHome, "commands"), SourceUser)
	}
	if opts.ProjectDir != "" {
		add(filepath.Join(opts.ProjectDir, ".claude", "commands"), SourceProject)
		add(filepath.Join(opts.ProjectDir, ".gantry", "commands"), SourceProject)
	}
	for _, p := range opts.Plugins {
		cmds, errs := loadDir(p.CommandsDir(), SourcePlugin)
		problems = append(problems, errs...)
		for _, c := range cmds {
			c.Name = p.Name + ":" + c.Name
			byName[c.Name] = c
		}
	}
	out := make([]*Command, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Command) int { return strings.Compare(a.Name, b.Name) })
	return out, problems
}

// maxDepth bounds the subfolders walked under a commands folder.
const maxDepth = 4

// loadDir reads the command files under dir (a missing dir is none).
// Top-level files keep their name; a namespaced file gets its base name
// unless a command of dir already has it, then namespace:name.
func loadDir(dir, source string) ([]*Command, []error) {
	var cmds []*Command
	var problems []error
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			problems = append(problems, err)
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), ".") || strings.Count(rel, string(filepath.Separator)) >= maxDepth) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		fi, err := os.Stat(p) // follows a symlinked file
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		if fi.Size() > maxFileBytes {
			problems = append(problems, fmt.Errorf("%s: over %d KiB", p, maxFileBytes>>10))
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			problems = append(problems, err)
			return nil
		}
		c, err := ParseFile(b, strings.TrimSuffix(d.Name(), ".md"))
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", p, err))
			return nil
		}
		if ns := filepath.Dir(rel); ns != "." {
			c.Namespace = strings.ReplaceAll(filepath.ToSlash(ns), "/", ":")
		}
		c.Path, c.Source = p, source
		cmds = append(cmds, c)
		return nil
	})
	if err != nil {
		problems = append(problems, err)
	}
	// Top-level names first; then each namespaced command takes its base
	// name if it is free, else namespace:name.
	nested := func(c *Command) int {
		if c.Namespace == "" {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(cmds, func(a, b *Command) int { return nested(a) - nested(b) })
	taken := map[string]bool{}
	for _, c := range cmds {
		if c.Namespace != "" && taken[c.Name] {
			c.Name = c.Namespace + ":" + c.Name
		}
		taken[c.Name] = true
	}
	return cmds, problems
}

// Registry is the set of commands of a session. Its methods may be called
// from several goroutines; it does not change after NewRegistry.
type Registry struct {
	list   []*Command
	byName map[string]*Command
}

// NewRegistry returns a registry of the built-in commands and cmds (a
// custom command does not replace a built-in one of the same name).
func NewRegistry(cmds ...*Command) *Registry {
	r := &Registry{byName: map[string]*Command{}}
	for _, c := range slices.Concat(Builtins(), cmds) {
		if _, dup := r.byName[c.Name]; dup {
			continue
		}
		r.byName[c.Name] = c
		r.list = append(r.list, c)
		if c.Namespace != "" && !strings.HasPrefix(c.Name, c.Namespace+":") {
			full := c.Namespace + ":" + c.Name
			if _, dup := r.byName[full]; !dup {
				r.byName[full] = c
			}
		}
	}
	return r
}

// List returns the commands, built-in ones first.
func (r *Registry) List() []*Command {
	if r == nil {
		return Builtins()
	}
	return slices.Clone(r.list)
}

// Lookup returns the command called name (also namespace:name), or nil.
func (r *Registry) Lookup(name string) *Command {
	if r == nil {
		for _, c := range Builtins() {
			if c.Name == name {
				return c
			}
		}
		return nil
	}
	return r.byName[name]
}

// Find returns the command a prompt invokes and its arguments: a prompt
// "/greet Ada" gives the command greet and "Ada". A prompt that is not a
// slash command, or names none of r's, gives nil: it goes to the model as
// it is.
func (r *Registry) Find(prompt string) (*Command, string) {
	name, args, ok := Split(prompt)
	if !ok {
		return nil, ""
	}
	c := r.Lookup(name)
	if c == nil {
		return nil, ""
	}
	return c, args
}

// Split splits a prompt that is a slash command into its name and
// arguments: "/compact keep the names" → "compact", "keep the names". A
// prompt that is not one (no leading slash, a path such as "/etc/hosts
// is …", an empty name) gives ok false.
func Split(prompt string) (name, args string, ok bool) {
	p := strings.TrimSpace(prompt)
	rest, found := strings.CutPrefix(p, "/")
	if !found {
		return "", "", false
	}
	name, args, _ = strings.Cut(rest, " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], rest[i+1:]
	}
	if name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
}

// placeholderRE matches $ARGUMENTS and $1, $2 ….
var placeholderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$(ARGUMENTS|[1-9][0-9]*)`) })

// Expand returns the prompt a custom command gives the model for args.
func (c *Command) Expand(args string) string {
	re := placeholderRE()
	if !re.MatchString(c.Body) {
		if args == "" {
			return c.Body
		}
		return c.Body + "\n\nARGUMENTS: " + args
	}
	var words []string
	split := false
	return re.ReplaceAllStringFunc(c.Body, func(m string) string {
		if m == "$ARGUMENTS" {
			return args
		}
		if !split {
			words, split = Words(args), true
		}
		var i int
		fmt.Sscanf(m[1:], "%d", &i)
		if i <= len(words) {
			return words[i-1]
		}
		return ""
	})
}

// Words splits arguments like shell words: spaces separate, "…" and '…'
// keep spaces together (the quotes are dropped), a backslash escapes the
// next character outside single quotes.
func Words(s string) []string {
	var out []string
	var cur strings.Builder
	in := false // inside a word
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped, in = false, true
		case r == '\\' && quote != '\'':
			escaped, in = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Target is what [Apply] changes: *agent.Agent.
type Target interface {
	Model() string
	SetModel(model string)
	Pool() *toolset.Pool
}

// Apply sets a custom command's model and allowed-tools for t's next turn;
// the returned function (call it once the turn ended) puts back the model
// and drops the narrowing.
func Apply(t Target, c *Command) (undo func()) {
	var undos []func()
	if len(c.AllowedTools) > 0 && t.Pool() != nil {
		undos = append(undos, t.Pool().Push(c.AllowedTools...))
	}
	if c.Model != "" {
		prev := t.Model()
		t.SetModel(c.Model)
		undos = append(undos, func() { t.SetModel(prev) })
	}
	return func() {
		for _, u := range slices.Backward(undos) {
			u()
		}
	}
}
