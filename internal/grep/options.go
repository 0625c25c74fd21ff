// Package grep is the engine of the Grep and Glob tools (builtin/search):
// a parallel walk that honours .gitignore files the way ripgrep does
// (go-git matches their patterns), file-type and glob filters, and two
// search engines with identical results — a pure Go one (literal fast
// paths, Go's RE2 regexp) and ripgrep, used when an rg binary is found and
// [Options.Engine] allows it. The pattern is parsed with Go's
// regexp/syntax in both cases and handed to ripgrep translated. It knows
// nothing of tools: builtin/search turns tool input into a [Query].
package grep

import (
	"errors"
	"fmt"
	"os"
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

// Options configure the search tools and their engine. The zero value is
// ready to use.
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

// WithDefaults returns o with its zero fields set to their defaults.
func (o Options) WithDefaults() Options {
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

// Check reports an unknown Engine.
func (o Options) Check() error {
	switch o.Engine {
	case "", EngineAuto, EngineGo, EngineRipgrep:
		return nil
	}
	return fmt.Errorf("search: unknown engine %q (want auto, go or rg)", o.Engine)
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
