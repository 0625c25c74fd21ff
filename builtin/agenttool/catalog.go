package agenttool

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/subagent"
)

// Names of the built-in agent types.
const (
	GeneralPurpose = subagent.GeneralPurpose
	Explore        = "Explore"
	Plan           = "Plan"
)

// ModelFast as a Definition.Model names the runner's fast model; see
// [subagent.ModelFast].
const ModelFast = subagent.ModelFast

// readOnlyTools are the tools of the read-only built-in types; their mode
// is plan, so a Bash command that would write is denied too.
var readOnlyTools = []string{"Read", "Glob", "Grep", "Bash", "WebFetch", "WebSearch", "TaskOutput", "ListMcpResources", "ReadMcpResource", "LSP"}

// Builtins returns the built-in agent types: general-purpose (every tool of
// the parent but Agent), Explore (read-only, for searching a codebase, on
// the fast model) and Plan (read-only, returns an implementation plan).
func Builtins() []Definition {
	return []Definition{
		{
			Name:        GeneralPurpose,
			Description: "General-purpose agent for researching complex questions, searching for code and carrying out multi-step tasks. Use it when a search may take several rounds of looking, or to hand off a self-contained piece of work.",
			Prompt: `You are a subagent: another agent handed you one task. Do it fully with the tools you have, then reply with a complete, self-contained report: what you found or changed (with absolute file paths and the key details), and anything left undone and why. Your reply is all the other agent sees of your work — it cannot see your tool calls.

Search broadly when you do not know where something is; read files before changing them; prefer editing existing files to creating new ones; do not create documentation files unless asked.`,
			Source: "built-in",
		},
		{
			Name:           Explore,
			Description:    "Fast read-only agent for exploring a codebase: find files by pattern, search code for keywords, answer questions about how the code works. Say how thorough to be: \"quick\", \"medium\" or \"very thorough\". It cannot change files.",
			Tools:          readOnlyTools,
			Model:          ModelFast,
			PermissionMode: "plan",
			Prompt: `You are a read-only search specialist: another agent asked you to explore a codebase. You cannot create, change or delete files, and shell commands that would change anything are refused — use Glob, Grep and Read, and Bash only for read-only commands (ls, git status, git log, git diff, find, cat, head).

Search efficiently: start broad, narrow down, run independent searches in parallel. Reply with a concise report of what you found, with absolute file paths (and line numbers where useful) — your reply is all the other agent sees.`,
			Source: "built-in",
		},
		{
			Name:           Plan,
			Description:    "Software architect agent for designing an implementation plan: it explores the code read-only and returns a step-by-step plan, the files to change and the trade-offs.",
			Tools:          readOnlyTools,
			PermissionMode: "plan",
			Prompt: `You are a software architect: another agent asked you for an implementation plan. Explore the code read-only (you cannot change files; shell commands that would change anything are refused), understand the existing patterns and constraints, then reply with:

1. a short summary of the approach and why;
2. numbered implementation steps, each naming the files (absolute paths) and functions to change;
3. risks, open questions and how to test the change.

Your reply is all the other agent sees.`,
			Source: "built-in",
		},
	}
}

// Catalog is the set of agent types of a session, in a stable order (the
// built-in types first, in their fixed order, then the others by name), so
// the Agent tool's description — and the prompt cache — do not change from
// request to request. It is safe for concurrent use.
type Catalog struct {
	mu sync.RWMutex
	// defs holds the definitions added, not the built-in types: those are
	// looked up in [Builtins] unless a definition of the same name
	// replaces them, so that a session's catalog costs nothing until a
	// type is added (one per session in a many-sessions program).
	defs    map[string]Definition
	version int
}

// NewCatalog returns a catalog of the built-in types plus defs (a
// definition named like a built-in replaces it). It fails on an invalid
// definition.
func NewCatalog(defs ...Definition) (*Catalog, error) {
	c := &Catalog{}
	if err := c.Add(defs...); err != nil {
		return nil, err
	}
	c.version = 0
	return c, nil
}

// Add adds or replaces definitions. An invalid one fails the call and adds
// nothing.
func (c *Catalog) Add(defs ...Definition) error {
	for i := range defs {
		if err := defs[i].Validate(); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range defs {
		if c.defs == nil {
			c.defs = map[string]Definition{}
		}
		c.defs[d.Name] = d
	}
	if len(defs) > 0 {
		c.version++
	}
	return nil
}

// Get returns the type called name.
func (c *Catalog) Get(name string) (Definition, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if d, ok := c.defs[name]; ok {
		return d, true
	}
	for _, d := range Builtins() {
		if d.Name == name {
			return d, true
		}
	}
	return Definition{}, false
}

// List returns every type in the catalog's order.
func (c *Catalog) List() []Definition {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.listLocked()
}

func (c *Catalog) listLocked() []Definition {
	rank := func(n string) int {
		switch n {
		case GeneralPurpose:
			return 0
		case Explore:
			return 1
		case Plan:
			return 2
		}
		return 3
	}
	builtins := Builtins()
	out := make([]Definition, 0, len(builtins)+len(c.defs))
	for _, d := range builtins {
		if _, replaced := c.defs[d.Name]; !replaced {
			out = append(out, d)
		}
	}
	for _, d := range c.defs {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Definition) int {
		if r := rank(a.Name) - rank(b.Name); r != 0 {
			return r
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Names returns the types' names in order.
func (c *Catalog) Names() []string {
	var out []string
	for _, d := range c.List() {
		out = append(out, d.Name)
	}
	return out
}

func (c *Catalog) snapshot() ([]Definition, int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.listLocked(), c.version
}

// describeTypes renders the types for the tool's description.
func describeTypes(defs []Definition) string {
	var b strings.Builder
	for _, d := range defs {
		tools := "all tools"
		if len(d.Tools) > 0 {
			tools = strings.Join(d.Tools, ", ")
		}
		if len(d.DisallowedTools) > 0 {
			tools += " except " + strings.Join(d.DisallowedTools, ", ")
		}
		fmt.Fprintf(&b, "- %s: %s (Tools: %s)\n", d.Name, oneLine(d.Description), tools)
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
