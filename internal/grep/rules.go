package grep

import (
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/ignorefile"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/bmatcuk/doublestar/v4"
)

// verdict is the outcome of matching a path against a set of rules.
type verdict int8

const (
	noMatch   verdict = iota // no rule matched: the next layer decides
	ignored                  // the path is left out
	whitelist                // the path is kept (and is not hidden-filtered)
)

// rule is one Grep glob override (ripgrep's --glob), read with the
// syntax of gitignore lines but matched by doublestar, so that "{a,b}"
// alternation works as in ripgrep (.gitignore files themselves are go-git's:
// see [ignoreSet]):
//
//   - "!" negates, "\!" and "\#" are literal;
//   - a trailing "/" matches directories only;
//   - a pattern without any other "/" matches the base name at any depth,
//     a pattern with one is anchored to the search root (a leading "/"
//     only anchors);
//   - "**" matches any number of directories; a trailing "/**" matches
//     everything inside a directory but not the directory itself;
//   - "*", "?", "[…]" do not match "/"; "{a,b}" is an alternation.
type rule struct {
	glob     string // doublestar pattern, relative to the rule set's directory
	negate   bool
	dirOnly  bool
	baseName bool // glob applies to the base name only
	literal  bool // glob has no metacharacters: compare strings
}

func (r *rule) matches(rel, name string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	subject := rel
	if r.baseName {
		subject = name
	}
	if r.literal {
		return subject == r.glob
	}
	return doublestar.MatchUnvalidated(r.glob, subject)
}

// parseRule parses one gitignore-syntax line. ok is false for blank lines,
// comments and invalid globs.
func parseRule(line string) (r rule, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return rule{}, false
	}
	switch {
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	case line[0] == '!':
		r.negate = true
		line = line[1:]
	}
	anchored := false
	if strings.HasPrefix(line, "/") {
		anchored = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly = true
		line = line[:len(line)-1]
	}
	if line == "" {
		return rule{}, false
	}
	if !anchored && !strings.Contains(line, "/") {
		r.baseName = true
	}
	if strings.HasPrefix(line, "**/") && !strings.Contains(line[3:], "/") {
		// "**/name" is the same as "name": match the base name.
		r.baseName = true
		line = line[3:]
	}
	if strings.HasSuffix(line, "/**") {
		line += "/*"
	}
	if !doublestar.ValidatePattern(line) {
		return rule{}, false
	}
	r.glob = line
	r.literal = !hasGlobMeta(line)
	if r.literal {
		r.glob = unescapeGlob(line)
	}
	return r, true
}

