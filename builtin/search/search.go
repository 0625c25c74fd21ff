// Package search provides the built-in search tools: Glob (find files by
// name pattern) and Grep (search file contents with a regular expression).
//
// Both tools are read-only and concurrency-safe. Paths in their input are
// relative to the call's working directory ([tool.Env.WorkDir]); paths in
// their output are absolute.
//
// They are thin tools over the engine in internal/grep. Both honour
// .gitignore files the way ripgrep does (nested files,
// negations, .git/info/exclude, parent directories up to the repository's
// top; a directory holding ".git" starts a new repository) and never enter
// ".git". Symbolic links met during a walk are not followed.
//
// Grep has two engines with identical results: a pure Go engine (a parallel
// walk with a bounded worker pool, literal fast paths, Go's RE2 regexp) and
// ripgrep, used when an `rg` binary is found and [Options.Engine] allows it.
// The pattern is parsed with Go's regexp/syntax in both cases and handed to
// ripgrep translated, so the regular-expression dialect is Go's either way.
// See docs/tools-search.md for the full semantics.
package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/grep"

	"github.com/gantry-dev/gantry/tool"
)

// Engine selects how Grep searches.
type Engine = grep.Engine

// The engines.
const (
	// EngineAuto picks the faster engine for each query: the Go engine
	// when the pattern is a literal or holds literals that every match
	// contains, ripgrep (when an rg binary is found) for other patterns;
	// it falls back to the Go engine when ripgrep is missing or cannot run
	// the query.
	EngineAuto = grep.EngineAuto
	// EngineGo always uses the pure Go engine.
	EngineGo = grep.EngineGo
	// EngineRipgrep always uses ripgrep; a call fails if rg is missing.
	EngineRipgrep = grep.EngineRipgrep
)

// Options configure the search tools (engine, limits); see [grep.Options]
// for each field and its default. The zero value is ready to use.
type Options = grep.Options

// Tools returns Glob and Grep built with opts.
func Tools(opts Options) ([]tool.Tool, error) {
	g, err := NewGlob(opts)
	if err != nil {
		return nil, err
	}
	r, err := NewGrep(opts)
	if err != nil {
		return nil, err
	}
	return []tool.Tool{g, r}, nil
}

// resolveDir returns the absolute, cleaned form of p (relative to the
// working directory; empty means the working directory).
func resolvePath(env *tool.Env, p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	wd := ""
	if env != nil {
		wd = env.WorkDir
	}
	if p == "" {
		p = wd
	} else if !filepath.IsAbs(p) {
		if p == "~" || strings.HasPrefix(p, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("resolve %s: %w", p, err)
			}
			p = filepath.Join(home, p[1:])
		} else {
			if wd == "" {
				return "", fmt.Errorf("relative path %q but no working directory", p)
			}
			p = filepath.Join(wd, p)
		}
	}
	if p == "" {
		return "", errors.New("no path and no working directory")
	}
	return filepath.Clean(p), nil
}
