package search

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/grep"

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
	if err := opts.Check(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
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

func runGlob(ctx context.Context, env *tool.Env, o Options, in GlobInput) (*tool.Result, error) {
	start := time.Now()
	root, err := resolvePath(env, in.Path)
	if err != nil {
		return nil, err
	}
	matches, err := grep.Glob(ctx, root, in.Pattern, o)
	if err != nil {
		return nil, err
	}
	if denied := tool.ReadFilterOf(env); denied != nil {
		// Read deny rules bind Glob too: their files are not listed.
		matches = slices.DeleteFunc(matches, func(m grep.GlobMatch) bool { return denied(m.Path) })
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
