package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-dev/gantry/tool"
)

// ToolSearchName is the name of the tool that loads deferred tools. The name
// is reserved: no built-in, user or MCP tool may take it.
const ToolSearchName = "ToolSearch"

// DiscoverToolsName is another name of ToolSearch (the name some agents
// know it by): a call of DiscoverTools is a call of ToolSearch. It is
// reserved too.
const DiscoverToolsName = "DiscoverTools"

// reserved reports whether name is ToolSearch's or its alias.
func reserved(name string) bool { return name == ToolSearchName || name == DiscoverToolsName }

// Options configure [NewPool]. The zero value assembles an empty pool.
type Options struct {
	// Registry holds the built-in tools. Nil means none.
	Registry *Registry
	// Env is the session's environment, passed to factories and to
	// [tool.IsEnabled]. Nil means an empty environment.
	Env *tool.Env
	// Tools are user-defined tools. A user tool with a built-in's name
	// replaces the built-in (in what the model sees and in execution); a
	// user tool named like a built-in's alias takes that alias over. Two
	// user tools with a common name or alias are an error.
	Tools []tool.Tool
	// MaxTier is the highest tier of built-ins included. Zero means
	// [TierSpecialist] (all).
	MaxTier Tier
	// Features are the feature flags that are on; a built-in with a
	// [Entry.Gate] is included only if its gate is listed.
	Features []string
	// Allow, if not empty, lists the tools available: name globs ('*', '?'),
	// "mcp__<server>" for every tool of a server; a permission rule's
	// specifier is ignored ("Bash(git:*)" allows the tool Bash). A tool
	// matching none is left out of the pool.
	Allow []string
	// Deny lists tools removed from the pool, with the patterns of Allow.
	// Only bare rules remove a tool: a rule with a specifier ("Bash(rm:*)")
	// restricts some inputs, which is the permission layer's job, so it is
	// ignored here. Deny wins over Allow.
	Deny []string
	// Defer turns deferral on: tools whose [tool.Deferral.ShouldDefer] is set
	// or whose name matches DeferNames are sent to the model by name only,
	// and the ToolSearch tool loads them. Deferral needs ToolSearch: denying
	// it turns deferral off.
	Defer bool
	// DeferNames are extra name patterns of tools to defer when Defer is on.
	DeferNames []string
	// DeferMCPOver, when positive and Defer is on, defers every MCP tool
	// once more than this many MCP tools are available.
	// [tool.Deferral.AlwaysLoad] wins over every deferral rule.
	DeferMCPOver int
	// SearchResults is the default number of tools a ToolSearch keyword
	// query loads. Zero means 5.
	SearchResults int
	// SessionTimeout is the deadline of one tool's session-time
	// description ([tool.SessionDescriber]) when the pool builds the tool.
	// Zero means [tool.DefaultSessionTimeout].
	SessionTimeout time.Duration
}

// Pool is the set of tools of one session: what the model sees (in a stable
// order), what the executor may call, and the deferred tools loaded so far.
// It is safe for concurrent use. A *Pool satisfies the executor's resolver
// interface (Lookup and Names).
//
// A pool is small: the immutable part — the built-in members, their
// filters, the built and frozen tools that are the same for every session
// — is a core shared by every pool assembled from the same registry and
// options; a pool holds what is its session's own: the environment, the
// tools built or described per session, its MCP tools, the restriction
// stack and the loaded deferred tools.
type Pool struct {
	ctx  context.Context // factories' and enablers' context (not cancelled)
	env  *tool.Env
	core *poolCore

	search     *member
	searchTool *searchTool

	mu      sync.RWMutex
	members []*member      // canonical order
	index   map[string]int // name or alias → position in members; may be the core's (read-only)
	stack   []*layer
	loaded  map[string]bool // names of loaded deferred tools
}

type source int

const (
	srcBuiltin source = iota
	srcUser
	srcMCP
	srcSearch
)

// member is one tool of the pool: its names and filters, and the cell
// that builds and keeps the tool.
type member struct {
	name    string
	aliases []string
	all     []string // name, then aliases
	src     source
	server  string // MCP server
	tierOK  bool   // a built-in passes tier and gate
	static  bool   // passes tier, gate, allow and deny
	*cell
}

