package permission

import (
	"errors"
	"fmt"
	"github.com/gantry-dev/gantry/internal/protect"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ErrNULPath is reported (in a deny's reason) for a path containing a NUL
// byte.
var ErrNULPath = errors.New("path contains a NUL byte")

// absPath makes p absolute against base, expanding a leading ~ or ~/ with
// home, and cleans it lexically. It fails on a NUL byte or an empty path.
func absPath(p, base, home string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", ErrNULPath
	}
	if p == "" {
		return "", errors.New("empty path")
	}
	switch {
	case p == "~":
		p = home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(home, p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), nil
}

// resolvePath returns the file the kernel would reach for the absolute
// path p: symlinks resolved and ".." applied physically (after a link, ".."
// is the target's parent, not the link's). A missing part is appended as
// written. It never fails: a loop or an unreadable link stops resolution
// there.
func resolvePath(p string) string {
	r, _ := (&resolver{}).resolve(p)
	return r
}

// resolver resolves paths with a memo of the prefixes it has seen, so the
// paths of one decision (which share directories) cost one lstat per new
// component.
type resolver struct {
	memo map[string]string // physical prefix + "/" + name → resolved
	// seeds are directories resolved before (the working directories,
	// cached by the Engine): a path below one is walked from its
	// resolved form.
	seeds [][2]string
}

const maxLinks = 40

// missing marks a memoised path that does not exist (NUL cannot occur in a
// path).
const missing = "\x00missing"

// resolve returns the resolved path; ok is false when a link could not be
// followed (a loop, more than 40 links, an unreadable link).
func (r *resolver) resolve(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return filepath.Clean(p), true
	}
	links := 0
	for _, sd := range r.seeds {
		if rest, ok := strings.CutPrefix(p, sd[0]); ok && (rest == "" || rest[0] == '/') {
			out := r.walk(sd[1], strings.Split(rest, "/"), &links)
			return out, links >= 0
		}
	}
	out := r.walk("/", strings.Split(p, "/"), &links)
	return out, links >= 0
}

func (r *resolver) walk(cur string, parts []string, links *int) string {
	for i, name := range parts {
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		key := next
		if v, ok := r.memo[key]; ok {
			if v == missing {
				return filepath.Clean(filepath.Join(append([]string{next}, parts[i+1:]...)...))
			}
			cur = v
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case err != nil:
			// Missing: the rest cannot hold links yet; apply it lexically.
			r.put(key, missing)
			rest := filepath.Join(append([]string{next}, parts[i+1:]...)...)
			return filepath.Clean(rest)
		case fi.Mode()&os.ModeSymlink != 0:
			*links++
			target, err := os.Readlink(next)
			if err != nil || *links > maxLinks || *links < 0 {
				*links = -1 << 30 // poison: resolution failed
				return filepath.Clean(filepath.Join(append([]string{next}, parts[i+1:]...)...))
			}
			start := cur
			if filepath.IsAbs(target) {
				start = "/"
			}
			resolved := r.walk(start, strings.Split(target, "/"), links)
			if *links >= 0 {
				r.put(key, resolved)
			}
			cur = resolved
		default:
			r.put(key, next)
			cur = next
		}
	}
	return cur
}

func (r *resolver) put(k, v string) {
	if r.memo == nil {
		r.memo = make(map[string]string)
	}
	r.memo[k] = v
}

// pathForms are the two forms of a path a policy checks: as written
// (absolute, clean) and as the kernel resolves it. An allow needs both; a
// deny takes either.
type pathForms struct {
	lexical, resolved string
}

// newPathForms makes p absolute against base (expanding ~ with home) and
// returns both forms. res may be nil.
func newPathForms(p, base, home string, res *resolver) (pathForms, error) {
	a, err := absPath(p, base, home)
	if err != nil {
		return pathForms{}, err
	}
	raw := p
	switch {
	case p == "~":
		raw = home
	case strings.HasPrefix(p, "~/"):
		raw = home + "/" + p[2:]
	case !filepath.IsAbs(p):
		raw = base + "/" + p
	}
	if res == nil {
		res = &resolver{}
	}
	resolved, ok := res.resolve(raw)
	if !ok {
		return pathForms{}, fmt.Errorf("%s: too many levels of symbolic links, or an unreadable link", p)
	}
	return pathForms{lexical: a, resolved: resolved}, nil
}

func (f pathForms) any(pred func(string) bool) bool  { return pred(f.lexical) || pred(f.resolved) }
func (f pathForms) both(pred func(string) bool) bool { return pred(f.lexical) && pred(f.resolved) }

// pathPattern is a gitignore-style path specifier anchored at a root.
type pathPattern struct {
	// prefix is the literal directory part of the pattern (absolute): no
	// path outside it can match.
	prefix  string
	root    string
	pat     gitignore.Pattern
	dirOnly bool // the pattern ends in "/": only directories match
}

// compilePathPattern interprets a Read/Edit specifier:
//
//	//abs/path   absolute (root /)
//	~/x          relative to the home directory
//	/x           relative to ruleRoot (the settings file's project root)
//	./x, x/y     relative to the working directory (anchored)
//	name         a bare name: matches at any depth below the working directory
//
// It returns ok=false for a specifier that is not a path (it then never
// matches).
func compilePathPattern(spec, ruleRoot, workDir, home string) (pathPattern, bool) {
	if strings.IndexByte(spec, 0) >= 0 || spec == "" {
		return pathPattern{}, false
	}
	var root, pat string
	switch {
	case strings.HasPrefix(spec, "//"):
		root, pat = "/", spec[1:]
	case spec == "~":
		root, pat = home, "**"
	case strings.HasPrefix(spec, "~/"):
		root, pat = home, spec[1:]
	case strings.HasPrefix(spec, "/"):
		root, pat = ruleRoot, spec
	case strings.HasPrefix(spec, "./"):
		root, pat = workDir, spec[1:]
	default:
		root, pat = workDir, spec
	}
	if root == "" {
		return pathPattern{}, false
	}
	// Clean "." and ".." segments out of the pattern so that ./a/../b means b;
	// a pattern that climbs above its root is anchored at the climbed-to
	// directory.
	if strings.HasPrefix(pat, "/") {
		trailing := strings.HasSuffix(pat, "/") && len(pat) > 1
		joined := filepath.Join(root, pat)
		root = "/"
		pat = joined
		if trailing {
			pat += "/"
		}
		if pat == "/" {
			pat = "/**"
		}
	}
	return pathPattern{prefix: literalPrefix(root, pat), root: root, pat: gitignore.ParsePattern(pat, nil), dirOnly: strings.HasSuffix(pat, "/")}, true
}

// literalPrefix is the directory below which a gitignore pattern anchored
// at root can match: root for a bare name (it matches at any depth), else
// root joined with the pattern's leading segments that have no wildcard.
func literalPrefix(root, pat string) string {
	if !strings.Contains(strings.TrimSuffix(pat, "/"), "/") {
		return root
	}
	var lit []string
	for seg := range strings.SplitSeq(strings.TrimPrefix(pat, "/"), "/") {
		if seg == "" {
			continue
		}
		if strings.ContainsAny(seg, "*?[\\") {
			break
		}
		lit = append(lit, seg)
	}
	return filepath.Join(append([]string{root}, lit...)...)
}

// overlaps reports whether the directory tree at p (absolute, clean) and
// the pattern's literal prefix overlap: a recursive read of p may reach a
// matching file.
func (pp pathPattern) overlaps(p string) bool {
	return pp.prefix != "" && (within(pp.prefix, p) || within(p, pp.prefix))
}

// match reports whether the absolute clean path p matches.
func (pp pathPattern) match(p string) bool {
	if !within(p, pp.root) || pp.prefix != "" && !within(p, pp.prefix) {
		return false
	}
	rel, err := filepath.Rel(pp.root, p)
	if err != nil || rel == "." {
		return false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	isDir := false
	if pp.dirOnly {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			isDir = true
		}
	}
	return pp.pat.Match(parts, isDir) == gitignore.Exclude
}

// Protected paths: the one list of files and directories no automatic
// approval writes (outside bypass mode). Names are matched without regard
// to case, so a case-insensitive filesystem (.GIT is .git) cannot be used
// to slip past them; on a case-sensitive one this only asks more.
// The names come from internal/protect, the list the sandbox uses too.
var (
	protectedDirNames  = nameSet(protect.Dirs())
	protectedFileNames = nameSet(protect.Files())
)

func nameSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// protectedHomeDirs are directories under the home directory whose contents
// are protected (keys, shell, git and tool configuration, autostart).
var protectedHomeDirs = []string{".ssh", ".gnupg", ".aws", ".config/fish", ".config/git", ".config/autostart",
	".config/systemd", ".config/environment.d", ".config/gantry", ".kube", ".docker", ".local/share/applications"}

// isProtected reports whether writing p (absolute, clean) touches a
// protected path: a protected name at any depth, a protected directory of
// the home directory, or Gantry's own directory (gantryHome, wherever it
// points).
func isProtected(p, home, gantryHome string) bool {
	lp := strings.ToLower(filepath.ToSlash(p))
	parts := strings.Split(lp, "/")
	// A git worktree made for a subagent or EnterWorktree
	// (.gantry/worktrees/<name>/…) is a checkout of its own: the names
	// inside it are checked, not the .gantry directory that holds it.
	for i := len(parts) - 3; i >= 0; i-- {
		if parts[i] == ".gantry" && parts[i+1] == "worktrees" && !strings.HasPrefix(parts[i+2], ".") && i+3 < len(parts) {
			parts = parts[i+3:]
			break
		}
	}
	for _, part := range parts {
		if protectedDirNames[part] {
			return true
		}
	}
	if protectedFileNames[filepath.Base(lp)] {
		return true
	}
	if home != "" {
		lh := strings.ToLower(home)
		for _, d := range protectedHomeDirs {
			if within(lp, filepath.Join(lh, d)) {
				return true
			}
		}
	}
	if gantryHome != "" && (within(p, gantryHome) || within(lp, strings.ToLower(gantryHome))) {
		return true
	}
	return false
}

// criticalRmTarget reports whether removing p (absolute, clean) would be a
// disaster: the root, a top-level system directory, the home directory or a
// parent of it, a working directory or a parent of one.
func criticalRmTarget(p, home string, boundary []string) bool {
	if p == "/" {
		return true
	}
	if filepath.Dir(p) == "/" {
		return true // /etc, /usr, /home, /tmp …: any top-level directory
	}
	if home != "" && within(home, p) {
		return true
	}
	for _, w := range boundary {
		if within(w, p) {
			return true
		}
	}
	return false
}

// within reports whether the clean absolute path p is dir or below it (a
// string comparison: both come cleaned from absPath or the resolver).
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}
