package toolset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/tool"
)

// Factory builds a tool for one session. The pool calls it at most once, the
// first time the tool is needed, with the session's environment (env is
// never nil). A returned error leaves the tool out of that pool and is
// reported by [Pool.Err]. A factory must not call back into the pool that
// builds it.
type Factory func(ctx context.Context, env *tool.Env) (tool.Tool, error)

// Tier ranks built-in tools by how often a session needs them. The pool
// includes the tiers up to [Options.MaxTier].
type Tier int

const (
	// TierCore tools are in every session (Read, Edit, Bash, …).
	TierCore Tier = iota + 1
	// TierAdvanced tools are in default sessions but not in minimal ones.
	TierAdvanced
	// TierSpecialist tools are for particular setups (worktrees, teams, LSP).
	TierSpecialist
)

func (t Tier) String() string {
	switch t {
	case TierCore:
		return "core"
	case TierAdvanced:
		return "advanced"
	case TierSpecialist:
		return "specialist"
	}
	return fmt.Sprintf("Tier(%d)", int(t))
}

// Entry is one registered built-in tool.
type Entry struct {
	// Name is the tool's name; the built tool's spec must have this name.
	// Required; it must satisfy [tool.ValidName].
	Name string
	// Aliases are the older names of the tool. Name resolution happens
	// before a tool is built, so the aliases are declared here; the built
	// tool's [tool.Spec.Aliases] must be among them.
	Aliases []string
	// Tier is the tool's tier. Zero means [TierCore].
	Tier Tier
	// Gate, if not empty, is the feature flag that must be on
	// ([Options.Features]) for the tool to be available.
	Gate string
	// Factory builds the tool. Required.
	Factory Factory

	built tool.Tool // the tool of RegisterTool, which Factory returns
}

// ErrDuplicate is wrapped by the errors about names registered twice (a name
// or alias of one tool equal to a name or alias of another).
var ErrDuplicate = errors.New("duplicate tool name")

// Registry is a set of named tool factories: the built-in tools. Its zero
// value is empty and ready to use; it is safe for concurrent use. A registry
// is only read by the pools assembled from it, so one registry may serve
// many sessions.
//
// A registry also keeps the immutable core of the pools assembled from it
// (see [NewPool]), one per distinct set of pool options, at most 32; a
// Register drops them.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]Entry  // by name
	names   map[string]string // name or alias → name
	version uint64            // bumped by Register
	cores   map[string]*poolCore
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds an entry. It is an error (wrapping [ErrDuplicate] for
// clashes) if the name or an alias is invalid, already taken by another
// entry's name or alias, or the factory is nil.
func (r *Registry) Register(e Entry) error {
	if e.Factory == nil {
		return fmt.Errorf("toolset: register %q: nil factory", e.Name)
	}
	if e.Tier == 0 {
		e.Tier = TierCore
	}
	if e.Tier < TierCore || e.Tier > TierSpecialist {
		return fmt.Errorf("toolset: register %q: unknown tier %d", e.Name, int(e.Tier))
	}
	e.Aliases = slices.Clone(e.Aliases)
	names := append([]string{e.Name}, e.Aliases...)
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !tool.ValidName(n) {
			return fmt.Errorf("toolset: register %q: invalid name %q (want 1-64 of [a-zA-Z0-9_-])", e.Name, n)
		}
		if seen[n] {
			return fmt.Errorf("toolset: register %q: %w: %q listed twice", e.Name, ErrDuplicate, n)
		}
		seen[n] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		if owner, ok := r.names[n]; ok {
			return fmt.Errorf("toolset: register %q: %w: %q is already a name of %q", e.Name, ErrDuplicate, n, owner)
		}
	}
	if r.entries == nil {
		r.entries = make(map[string]Entry)
		r.names = make(map[string]string)
	}
	r.entries[e.Name] = e
	for _, n := range names {
		r.names[n] = e.Name
	}
	r.version++
	r.cores = nil
	return nil
}

// RegisterTool registers an already-built tool under its spec's name and
// aliases, with the given tier and gate ("" for none). Every pool shares the
// same tool value, so t must be safe for concurrent use. Unless t
// describes the session ([tool.DescribesSession]), the pools assembled
// with the same options also share its checked and rendered spec: it is
// frozen once, not per session.
func (r *Registry) RegisterTool(t tool.Tool, tier Tier, gate string) error {
	if t == nil {
		return errors.New("toolset: register nil tool")
	}
	spec := t.Spec()
	return r.Register(Entry{
		Name:    spec.Name,
		Aliases: spec.Aliases,
		Tier:    tier,
		Gate:    gate,
		Factory: func(context.Context, *tool.Env) (tool.Tool, error) { return t, nil },
		built:   t,
	})
}

// MustRegister is [Registry.Register] that panics on error, for registries
// built in init-like code.
func (r *Registry) MustRegister(e Entry) {
	if err := r.Register(e); err != nil {
		panic(err)
	}
}

// Entries returns the registered entries sorted by name.
func (r *Registry) Entries() []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Entry, 0, len(r.entries))
	for _, e := range r.entries {
		e.Aliases = slices.Clone(e.Aliases)
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Len returns the number of entries.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.entries)
}

// Lookup returns the entry a name or alias belongs to.
func (r *Registry) Lookup(name string) (Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n, ok := r.names[name]
	if !ok {
		return Entry{}, false
	}
	e := r.entries[n]
	e.Aliases = slices.Clone(e.Aliases)
	return e, true
}
