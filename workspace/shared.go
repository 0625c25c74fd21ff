package workspace

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/toolset"
)

// maxSharedRegistries bounds the registries a [Shared] keeps.
const maxSharedRegistries = 64

// Shared is what workspaces opened one after another in one process can
// share: the registry of built-in tools, and with it the immutable core of
// their pools (see [toolset.NewPool]), instead of building the built-in
// tools for each workspace. A server that opens a workspace per request
// (`gantry serve`) keeps one and sets [Options.Shared].
//
// The built-in tools depend on the [Options.Builtin] given and on what
// Open derives from the directory and its settings: the journal directory
// (under the Gantry home) and the settings' "env" for commands. A Shared
// keeps one registry per distinct pair of those (at most 64), so a
// directory whose settings change its env gets new tools, and directories
// with equal ones share them. The caller's part of Options.Builtin is not
// part of the key: use one Shared only for workspaces opened with the same
// Options.Builtin. The zero value is ready to use; a Shared is safe for
// concurrent use.
type Shared struct {
	mu   sync.Mutex
	regs map[string]*toolset.Registry
}

// registry returns the built-in registry for bo, built once per key.
func (s *Shared) registry(bo builtin.Options) (*toolset.Registry, error) {
	key := sharedKey(bo)
	s.mu.Lock()
	reg, ok := s.regs[key]
	s.mu.Unlock()
	if ok {
		return reg, nil
	}
	reg, err := builtin.Registry(bo)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.regs[key]; ok {
		return old, nil
	}
	if s.regs == nil || len(s.regs) >= maxSharedRegistries {
		s.regs = make(map[string]*toolset.Registry)
	}
	s.regs[key] = reg
	return reg, nil
}

// sharedKey encodes what Open derives into the built-in options: the
// journal directory and the commands' env, and the tools asked for
// (Builtin.Only), strings length-prefixed.
func sharedKey(bo builtin.Options) string {
	var b strings.Builder
	str := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	str(bo.File.JournalDir)
	for _, k := range slices.Sorted(maps.Keys(bo.Shell.Env)) {
		str(k)
		str(bo.Shell.Env[k])
	}
	if bo.Only != nil {
		b.WriteString("only")
		for _, n := range bo.Only {
			str(n)
		}
	}
	return b.String()
}
