package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/protect"
)

// ProtectedNames are the names, in every writable directory of a command
// (the project, granted directories), that a sandboxed command may not
// create, change, replace, move or link, whether they exist yet or not:
// what they contain runs code or grants permissions later, outside the
// sandbox — version control (git runs hooks, fsmonitor, filters and aliases
// from its configuration), Gantry's, Claude Code's and MCP configuration,
// editor task files, direnv, and shell and tool rc files.
//
// The names come from internal/protect, the one list the permission layer
// (permission/paths.go) uses too; it matches them at any depth and
// case-insensitively, plus protected directories of the home directory;
// the sandbox protects the names at the top of each writable directory
// (and inside every git directory, [gitAdminNames]), because new nested
// repositories (git clone, git init sub) are ordinary work.
var ProtectedNames = protect.Names() // internal/protect: the one list, shared with the permission analysis

// gitAdminNames are the entries of a git directory (a repository's .git,
// each .git/worktrees/NAME and .git/modules/NAME) that git executes or
// reads as configuration or redirection: the rest (objects, refs, index,
// HEAD, logs, lock files) stays writable so that git works inside the
// sandbox.
var gitAdminNames = []string{"config", "config.worktree", "commondir", "gitdir", "hooks", "info"}

// protPath is one protected path of a writable directory.
type protPath struct {
	path string
	// gitDir: an existing git directory. Only its identity is guarded (it
	// may not be moved, removed or replaced); what git writes in it is
	// not, but its gitAdminNames are protected paths of their own.
	gitDir bool
}

// maxModuleDepth bounds the search for submodule git directories under
// .git/modules (a module's name may hold slashes, and modules nest).
const maxModuleDepth = 4

// protectedIn returns the protected paths of the writable directory root:
// each of [ProtectedNames], and for an existing .git directory its
// gitAdminNames, those of each linked worktree's and submodule's git
// directory, and the .git of each submodule checkout .gitmodules names.
// Paths that do not exist are included (they may not be created).
func protectedIn(root string) []protPath {
	var out []protPath
	for _, n := range ProtectedNames {
		p := filepath.Join(root, n)
		if n == ".git" {
			out = append(out, gitEntry(p)...)
			continue
		}
		out = append(out, protPath{path: p})
	}
	for _, sub := range submodulePaths(filepath.Join(root, ".gitmodules")) {
		out = append(out, gitEntry(filepath.Join(root, sub, ".git"))...)
	}
	return out
}

// gitEntry protects p, a .git that may be a directory, a file (gitfile)
// or absent.
func gitEntry(p string) []protPath {
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		return append([]protPath{{path: p, gitDir: true}}, gitAdmin(p, 0)...)
	}
	return []protPath{{path: p}}
}

// gitAdmin returns the protected paths inside the git directory g.
func gitAdmin(g string, depth int) []protPath {
	var out []protPath
	for _, n := range gitAdminNames {
		out = append(out, protPath{path: filepath.Join(g, n)})
	}
	if depth == 0 {
		if ents, err := os.ReadDir(filepath.Join(g, "worktrees")); err == nil {
			for _, e := range ents {
				if e.IsDir() {
					w := filepath.Join(g, "worktrees", e.Name())
					out = append(out, protPath{path: w, gitDir: true})
					out = append(out, gitAdmin(w, maxModuleDepth)...)
				}
			}
		}
	}
	var modules func(dir string, d int)
	modules = func(dir string, d int) {
		if d > maxModuleDepth {
			return
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			m := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(filepath.Join(m, "HEAD")); err == nil {
				out = append(out, protPath{path: m, gitDir: true})
				out = append(out, gitAdmin(m, d+1)...)
			} else {
				modules(m, d+1)
			}
		}
	}
	if depth < maxModuleDepth {
		modules(filepath.Join(g, "modules"), depth)
	}
	return out
}

// submodulePaths returns the `path = …` values of a .gitmodules file that
// are clean relative paths inside the checkout.
func submodulePaths(file string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.TrimSpace(k) != "path" {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if v == "" || !filepath.IsLocal(v) || slices.Contains(out, v) {
			continue
		}
		out = append(out, filepath.Clean(v))
	}
	return out
}

// writableDirs are the directories of p.Write (files and missing paths
// left out), deduplicated.
func writableDirs(p *Policy) []string {
	var out []string
	for _, w := range p.Write {
		w = filepath.Clean(w)
		if fi, err := os.Stat(w); err == nil && fi.IsDir() && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// protectedOf returns the protected paths of every writable directory of p.
func protectedOf(p *Policy) []protPath {
	var out []protPath
	for _, w := range writableDirs(p) {
		out = append(out, protectedIn(w)...)
	}
	return out
}

// Protected returns the protected paths under each of dirs: [ProtectedNames]
// and the protected entries of their git directories, existing or not.
func Protected(dirs ...string) []string {
	var out []string
	for _, d := range dirs {
		for _, pp := range protectedIn(filepath.Clean(d)) {
			out = append(out, pp.path)
		}
	}
	return out
}