// cell builds a member's tool lazily and keeps it. A shared cell (a
// prebuilt tool that does not describe the session) belongs to a core
// and serves all its pools; the others belong to one pool (and the pools
// derived from it).
type cell struct {
	factory Factory
	shared  bool

	done   atomic.Bool // t and err are final; read without mu
	mu     sync.Mutex  // guards built, frozen, t, err until done
	built  bool
	frozen bool // the session-time spec is computed and rendered
	t      tool.Tool
	err    error
}

func newMember(name string, aliases []string, src source, c *cell) *member {
	return &member{name: name, aliases: aliases, all: append([]string{name}, aliases...), src: src, cell: c}
}

// preset returns a cell holding t, built.
func preset(t tool.Tool) *cell { return &cell{built: true, t: t} }

func (m *member) names() []string { return m.all }

// layer is one restriction pushed on the stack.
type layer struct{ pats []pattern }

// NewPool assembles a pool. Factories are not called here but the first
// time a tool is needed (see [Pool.Build]); ctx's values (not its
// cancellation) are kept for those calls. Errors are programmer mistakes:
// invalid or clashing user tool names, a tool taking the reserved name
// ToolSearch, a bad tier.
//
// Pools assembled from the same registry with the same options (Env and
// Tools aside) share one core, which the registry keeps: the built-in
// tools registered built ([Registry.RegisterTool]) are frozen once for all
// of them. Built-ins with a factory, user tools and tools that describe
// the session ([tool.DescribesSession]) are built and described per pool.
func NewPool(ctx context.Context, opts Options) (*Pool, error) {
	var c *poolCore
	var err error
	if opts.Registry != nil {
		c, err = opts.Registry.core(opts)
	} else {
		c, err = newCore(nil, opts)
	}
	if err != nil {
		return nil, err
	}
	return c.newPool(ctx, opts.Env, opts.Tools)
}

// checkSchema refuses a tool whose input schema does not compile, unless
// its constructor checked it ([tool.SchemaChecked]): a hand-written tool
// with a bad schema would otherwise fail every call. Compiling is memoised
// by the schema's bytes, so a schema is compiled once per process however
// many pools take it.
func checkSchema(t tool.Tool, spec *tool.Spec) error {
	if tool.SchemaChecked(t) {
		return nil
	}
	return tool.CheckSchema(spec.InputSchema)
}

// checkedFactory wraps an entry's factory with the checks of what it built.
func checkedFactory(e Entry) Factory {
	return func(ctx context.Context, env *tool.Env) (tool.Tool, error) {
		t, err := e.Factory(ctx, env)
		if err != nil {
			return nil, fmt.Errorf("toolset: build %q: %w", e.Name, err)
		}
		if t == nil {
			return nil, fmt.Errorf("toolset: build %q: factory returned no tool", e.Name)
		}
		spec := t.Spec()
		if spec.Name != e.Name {
			return nil, fmt.Errorf("toolset: build %q: factory built a tool named %q", e.Name, spec.Name)
		}
		for _, a := range spec.Aliases {
			if !slices.Contains(e.Aliases, a) {
				return nil, fmt.Errorf("toolset: build %q: alias %q is not declared in the registry entry", e.Name, a)
			}
		}
		return t, nil
	}
}

