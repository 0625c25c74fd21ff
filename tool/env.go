package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// Env holds the per-call facts a tool may use: the Go form of a ToolContext.
// The executor builds one for each call from the session's environment;
// tools must treat it as read-only (change the session's environment through
// [Result.ContextModifier]). Cancellation and deadlines travel in the
// context.Context, not here.
type Env struct {
	// ToolUseID is the id the model gave this call.
	ToolUseID string
	// WorkDir is the session's working directory (absolute).
	WorkDir string
	// SessionID identifies the session.
	SessionID string
	// Mode is the session's permission mode.
	Mode Mode
	// PrePlanMode is the mode the session had when EnterPlanMode switched
	// it to plan mode ("" when it started in plan mode or is not in it);
	// ExitPlanMode returns to it.
	PrePlanMode Mode
	// SessionDir is a directory for the session's own files (a plan, saved
	// results), created on demand; "" means the session keeps none.
	SessionDir string
	// ToolResultsDir is where oversized results and background output go.
	// Empty means a directory chosen by the executor.
	ToolResultsDir string
	// AdditionalDirs are directories besides WorkDir the session may use.
	AdditionalDirs []string
	// Checked maps the paths of this call's input, as the input wrote them,
	// to the files the permission decision resolved them to (absolute, every
	// symbolic link resolved). A file tool uses that file and follows no
	// link on the way to it, so the file checked is the file used, even if
	// a link in the path is swapped after the decision. Nil when the
	// decision recorded nothing: the tool resolves the path itself. It is
	// shared by clones and must not be changed.
	Checked map[string]string
	// Files records what the session has read, for read-before-write and
	// staleness checks. Nil means no tracking (tools that need it fail with a
	// clear error result).
	Files FileStates
	// Services holds the services and stores a tool may need; see [Use].
	Services *Services
	// Progress receives progress reports while the call runs. Nil discards.
	Progress func(Progress)
	// MessageID is the id of the model message that asked for this call
	// ("" when the caller did not say).
	MessageID string
	// CanUseTool, set by the executor for each call, decides whether this
	// session would let a call of the named tool (a name or an alias) with
	// input run — the same decision the executor makes for the model's
	// calls: input validated, the tool's own check, rules, mode, and the
	// session's ask callback, so the person may be asked. A tool that
	// starts sub-work (other tools, a script, a subagent) asks before it
	// acts; a Deny carries the reason to give the model. Allow may come
	// with UpdatedInput (the person or a hook edited it). Nil means
	// nobody can decide: treat every sub-call as denied. It must not be
	// called after the call returned.
	CanUseTool func(ctx context.Context, name string, input json.RawMessage) (PermissionResult, error)
}

// Progress is one progress report of a running call.
type Progress struct {
	// Message is a short human-readable line ("12 files searched").
	Message string `json:"message"`
	// Data is optional tool-specific detail (for example the latest lines of
	// output).
	Data any `json:"data,omitempty"`
}

// ReportProgress sends a progress message if env has a sink. It is safe on a
// nil Env.
func (e *Env) ReportProgress(msg string, data any) {
	if e == nil || e.Progress == nil {
		return
	}
	e.Progress(Progress{Message: msg, Data: data})
}

// Clone returns a copy of e whose slices may be changed without affecting e.
// Services and Files are shared (they are the session's stores).
func (e *Env) Clone() *Env {
	if e == nil {
		return &Env{}
	}
	c := *e
	c.AdditionalDirs = append([]string(nil), e.AdditionalDirs...)
	return &c
}

// A Reminder adds context at turn boundaries: before each model request
// the agent calls every reminder in order, appends the non-empty texts to
// the conversation as one user message (recorded in the transcript), and
// only then calls each returned ack — so a reminder that delivers queued
// messages marks them delivered once they are in the conversation. An
// error is shown to the user as a notice and the run goes on.
//
// Besides the agent's own reminders, a session service may offer one: the
// agent asks the Reminder in the session's [Services] (Provide[Reminder]),
// if there is one — how a language server's late diagnostics reach the
// next turn without the loop knowing the LSP tool.
type Reminder interface {
	Remind(ctx context.Context, env *Env) (text string, ack func(), err error)
}

// ErrNoService is wrapped by [Use] when a service is not available.
var ErrNoService = errors.New("service not available")

// Services is a set of services keyed by their (interface) type. The zero
// value is empty and ready to use; it is safe for concurrent use.
type Services struct {
	mu sync.RWMutex
	m  map[reflect.Type]any
}

