// Package search provides the built-in search tools: Glob (find files by
// name pattern) and Grep (search file contents with a regular expression).
//
// Both tools are read-only and concurrency-safe. Paths in their input are
// relative to the call's working directory ([tool.Env.WorkDir]); paths in
// their output are absolute.
//
// Both honour .gitignore files the way ripgrep does (nested files,
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

	"github.com/gantry-dev/gantry/tool"
)

// Engine selects how Grep searches.
type Engine string

const (
	// EngineAuto picks the faster engine for each query: the Go engine
	// when the pattern is a literal or holds literals that every match
	// contains (at least 3 characters each, at most 4 alternatives) —
	// measured as fast as ripgrep there, without starting a process —
	// and ripgrep, when an rg binary is found, for other patterns, where
	// Go's regexp would scan every byte. It falls back to the Go engine
	// when ripgrep is missing or cannot run the query (for example a
	// pattern that exceeds ripgrep's size limits).
	EngineAuto Engine = "auto"
	// EngineGo always uses the pure Go engine.
	EngineGo Engine = "go"
	// EngineRipgrep always uses ripgrep; a call fails if rg is missing.
	EngineRipgrep Engine = "rg"
)

// Options configure the search tools. The zero value is ready to use.
type Options struct {
	// Engine selects Grep's engine. Empty means [EngineAuto].
	Engine Engine
	// RipgrepPath is the rg binary. Empty means "rg" looked up on PATH at
	// each call.
	RipgrepPath string
	// Workers is the number of goroutines of a walk. Zero means
	// GOMAXPROCS, at least 2.
	Workers int
	// MaxFileSize is the size above which Grep skips a file (both engines).
	// Zero means 64 MiB.
	MaxFileSize int64
	// GlobLimit is the number of paths Glob returns at most. Zero means 100.
	GlobLimit int
	// HeadLimit is Grep's default head_limit. Zero means 250.
	HeadLimit int
	// MaxColumns is the length in characters above which a line of Grep's
	// content output is cut. Zero means 500; negative means no cut.
	MaxColumns int
	// MaxOutputBytes bounds the text Grep keeps for one call in content
	// mode when head_limit is 0 (unlimited). Zero means 8 MiB.
	MaxOutputBytes int
}

func (o Options) withDefaults() Options {
	if o.Engine == "" {
		o.Engine = EngineAuto
	}
	if o.Workers <= 0 {
		o.Workers = defaultWorkers()
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = 64 << 20
	}
	if o.GlobLimit <= 0 {
		o.GlobLimit = 100
	}
	if o.HeadLimit <= 0 {
		o.HeadLimit = 250
	}
	if o.MaxColumns == 0 {
		o.MaxColumns = 500
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = 8 << 20
	}
	return o
}

func (o Options) check() error {
	switch o.Engine {
	case "", EngineAuto, EngineGo, EngineRipgrep:
		return nil
	}
	return fmt.Errorf("search: unknown engine %q (want auto, go or rg)", o.Engine)
}

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

// statPath stats an existing path for a tool error message the model can
// act on.
func statPath(path string) (os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("path %s does not exist", path)
		}
		return nil, fmt.Errorf("cannot access %s: %w", path, err)
	}
	return fi, nil
}