func userMembers(tools []tool.Tool) ([]*member, error) {
	var out []*member
	owner := make(map[string]string)
	for _, t := range tools {
		if t == nil {
			return nil, errors.New("toolset: nil user tool")
		}
		spec := t.Spec()
		if err := checkSchema(t, spec); err != nil {
			return nil, fmt.Errorf("toolset: user tool %q: %w", spec.Name, err)
		}
		m := newMember(spec.Name, slices.Clone(spec.Aliases), srcUser, preset(t))
		for _, n := range m.names() {
			if !tool.ValidName(n) {
				return nil, fmt.Errorf("toolset: user tool %q: invalid name %q (want 1-64 of [a-zA-Z0-9_-])", spec.Name, n)
			}
			if reserved(n) {
				return nil, fmt.Errorf("toolset: user tool %q: the name %s is reserved", spec.Name, n)
			}
			if o, ok := owner[n]; ok {
				return nil, fmt.Errorf("toolset: user tool %q: %w: %q is already a name of user tool %q", spec.Name, ErrDuplicate, n, o)
			}
			owner[n] = spec.Name
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *member) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// reindex sorts members into the canonical order and installs them with a
// new name index. members must be the pool's own slice (not the core's).
// Callers hold p.mu for writing (or own p exclusively).
func (p *Pool) reindex(members []*member) {
	rank := func(m *member) int {
		switch m.src {
		case srcBuiltin, srcSearch:
			return 0
		case srcUser:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(members, func(a, b *member) int {
		if c := rank(a) - rank(b); c != 0 {
			return c
		}
		if a.src == srcMCP {
			if c := strings.Compare(a.server, b.server); c != 0 {
				return c
			}
		}
		return strings.Compare(a.name, b.name)
	})
	p.members, p.index = members, indexOf(members)
}

// indexOf maps every name and alias of members to its position.
func indexOf(members []*member) map[string]int {
	index := make(map[string]int, len(members)*2)
	for i, m := range members {
		for _, n := range m.names() {
			index[n] = i
		}
	}
	return index
}

// member returns the member called name (or an alias of it). Callers hold
// p.mu.
func (p *Pool) member(name string) (*member, bool) {
	if reserved(name) {
		return p.search, true
	}
	i, ok := p.index[name]
	if !ok {
		return nil, false
	}
	return p.members[i], true
}

// restricted reports whether the restriction stack excludes m. Callers hold
// p.mu.
func (p *Pool) restricted(m *member) bool {
	if m.src == srcSearch {
		return false
	}
	names := m.names()
	for _, l := range p.stack {
		ok := false
		for _, pat := range l.pats {
			if pat.matchAny(names) {
				ok = true
				break
			}
		}
		if !ok {
			return true
		}
	}
	return false
}

// get builds m if needed and returns its tool, or nil if it failed. The
// first get of a member also freezes its spec (see [Pool.freeze]). A
// shared cell is built and frozen by whichever pool gets it first: its
// factory and its spec do not depend on the session.
func (p *Pool) get(m *member) tool.Tool {
	c := m.cell
	if c.done.Load() {
		return c.t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.built {
		c.t, c.err = c.factory(p.ctx, p.env)
		c.built = true
	}
	if !c.frozen && c.t != nil {
		c.frozen = true
		t, err := p.freeze(c.t)
		if err != nil {
			c.t, c.err = nil, fmt.Errorf("toolset: tool %q: %w", m.name, err)
		} else {
			c.t = t
		}
	}
	c.done.Store(true)
	return c.t
}

// failed returns the error of building m, if it was built.
func (c *cell) failed() error {
	if c.done.Load() {
		return c.err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// freeze computes t's session-time spec once: the tool's
// [tool.SessionDescriber] answer (with the pool's deadline), then the
// structured description rendered ([tool.Spec.Render]). A tool with
// neither is returned as is; otherwise the pool keeps a wrapper whose Spec
// is the frozen copy, so every request of the session carries the same
// bytes.
func (p *Pool) freeze(t tool.Tool) (tool.Tool, error) {
	spec := t.Spec()
	rendered := spec.Rendered()
	if !rendered {
		// A custom tool's Doc (the constructors of package tool check
		// and render theirs when they build the tool).
		if err := tool.CheckDoc(spec); err != nil {
			return nil, err
		}
	}
	if err := checkSchema(t, spec); err != nil {
		return nil, err
	}
	out := spec
	if sd, ok := tool.As[tool.SessionDescriber](t); ok && tool.DescribesSession(t) {
		timeout := p.core.opts.SessionTimeout
		ctx, cancel := context.WithTimeout(p.ctx, timeout)
		ss, err := sd.DescribeSession(ctx, p.env)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("session-time description: no answer within %v: %w", timeout, err)
			}
			return nil, fmt.Errorf("session-time description: %w", err)
		}
		if ss.Description != "" || ss.Prompt != "" || len(ss.InputSchema) > 0 {
			if out, err = tool.ApplySession(spec, ss); err != nil {
				return nil, fmt.Errorf("session-time description: %w", err)
			}
		}
	}
	if out == spec && !rendered {
		out = spec.Render()
	}
	if out == spec {
		return t, nil
	}
	return withSpec(t, out), nil
}

// AddMCP adds (or replaces) the tools of an MCP server. Each tool is exposed
// as mcp__<server>__<tool> (see [MCPName]); a tool whose spec name already
// has that prefix keeps it. Two tools whose names become equal after
// sanitising or shortening are told apart by a hash suffix of their
// original names (the first in name order keeps the plain name). The error
// wraps [ErrBadServerName] for a server name with "__", or [ErrDuplicate]
// when a user tool already has one of the names.
func (p *Pool) AddMCP(server string, tools ...tool.Tool) error {
	if err := CheckServerName(server); err != nil {
		return fmt.Errorf("toolset: add MCP server: %w", err)
	}
	type named struct {
		orig string
		t    tool.Tool
	}
	var list []named
	for _, t := range tools {
		if t == nil {
			return fmt.Errorf("toolset: add MCP server %q: nil tool", server)
		}
		list = append(list, named{t.Spec().Name, t})
	}
	slices.SortStableFunc(list, func(a, b named) int { return strings.Compare(a.orig, b.orig) })
	var ms []*member
	taken := make(map[string]bool)
	for _, n := range list {
		name, err := MCPName(server, n.orig)
		if err != nil {
			return fmt.Errorf("toolset: add MCP server %q: %w", server, err)
		}
		if taken[name] {
			base := name
			if len(base) > maxNameLen-9 {
				base = base[:maxNameLen-9]
			}
			name = base + "_" + hashSuffix(MCPPrefix+server+mcpSep+n.orig)
			for i := 2; taken[name]; i++ {
				name = base + "_" + hashSuffix(fmt.Sprintf("%s%s%s%s#%d", MCPPrefix, server, mcpSep, n.orig, i))
			}
		}
		taken[name] = true
		m := newMember(name, nil, srcMCP, preset(renamed(n.t, name)))
		m.server = SanitizeName(server)
		m.static = p.core.allowed(m) && !p.core.denied(m)
		ms = append(ms, m)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range ms {
		if o, ok := p.member(m.name); ok && o.src != srcMCP {
			return fmt.Errorf("toolset: add MCP server %q: %w: %q is already a tool name", server, ErrDuplicate, m.name)
		}
	}
	srv := SanitizeName(server)
	members := make([]*member, 0, len(p.members)+len(ms))
	for _, m := range p.members {
		if m.src != srcMCP || m.server != srv {
			members = append(members, m)
		}
	}
	p.reindex(append(members, ms...))
	return nil
}

// RemoveMCP removes the tools of an MCP server (a disconnected server).
func (p *Pool) RemoveMCP(server string) {
	srv := SanitizeName(server)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.ContainsFunc(p.members, func(m *member) bool { return m.src == srcMCP && m.server == srv }) {
		return
	}
	p.reindex(slices.DeleteFunc(slices.Clone(p.members), func(m *member) bool { return m.src == srcMCP && m.server == srv }))
}

// Push narrows the pool to the tools matching at least one of patterns (the
// patterns of [Options.Allow]) until the returned pop function is called,
// for a skill or subagent. Nested pushes intersect: a tool stays only if
// every pushed layer matches it. Pop removes exactly the layer Push added
// (layers may be popped in any order) and is idempotent. ToolSearch is never
// restricted away while deferred tools remain.
func (p *Pool) Push(patterns ...string) (pop func()) {
	l := &layer{}
	for _, s := range patterns {
		pat, _ := parsePattern(s)
		l.pats = append(l.pats, pat)
	}
	p.mu.Lock()
	p.stack = append(p.stack, l)
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.stack = slices.DeleteFunc(p.stack, func(x *layer) bool { return x == l })
		})
	}
}

// Depth returns the number of restriction layers pushed.
func (p *Pool) Depth() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.stack)
}

// entry is one available tool in a snapshot of the pool.
type entry struct {
	m        *member
	t        tool.Tool
	spec     *tool.Spec
	deferred bool
	loaded   bool
}

// snapshot returns the available tools in order (restriction applied), with
// their deferral state, and whether ToolSearch is part of the view.
func (p *Pool) snapshot() (list []entry, search bool) {
	p.mu.RLock()
	cands := make([]*member, 0, len(p.members))
	for _, m := range p.members {
		if m.static && !p.restricted(m) {
			cands = append(cands, m)
		}
	}
	var loaded map[string]bool
	if len(p.loaded) > 0 {
		loaded = maps.Clone(p.loaded)
	}
	p.mu.RUnlock()

	opts := &p.core.opts
	deferOn := opts.Defer && p.search.static
	mcpCount := 0
	for _, m := range cands {
		if t := p.get(m); t != nil && tool.IsEnabled(p.ctx, t, p.env) {
			list = append(list, entry{m: m, t: t, spec: t.Spec()})
			if m.src == srcMCP {
				mcpCount++
			}
		}
	}
	if !deferOn {
		return list, false
	}
	for i := range list {
		e := &list[i]
		d := e.spec.Defer
		switch {
		case d.AlwaysLoad:
		case d.ShouldDefer, e.m.src == srcMCP && opts.DeferMCPOver > 0 && mcpCount > opts.DeferMCPOver:
			e.deferred = true
		default:
			for _, pat := range p.core.deferNames {
				if pat.matchAny(e.m.names()) {
					e.deferred = true
					break
				}
			}
		}
		if e.deferred {
			search = true
			e.loaded = loaded[e.m.name]
		}
	}
	return list, search
}

// Tools returns the tools the model sees, in order: every available tool
// except deferred tools not loaded yet, plus ToolSearch (in its place among
// the built-ins) when there are deferred tools.
func (p *Pool) Tools() []tool.Tool {
	list, search := p.snapshot()
	out := make([]tool.Tool, 0, len(list)+1)
	pos, at := -1, p.searchPos(list)
	for i, e := range list {
		if search && i == at {
			pos = len(out)
		}
		if !e.deferred || e.loaded {
			out = append(out, e.t)
		}
	}
	if search {
		if pos < 0 {
			pos = len(out)
		}
		out = slices.Insert(out, pos, tool.Tool(p.searchTool.withListing(list)))
	}
	return out
}

// Specs returns the specs of [Pool.Tools], in the same order, for
// provider-neutral requests.
func (p *Pool) Specs() []*tool.Spec {
	ts := p.Tools()
	out := make([]*tool.Spec, len(ts))
	for i, t := range ts {
		out[i] = t.Spec()
	}
	return out
}

// All returns every available tool in order, deferred ones included (and
// ToolSearch when deferral applies).
func (p *Pool) All() []tool.Tool {
	list, search := p.snapshot()
	out := make([]tool.Tool, 0, len(list)+1)
	for _, e := range list {
		out = append(out, e.t)
	}
	if search {
		out = slices.Insert(out, p.searchPos(list), tool.Tool(p.searchTool.withListing(list)))
	}
	return out
}

func (p *Pool) searchPos(list []entry) int {
	for i, e := range list {
		if e.m.src != srcBuiltin || e.m.name > ToolSearchName {
			return i
		}
	}
	return len(list)
}

// SearchTool returns the ToolSearch tool of the pool, listing the deferred
// tools of the moment, whether or not deferral applies now (for catalogues
// such as `gantry tools list`); nil when ToolSearch is denied.
func (p *Pool) SearchTool() tool.Tool {
	if !p.search.static {
		return nil
	}
	list, _ := p.snapshot()
	return p.searchTool.withListing(list)
}

// Deferred returns the deferred tools (loaded or not) in order.
func (p *Pool) Deferred() []tool.Tool {
	list, _ := p.snapshot()
	var out []tool.Tool
	for _, e := range list {
		if e.deferred {
			out = append(out, e.t)
		}
	}
	return out
}

// Lookup returns the tool called name (or an alias of it) if the session may
// call it: available, not filtered out, inside the restriction stack. A
// deferred tool is found even before it is loaded. Lookup builds only the
// tool asked for.
func (p *Pool) Lookup(name string) (tool.Tool, bool) {
	p.mu.RLock()
	m, ok := p.member(name)
	if ok && (!m.static || p.restricted(m)) {
		ok = false
	}
	p.mu.RUnlock()
	if !ok {
		return nil, false
	}
	if m.src == srcSearch {
		if !p.core.opts.Defer {
			return nil, false
		}
		list, search := p.snapshot()
		if !search {
			return nil, false
		}
		return p.searchTool.withListing(list), true
	}
	t := p.get(m)
	if t == nil || !tool.IsEnabled(p.ctx, t, p.env) {
		return nil, false
	}
	return t, true
}

// Names returns every name and alias [Pool.Lookup] resolves, in pool order
// (for "did you mean" suggestions).
func (p *Pool) Names() []string {
	list, search := p.snapshot()
	var out []string
	at := p.searchPos(list)
	for i, e := range list {
		if search && i == at {
			out = append(out, ToolSearchName)
			search = false
		}
		out = append(out, e.m.names()...)
	}
	if search {
		out = append(out, ToolSearchName)
	}
	return out
}

// Load marks deferred tools as loaded, so they are sent in full from the
// next request on. Unknown names are ignored; aliases resolve.
func (p *Pool) Load(names ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range names {
		if m, ok := p.member(n); ok && m.src != srcSearch {
			if p.loaded == nil {
				p.loaded = make(map[string]bool)
			}
			p.loaded[m.name] = true
		}
	}
}

// Loaded returns the names of the loaded deferred tools, sorted.
func (p *Pool) Loaded() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]string, 0, len(p.loaded))
	for k := range p.loaded {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ResetLoaded forgets the loaded deferred tools (after a compaction dropped
// the messages that loaded them).
func (p *Pool) ResetLoaded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.loaded)
}

