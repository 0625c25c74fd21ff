package grep

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
)

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
	opts = opts.WithDefaults()
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
