package search

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gantry-dev/gantry/tool"
)

// GlobInput is the input of the Glob tool.
type GlobInput struct {
	Pattern string `json:"pattern" jsonschema:"The glob pattern to match file paths against, relative to path: ** matches any number of directories, {a,b} alternatives, e.g. **/*.go or src/**/*.{ts,tsx}"`
	Path    string `json:"path,omitempty" jsonschema:"The directory to search in. Defaults to the working directory; omit it rather than passing null"`
}

const globDescription = `Fast file pattern matching for any codebase size.
- Supports glob patterns like "**/*.js" or "src/**/*.ts" (** matches any number of directories, {a,b} alternatives, [abc] classes).
- Returns absolute file paths, most recently modified first (at most 100).
- Files ignored by .gitignore and the .git directory are skipped; hidden files are included.
- Use this tool to find files by name. To search file contents, use Grep.`

// NewGlob returns the Glob tool.
func NewGlob(opts Options) (*tool.FuncTool, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	return tool.New("Glob", globDescription,
		func(ctx context.Context, env *tool.Env, in GlobInput) (*tool.Result, error) {
			return runGlob(ctx, env, o, in)
		},
		tool.ReadOnly(),
		tool.AccessFunc(globAccess),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in GlobInput) error {
			if in.Pattern == "" {
				return fmt.Errorf("pattern is empty")
			}
			if !doublestar.ValidatePattern(filepath.ToSlash(in.Pattern)) {
				return fmt.Errorf("invalid glob pattern %q", in.Pattern)
			}
			return nil
		}),
		tool.DescribeFunc(func(in GlobInput) string {
			if in.Path != "" {
				return fmt.Sprintf("Glob %s in %s", in.Pattern, in.Path)
			}
			return "Glob " + in.Pattern
		}),
		tool.WithDefer(tool.Deferral{SearchHint: "find files by name or glob pattern"}),
	)
}

// GlobMatch is one file found by [Glob].
type GlobMatch struct {
	Path    string // absolute
	ModTime time.Time
}