// Build builds every tool of the pool that is not built yet (the factories
// run at most once) and returns [Pool.Err]. Call it to fail early.
func (p *Pool) Build() error {
	p.mu.RLock()
	ms := slices.Clone(p.members)
	p.mu.RUnlock()
	for _, m := range ms {
		if m.static {
			p.get(m)
		}
	}
	return p.Err()
}

// Err returns the errors of the factories run so far, joined (nil if none).
// A tool whose factory failed is left out of the pool.
func (p *Pool) Err() error {
	p.mu.RLock()
	ms := slices.Clone(p.members)
	p.mu.RUnlock()
	var errs []error
	for _, m := range ms {
		if err := m.failed(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// specTool is a pool's view of a tool with another spec: an MCP tool
// under its pool name, a tool with its session-time or rendered spec. It
// forwards the optional capabilities every call uses; the rarer ones
// ([tool.PartialObserver], [tool.CallFactory]) are found through Unwrap
// with [tool.As].
type specTool struct {
	inner tool.Tool
	spec  tool.Spec
}

// renamed exposes an MCP tool under its pool name.
func renamed(t tool.Tool, name string) tool.Tool {
	s := *t.Spec()
	if s.Name == name {
		return t
	}
	s.Name = name
	s.Aliases = nil
	return withSpec(t, &s)
}

// withSpec returns t seen with spec (copied).
func withSpec(t tool.Tool, spec *tool.Spec) tool.Tool {
	if st, ok := t.(*specTool); ok {
		t = st.inner
	}
	return &specTool{inner: t, spec: *spec}
}

var (
	_ tool.Traiter           = (*specTool)(nil)
	_ tool.InputValidator    = (*specTool)(nil)
	_ tool.PermissionChecker = (*specTool)(nil)
	_ tool.Describer         = (*specTool)(nil)
	_ tool.RuleMatcher       = (*specTool)(nil)
	_ tool.Accessor          = (*specTool)(nil)
	_ tool.Timeouter         = (*specTool)(nil)
	_ tool.Enabler           = (*specTool)(nil)
	_ tool.Backfiller        = (*specTool)(nil)
	_ tool.Unwrapper         = (*specTool)(nil)
)

// Unwrap returns the tool under its own spec.
func (r *specTool) Unwrap() tool.Tool { return r.inner }

func (r *specTool) Spec() *tool.Spec { return &r.spec }

func (r *specTool) Call(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Result, error) {
	return r.inner.Call(ctx, env, input)
}

func (r *specTool) Traits(input json.RawMessage) tool.Traits {
	if t, ok := r.inner.(tool.Traiter); ok {
		return t.Traits(input)
	}
	return r.spec.Traits
}

func (r *specTool) ValidateInput(ctx context.Context, env *tool.Env, input json.RawMessage) error {
	if v, ok := r.inner.(tool.InputValidator); ok {
		return v.ValidateInput(ctx, env, input)
	}
	return nil
}

func (r *specTool) CheckPermission(ctx context.Context, env *tool.Env, input json.RawMessage) tool.PermissionResult {
	if c, ok := r.inner.(tool.PermissionChecker); ok {
		return c.CheckPermission(ctx, env, input)
	}
	return tool.PermissionResult{}
}

func (r *specTool) DescribeCall(input json.RawMessage) string {
	if d, ok := r.inner.(tool.Describer); ok {
		if s := d.DescribeCall(input); s != "" && s != r.inner.Spec().Name {
			return s
		}
	}
	return r.spec.Name
}

func (r *specTool) MatchRule(specifier string, input json.RawMessage) bool {
	if m, ok := r.inner.(tool.RuleMatcher); ok {
		return m.MatchRule(specifier, input)
	}
	return false
}

// Access forwards what the call acts on, which the permission layer
// decides by (never by the name).
func (r *specTool) Access(input json.RawMessage) (tool.Access, error) {
	return tool.AccessOf(r.inner, input)
}

func (r *specTool) CallTimeout(input json.RawMessage) time.Duration {
	if t, ok := r.inner.(tool.Timeouter); ok {
		return t.CallTimeout(input)
	}
	return 0
}

func (r *specTool) Enabled(ctx context.Context, env *tool.Env) bool {
	return tool.IsEnabled(ctx, r.inner, env)
}

func (r *specTool) BackfillInput(env *tool.Env, input json.RawMessage) json.RawMessage {
	if b, ok := r.inner.(tool.Backfiller); ok {
		return b.BackfillInput(env, input)
	}
	return nil
}

// Derive returns a new pool over p's tools, for a subagent: the same
// members (a tool built once is shared; built-in and user tools keep
// per-session state in [tool.Env], so sharing is safe), p's filters and
// restriction stack plus, when patterns are given, one more layer narrowing
// it to the tools matching them (the patterns of [Options.Allow]). The
// derived pool has its own environment (env; nil means p's), its own
// ToolSearch and loaded set (nothing loaded). MCP tools added to or removed
// from p later are not seen by the derived pool. Derive never widens: a
// tool p does not offer is not offered by the derived pool.
func (p *Pool) Derive(env *tool.Env, patterns ...string) *Pool {
	if env == nil {
		env = p.env
	}
	p.mu.RLock()
	d := &Pool{
		ctx: p.ctx, env: env, core: p.core,
		members: p.members, index: p.index, // never changed in place
		stack: slices.Clone(p.stack),
	}
	p.mu.RUnlock()
	d.search, d.searchTool = d.newSearch()
	if len(patterns) > 0 {
		d.Push(patterns...)
	}
	return d
}

// Unloaded reports whether name (or an alias) is a deferred tool of the
// pool's view that is not loaded yet: the model was sent its name but not
// its schema. The executor uses it to tell a model whose call of such a
// tool failed validation to load the tool with ToolSearch first.
func (p *Pool) Unloaded(name string) bool {
	list, search := p.snapshot()
	if !search {
		return false
	}
	for _, e := range list {
		if e.m.name == name || slices.Contains(e.m.aliases, name) {
			return e.deferred && !e.loaded
		}
	}
	return false
}