// trimTrailingSpaces removes trailing spaces that are not escaped with a
// backslash, as git does.
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") {
		if strings.HasSuffix(s, `\ `) {
			// Keep the escaped space (without its backslash).
			return s[:len(s)-2] + " "
		}
		s = s[:len(s)-1]
	}
	return s
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, `*?[]{}\`) }

func unescapeGlob(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ruleSet is one list of overrides, relative to a directory. Later rules
// win over earlier ones.
type ruleSet struct {
	dir   string // absolute, cleaned
	rules []rule
}

// ignoreSet is one ignore file (.gitignore, .git/info/exclude): go-git's
// patterns, relative to the file's directory. Later patterns win.
type ignoreSet struct {
	dir  string // absolute, cleaned
	pats []gitignore.Pattern
}

// readIgnoreSet reads the ignore file at file, whose patterns apply below
// dir; nil when it has none.
func readIgnoreSet(dir, file string) *ignoreSet {
	pats := ignorefile.ReadFile(file, nil)
	if len(pats) == 0 {
		return nil
	}
	return &ignoreSet{dir: dir, pats: pats}
}

// match returns ignored for a path a plain pattern matches last, whitelist
// for one a negated ("!") pattern matches last, noMatch otherwise.
func (s *ignoreSet) match(path string, isDir bool) verdict {
	rel, ok := relTo(s.dir, path)
	if !ok {
		return noMatch
	}
	parts := strings.Split(rel, "/")
	for i := len(s.pats) - 1; i >= 0; i-- {
		switch s.pats[i].Match(parts, isDir) {
		case gitignore.Exclude:
			return ignored
		case gitignore.Include:
			return whitelist
		}
	}
	return noMatch
}

// relTo returns path relative to dir (both absolute and cleaned), or false
// if path is not inside dir.
func relTo(dir, path string) (string, bool) {
	if dir == "/" {
		return path[1:], len(path) > 1
	}
	if len(path) <= len(dir) || path[len(dir)] != '/' || path[:len(dir)] != dir {
		return "", false
	}
	return path[len(dir)+1:], true
}

// match returns ignored for a matching plain rule and whitelist for a
// matching negated rule (the last matching rule decides), noMatch otherwise.
func (s *ruleSet) match(path, name string, isDir bool) verdict {
	rel, ok := relTo(s.dir, path)
	if !ok {
		return noMatch
	}
	for i := len(s.rules) - 1; i >= 0; i-- {
		if s.rules[i].matches(rel, name, isDir) {
			if s.rules[i].negate {
				return whitelist
			}
			return ignored
		}
	}
	return noMatch
}

// overrides are Grep's glob filters (ripgrep's --glob): gitignore syntax
// with the meaning inverted, relative to the search root. A plain glob
// whitelists, a "!glob" ignores; when there is at least one plain glob, a
// file matching none is ignored (directories are still entered).
type overrides struct {
	set        *ruleSet
	whitelists int
}

func newOverrides(root string, globs []string) (*overrides, error) {
	o := &overrides{set: &ruleSet{dir: root}}
	for _, g := range globs {
		r, ok := parseRule(g)
		if !ok {
			return nil, &globError{glob: g}
		}
		// Inverted: "!x" ignores, "x" whitelists.
		r.negate = !r.negate
		if r.negate {
			o.whitelists++
		}
		o.set.rules = append(o.set.rules, r)
	}
	if len(o.set.rules) == 0 {
		return nil, nil
	}
	return o, nil
}

type globError struct{ glob string }

func (e *globError) Error() string { return "invalid glob " + quote(e.glob) }

func (o *overrides) match(path, name string, isDir bool) verdict {
	if o == nil {
		return noMatch
	}
	v := o.set.match(path, name, isDir)
	if v == noMatch && o.whitelists > 0 && !isDir {
		return ignored
	}
	return v
}

// fileType is a named list of base-name globs (ripgrep's --type).
type fileType struct {
	name  string
	globs []string
}

// lookupType returns the globs of the named type from ripgrep's default
// table.
func lookupType(name string) ([]string, bool) {
	i := sort.Search(len(fileTypes), func(i int) bool { return fileTypes[i].name >= name })
	if i < len(fileTypes) && fileTypes[i].name == name {
		return fileTypes[i].globs, true
	}
	return nil, false
}

// typeNames returns the names of the known types.
func typeNames() []string {
	names := make([]string, len(fileTypes))
	for i, t := range fileTypes {
		names[i] = t.name
	}
	return names
}

// typeFilter selects files whose base name matches one of its globs.
type typeFilter struct{ globs []string }

func (t *typeFilter) match(name string, isDir bool) verdict {
	if t == nil || isDir {
		return noMatch
	}
	for _, g := range t.globs {
		if doublestar.MatchUnvalidated(g, name) {
			return whitelist
		}
	}
	return ignored
}

// ignoreNode is one directory's ignore rules in the chain from a file up to
// the top of its repository. A directory holding ".git" ends the chain: a
// repository does not inherit the rules of the directories above it.
type ignoreNode struct {
	parent  *ignoreNode
	gi      *ignoreSet // the directory's .gitignore
	exclude *ignoreSet // .git/info/exclude, at a repository's top
}

// match applies the chain the way ripgrep does: the innermost .gitignore
// with a matching rule decides; then .git/info/exclude.
func (n *ignoreNode) match(path, name string, isDir bool) verdict {
	for c := n; c != nil; c = c.parent {
		if c.gi != nil {
			if v := c.gi.match(path, isDir); v != noMatch {
				return v
			}
		}
	}
	for c := n; c != nil; c = c.parent {
		if c.exclude != nil {
			if v := c.exclude.match(path, isDir); v != noMatch {
				return v
			}
		}
	}
	return noMatch
}

// filter is the full decision for one walked entry, in ripgrep's order:
// overrides, then ignore files, then types, then hidden-ness (a whitelist
// from an earlier layer keeps a hidden file).
type filter struct {
	overrides  *overrides
	types      *typeFilter
	skipHidden bool
}

// skip decides for the entry name of the directory dir (absolute).
func (f *filter) skip(ign *ignoreNode, dir, name string, isDir bool) bool {
	if name == ".git" {
		return true
	}
	var path string
	if f.overrides != nil || ign != nil {
		path = joinPath(dir, name)
	}
	if v := f.overrides.match(path, name, isDir); v != noMatch {
		return v == ignored
	}
	kept := false
	if ign != nil {
		switch ign.match(path, name, isDir) {
		case ignored:
			return true
		case whitelist:
			kept = true
		}
	}
	switch f.types.match(name, isDir) {
	case ignored:
		return true
	case whitelist:
		kept = true
	}
	return !kept && f.skipHidden && name[0] == '.'
}
