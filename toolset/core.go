package toolset

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// poolCore is the immutable part of the pools assembled from one registry with
// one set of options: the built-in members in their canonical order with
// the filters applied (tier, gate, allow, deny), the name index, the
// deferral rules, and the built-in tools registered built
// ([Registry.RegisterTool]) that do not describe the session, built and
// frozen (spec checked and rendered) once for every pool. A core is never
// changed after it is made and is safe for concurrent use.
//
// [NewPool] finds the core in the registry (see [Registry.RegisterTool]
// for what makes a tool shareable); a pool holds a pointer to it plus its
// session's own state.
type poolCore struct {
	opts                    Options // normalised; Env, Tools and Registry unused
	allow, deny, deferNames []pattern
	features                map[string]bool
	members                 []*member      // built-ins, by name
	index                   map[string]int // built-in name or alias → position
	perSession              []int          // positions of the members built per pool
	searchStatic            bool           // ToolSearch is not denied
}

// newCore builds the core of reg's entries (reg may be nil) with opts.
func newCore(reg *Registry, opts Options) (*poolCore, error) {
	if opts.MaxTier == 0 {
		opts.MaxTier = TierSpecialist
	}
	if opts.MaxTier < TierCore || opts.MaxTier > TierSpecialist {
		return nil, fmt.Errorf("toolset: unknown max tier %d", int(opts.MaxTier))
	}
	if opts.SearchResults <= 0 {
		opts.SearchResults = 5
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = tool.DefaultSessionTimeout
	}
	opts.Env, opts.Tools, opts.Registry = nil, nil, nil
	c := &poolCore{opts: opts, features: make(map[string]bool)}
	for _, f := range opts.Features {
		c.features[f] = true
	}
	for _, s := range opts.Allow {
		pat, _ := parsePattern(s)
		c.allow = append(c.allow, pat)
	}
	for _, s := range opts.Deny {
		if pat, spec := parsePattern(s); !spec {
			c.deny = append(c.deny, pat)
		}
	}
	for _, s := range opts.DeferNames {
		pat, _ := parsePattern(s)
		c.deferNames = append(c.deferNames, pat)
	}
	if reg != nil {
		for _, e := range reg.Entries() {
			for _, n := range append([]string{e.Name}, e.Aliases...) {
				if reserved(n) {
					return nil, fmt.Errorf("toolset: built-in %q: the name %s is reserved", e.Name, n)
				}
			}
			cl := &cell{factory: checkedFactory(e)}
			// A built tool is the same for every session; its frozen spec
			// is too unless it describes the session.
			cl.shared = e.built != nil && !tool.DescribesSession(e.built)
			m := newMember(e.Name, e.Aliases, srcBuiltin, cl)
			m.tierOK = e.Tier <= opts.MaxTier && (e.Gate == "" || c.features[e.Gate])
			m.static = m.tierOK && c.allowed(m) && !c.denied(m)
			if !cl.shared {
				c.perSession = append(c.perSession, len(c.members))
			}
			c.members = append(c.members, m)
		}
	}
	c.index = indexOf(c.members)
	c.searchStatic = !c.denied(newMember(ToolSearchName, []string{DiscoverToolsName}, srcSearch, nil))
	return c, nil
}

func (c *poolCore) allowed(m *member) bool {
	if len(c.allow) == 0 {
		return true
	}
	for _, pat := range c.allow {
		if pat.matchAny(m.names()) {
			return true
		}
	}
	return false
}

func (c *poolCore) denied(m *member) bool {
	for _, pat := range c.deny {
		if pat.matchAny(m.names()) {
			return true
		}
	}
	return false
}