// Glob returns the files under root (absolute) whose path relative to root
// matches pattern (doublestar syntax), honouring .gitignore and skipping
// .git, newest first (ties by path). An absolute pattern, or one starting
// with a directory without metacharacters, narrows root first.
func Glob(ctx context.Context, root, pattern string, opts Options) ([]GlobMatch, error) {
	opts = opts.withDefaults()
	pattern = filepath.ToSlash(pattern)
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("invalid glob pattern %q", pattern)
	}
	if strings.HasPrefix(pattern, "/") {
		root = "/"
		pattern = pattern[1:]
	}
	base, rest := doublestar.SplitPattern(pattern)
	if base != "." && base != "" {
		root = filepath.Join(root, filepath.FromSlash(base))
		pattern = rest
	}
	fi, err := statPath(root)
	if err != nil {
		if base != "." && base != "" {
			return nil, nil // the pattern's fixed directory does not exist: no match
		}
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("path %s is not a directory", root)
	}
	cfg := &walkConfig{root: root, workers: opts.Workers, maxDepth: globDepth(pattern)}
	literal := !hasGlobMeta(pattern)
	var (
		mu      sync.Mutex
		matches []GlobMatch
	)
	err = walk(ctx, cfg, func(_ *worker, f fileEntry) {
		rel := f.rel()
		if literal {
			if rel != pattern {
				return
			}
		} else if !doublestar.MatchUnvalidated(pattern, rel) {
			return
		}
		info, err := f.info()
		if err != nil {
			return
		}
		mu.Lock()
		matches = append(matches, GlobMatch{Path: f.path(), ModTime: info.ModTime()})
		mu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	sortNewest(matches, func(m GlobMatch) (time.Time, string) { return m.ModTime, m.Path })
	return matches, nil
}

// globDepth returns how many directory levels a pattern can reach (0 when
// unbounded, because of "**" or a "/" inside braces).
func globDepth(pattern string) int {
	if strings.Contains(pattern, "**") || strings.ContainsAny(pattern, "{\\") {
		return 0
	}
	return strings.Count(pattern, "/") + 1
}

// sortNewest sorts by modification time, newest first, then by path.
func sortNewest[T any](s []T, key func(T) (time.Time, string)) {
	slices.SortFunc(s, func(a, b T) int {
		ta, pa := key(a)
		tb, pb := key(b)
		if c := tb.Compare(ta); c != 0 {
			return c
		}
		return cmp.Compare(pa, pb)
	})
}

func runGlob(ctx context.Context, env *tool.Env, o Options, in GlobInput) (*tool.Result, error) {
	start := time.Now()
	root, err := resolvePath(env, in.Path)
	if err != nil {
		return nil, err
	}
	matches, err := Glob(ctx, root, in.Pattern, o)
	if err != nil {
		return nil, err
	}
	if denied := tool.ReadFilterOf(env); denied != nil {
		// Read deny rules bind Glob too: their files are not listed.
		matches = slices.DeleteFunc(matches, func(m GlobMatch) bool { return denied(m.Path) })
	}
	n := min(len(matches), o.GlobLimit)
	out := GlobOutput{NumFiles: n, Filenames: make([]string, 0, n), Truncated: len(matches) > n, TotalMatches: len(matches), CountIsComplete: true}
	var b strings.Builder
	for _, m := range matches[:n] {
		b.WriteString(m.Path)
		b.WriteByte('\n')
		out.Filenames = append(out.Filenames, m.Path)
	}
	if len(matches) > n {
		fmt.Fprintf(&b, "(Results are truncated: showing the %d most recently modified of %d files. Use a more specific path or pattern.)\n", n, len(matches))
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if len(matches) == 0 {
		text = "No files found"
	}
	out.DurationMs = time.Since(start).Milliseconds()
	r := tool.TextResult(text)
	r.Structured = out
	return r, nil
}

// GlobOutput is the structured result of a Glob call
// ([tool.Result.Structured]); its JSON is the Agent SDK's GlobOutput.
type GlobOutput struct {
	DurationMs int64 `json:"durationMs"`
	// NumFiles is len(Filenames); TotalMatches counts the matches before
	// the limit cut them (Truncated).
	NumFiles        int      `json:"numFiles"`
	Filenames       []string `json:"filenames"`
	Truncated       bool     `json:"truncated"`
	TotalMatches    int      `json:"totalMatches"`
	CountIsComplete bool     `json:"countIsComplete"`
}

// globAccess: Glob reads its directory, and a pattern that reaches out of
// it (absolute, ~, or with a .. element) reads its literal directory
// prefix too.
func globAccess(in GlobInput) (tool.Access, error) {
	dir := orDot(in.Path)
	a := tool.Access{Reads: []string{dir}}
	if base, reaches := globBase(in.Pattern); reaches {
		if !filepath.IsAbs(base) && !strings.HasPrefix(base, "~") {
			base = filepath.Join(dir, base)
		}
		a.Reads = append(a.Reads, base)
	}
	return a, nil
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// globBase returns the literal directory prefix of a glob pattern and
// whether the pattern can reach outside the directory it is applied to
// (absolute, ~, or with a .. element).
func globBase(pat string) (string, bool) {
	reaches := filepath.IsAbs(pat) || strings.HasPrefix(pat, "~") || slices.Contains(strings.Split(filepath.ToSlash(pat), "/"), "..")
	if !reaches {
		return "", false
	}
	if i := strings.IndexAny(pat, "*?[{"); i >= 0 {
		pat = pat[:i]
		if j := strings.LastIndexByte(pat, '/'); j >= 0 {
			pat = pat[:j+1]
		} else {
			pat = "."
		}
	}
	if pat == "" {
		pat = "/"
	}
	return pat, true
}