// Provide registers v as the service of type T (usually an interface type)
// in s and returns s.
func Provide[T any](s *Services, v T) *Services {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[reflect.Type]any)
	}
	s.m[reflect.TypeFor[T]()] = v
	return s
}

// Clone returns a new set holding the same services, to which services can
// be added without changing s (a subagent's own services over its
// parent's). A nil s gives an empty set.
func (s *Services) Clone() *Services {
	c := &Services{m: make(map[reflect.Type]any)}
	if s == nil {
		return c
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k, v := range s.m {
		c.m[k] = v
	}
	return c
}

// Use returns env's service of type T, or an error wrapping [ErrNoService]
// that names T, suitable as a tool error: a missing service is a clear error
// result, never a panic.
func Use[T any](env *Env) (T, error) {
	var zero T
	t := reflect.TypeFor[T]()
	if env == nil || env.Services == nil {
		return zero, &noService{t: t, none: true}
	}
	env.Services.mu.RLock()
	v, ok := env.Services.m[t]
	env.Services.mu.RUnlock()
	if !ok {
		return zero, &noService{t: t}
	}
	return v.(T), nil
}

// noService is the error of [Use] for a missing service, formatted only
// when read: enabled checks ask for services on every request and mostly
// drop the error.
type noService struct {
	t    reflect.Type
	none bool // the environment has no services at all
}

func (e *noService) Error() string {
	if e.none {
		return fmt.Sprintf("%v: %v (this environment provides no services)", ErrNoService, e.t)
	}
	return fmt.Sprintf("%v: %v", ErrNoService, e.t)
}

func (e *noService) Unwrap() error { return ErrNoService }

// FileState is what the session knows of a file from its last read or write.
type FileState struct {
	// Path is the absolute, cleaned path.
	Path string `json:"path"`
	// Size and ModTime are the file's at the time of the read.
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	// Hash is a hex SHA-256 of the whole content at the time of the read
	// ("" if not computed, for example for very large files).
	Hash string `json:"hash,omitempty"`
	// Offset and Limit are the line range read (1-based offset; zero Limit
	// means to the end). Partial is true when not the whole file was read.
	Offset  int  `json:"offset,omitempty"`
	Limit   int  `json:"limit,omitempty"`
	Partial bool `json:"partial,omitempty"`
	// At is when the read (or write) happened.
	At time.Time `json:"at"`
}

// FileStates records the session's file reads. Implementations must be safe
// for concurrent use.
type FileStates interface {
	// Get returns the state recorded for an absolute path.
	Get(path string) (FileState, bool)
	// Put records a state (replacing an earlier one for the same path).
	Put(st FileState)
	// Delete forgets a path.
	Delete(path string)
}

// FileCache is the default in-memory [FileStates], bounded to a number of
// entries (the oldest read is forgotten first). The zero value is not usable;
// call [NewFileCache].
type FileCache struct {
	mu    sync.Mutex
	max   int
	m     map[string]FileState
	order []string
}

// NewFileCache returns a cache holding at most max entries (max <= 0 means
// 1000).
func NewFileCache(max int) *FileCache {
	if max <= 0 {
		max = 1000
	}
	return &FileCache{max: max} // the map is made by the first Put: many sessions never read a file
}

// Get implements [FileStates].
func (c *FileCache) Get(path string) (FileState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[path]
	return st, ok
}

// Put implements [FileStates].
func (c *FileCache) Put(st FileState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]FileState)
	}
	if _, ok := c.m[st.Path]; !ok {
		c.order = append(c.order, st.Path)
	}
	c.m[st.Path] = st
	for len(c.m) > c.max && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		delete(c.m, old)
	}
}

// Delete implements [FileStates].
func (c *FileCache) Delete(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, path)
	for i, p := range c.order {
		if p == path {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// ReadGuard is a session service (see [Use]) for tools that list or search
// many files (Glob, Grep): it says which files must not reach the model —
// the permission layer's Read deny rules, which bind every tool, not only
// Read. The permission engine implements it.
type ReadGuard interface {
	// ReadFilter returns a predicate reporting whether reading the file
	// at an absolute path is denied, for a call whose working directory
	// is workDir; nil when nothing is denied. The predicate is safe for
	// concurrent use.
	ReadFilter(workDir string) func(path string) bool
}

// ReadFilterOf returns env's [ReadGuard] predicate for env.WorkDir, or nil
// when the session has no guard or nothing is denied.
func ReadFilterOf(env *Env) func(path string) bool {
	g, err := Use[ReadGuard](env)
	if err != nil || g == nil || env == nil {
		return nil
	}
	return g.ReadFilter(env.WorkDir)
}