// newPool assembles a pool over c for one session: env (nil = an empty
// environment) and the user tools (which replace built-ins of the same
// name and take their aliases over).
func (c *poolCore) newPool(ctx context.Context, env *tool.Env, tools []tool.Tool) (*Pool, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if env == nil {
		env = &tool.Env{}
	}
	p := &Pool{ctx: context.WithoutCancel(ctx), env: env, core: c}
	p.search, p.searchTool = p.newSearch()
	users, err := userMembers(tools)
	if err != nil {
		return nil, err
	}
	if len(users) == 0 {
		// The core's order and index hold; only the members built per
		// session get cells of their own.
		p.members, p.index = c.members, c.index
		if len(c.perSession) > 0 {
			p.members = slices.Clone(c.members)
			for _, i := range c.perSession {
				p.members[i] = c.members[i].own()
			}
		}
		return p, nil
	}
	// A user tool replaces the built-in of the same name and takes over a
	// built-in's alias; a user alias may not shadow a built-in's name.
	userNames := make(map[string]bool)
	for _, u := range users {
		for _, n := range u.names() {
			userNames[n] = true
		}
	}
	for _, u := range users {
		for _, a := range u.aliases {
			if _, ok := c.index[a]; ok && c.members[c.index[a]].name == a {
				return nil, fmt.Errorf("toolset: user tool %q: %w: alias %q is the name of a built-in tool", u.name, ErrDuplicate, a)
			}
		}
	}
	members := make([]*member, 0, len(c.members)+len(users))
	for i, b := range c.members {
		if userNames[b.name] {
			continue // replaced
		}
		if slices.ContainsFunc(b.aliases, func(a string) bool { return userNames[a] }) {
			cp := b.own()
			cp.aliases = slices.DeleteFunc(slices.Clone(b.aliases), func(a string) bool { return userNames[a] })
			cp.all = append([]string{cp.name}, cp.aliases...)
			cp.static = cp.tierOK && c.allowed(cp) && !c.denied(cp)
			if b.shared {
				cp.cell = b.cell // the tool is the same; only the names differ
			}
			b = cp
		} else if slices.Contains(c.perSession, i) {
			b = b.own()
		}
		members = append(members, b)
	}
	for _, u := range users {
		u.static = c.allowed(u) && !c.denied(u)
	}
	p.reindex(append(members, users...))
	return p, nil
}

// own returns a copy of m with a new cell of its own (the factory kept).
func (m *member) own() *member {
	cp := *m
	cp.cell = &cell{factory: m.factory}
	return &cp
}

// newSearch returns the pool's ToolSearch member and tool.
func (p *Pool) newSearch() (*member, *searchTool) {
	st := newSearchTool(p)
	c := preset(st)
	c.frozen = true
	c.done.Store(true)
	m := newMember(ToolSearchName, []string{DiscoverToolsName}, srcSearch, c)
	m.static = p.core.searchStatic
	return m, st
}

// maxCores bounds the cores a registry keeps; a program that assembles
// pools with ever new options empties the cache and starts again.
const maxCores = 32

// core returns the core of r with opts, made once per distinct options
// (Env and Tools aside) and registry version.
func (r *Registry) core(opts Options) (*poolCore, error) {
	key := coreKey(opts)
	r.mu.RLock()
	c, ok := r.cores[key]
	r.mu.RUnlock()
	if ok {
		return c, nil
	}
	r.mu.RLock()
	version := r.version
	r.mu.RUnlock()
	c, err := newCore(r, opts)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.version != version {
		return c, nil // registered meanwhile: c may be stale for others
	}
	if old, ok := r.cores[key]; ok {
		return old, nil
	}
	if r.cores == nil || len(r.cores) >= maxCores {
		r.cores = make(map[string]*poolCore)
	}
	r.cores[key] = c
	return c, nil
}

// coreKey encodes the options a core depends on, each string length-
// prefixed so that no two option sets share a key.
func coreKey(o Options) string {
	var b strings.Builder
	num := func(n int64) { b.WriteString(strconv.FormatInt(n, 10)); b.WriteByte(';') }
	strs := func(ss []string) {
		num(int64(len(ss)))
		for _, s := range ss {
			num(int64(len(s)))
			b.WriteString(s)
		}
	}
	num(int64(o.MaxTier))
	strs(o.Features)
	strs(o.Allow)
	strs(o.Deny)
	if o.Defer {
		num(1)
	} else {
		num(0)
	}
	strs(o.DeferNames)
	num(int64(o.DeferMCPOver))
	num(int64(o.SearchResults))
	num(int64(o.SessionTimeout))
	return b.String()
}
