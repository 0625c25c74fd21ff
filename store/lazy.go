package store

import (
	"context"
	"sync"
)

// Lazy is a [Store] opened on first use: a program that never touches the
// store never opens it. Create it with [NewLazy]; it is safe for concurrent
// use.
type Lazy struct {
	open func(context.Context) (Store, error)

	mu     sync.Mutex
	s      Store
	err    error
	closed bool
}

var _ Store = (*Lazy)(nil)

// NewLazy returns a store that calls open on the first call of any method.
// A failed open is remembered and returned by every later call (except a
// failure caused by the call's context, which the next call retries).
func NewLazy(open func(context.Context) (Store, error)) *Lazy { return &Lazy{open: open} }

// LazySQLite is NewLazy over [OpenSQLite].
func LazySQLite(path string, opts SQLiteOptions) *Lazy {
	return NewLazy(func(ctx context.Context) (Store, error) { return OpenSQLite(ctx, path, opts) })
}

// Opened reports whether the store has been opened.
func (l *Lazy) Opened() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s != nil
}

func (l *Lazy) get(ctx context.Context) (Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil, ErrClosed
	case l.s != nil || l.err != nil:
		return l.s, l.err
	}
	s, err := l.open(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.err = err
		}
		return nil, err
	}
	l.s = s
	return s, nil
}

// Close closes the store if it was opened.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.s == nil {
		return nil
	}
	return l.s.Close()
}

// CreateTask implements [Tasks].
func (l *Lazy) CreateTask(ctx context.Context, list string, t NewTask) (Task, error) {
	s, err := l.get(ctx)
	if err != nil {
		return Task{}, err
	}
	return s.CreateTask(ctx, list, t)
}

// GetTask implements [Tasks].
func (l *Lazy) GetTask(ctx context.Context, list, id string) (Task, error) {
	s, err := l.get(ctx)
	if err != nil {
		return Task{}, err
	}
	return s.GetTask(ctx, list, id)
}

// ListTasks implements [Tasks].
func (l *Lazy) ListTasks(ctx context.Context, list string) ([]Task, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.ListTasks(ctx, list)
}

// UpdateTask implements [Tasks].
func (l *Lazy) UpdateTask(ctx context.Context, list, id string, p TaskPatch) (Task, error) {
	s, err := l.get(ctx)
	if err != nil {
		return Task{}, err
	}
	return s.UpdateTask(ctx, list, id, p)
}

// ClaimTask implements [Tasks].
func (l *Lazy) ClaimTask(ctx context.Context, list, id, owner string) (Task, error) {
	s, err := l.get(ctx)
	if err != nil {
		return Task{}, err
	}
	return s.ClaimTask(ctx, list, id, owner)
}

// SetTodos implements [Todos].
func (l *Lazy) SetTodos(ctx context.Context, key string, items []Todo) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return s.SetTodos(ctx, key, items)
}

// GetTodos implements [Todos].
func (l *Lazy) GetTodos(ctx context.Context, key string) (TodoList, error) {
	s, err := l.get(ctx)
	if err != nil {
		return TodoList{}, err
	}
	return s.GetTodos(ctx, key)
}

// Send implements [Mailboxes].
func (l *Lazy) Send(ctx context.Context, from string, to []string, text string) ([]Message, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Send(ctx, from, to, text)
}

// Pending implements [Mailboxes].
func (l *Lazy) Pending(ctx context.Context, mailbox string, limit int) ([]Message, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Pending(ctx, mailbox, limit)
}

// Ack implements [Mailboxes].
func (l *Lazy) Ack(ctx context.Context, mailbox string, seq int64) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return s.Ack(ctx, mailbox, seq)
}

// Wait implements [Mailboxes].
func (l *Lazy) Wait(ctx context.Context, mailbox string, after int64) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return s.Wait(ctx, mailbox, after)
}

// CreateTeam implements [Teams].
func (l *Lazy) CreateTeam(ctx context.Context, t Team) (Team, error) {
	s, err := l.get(ctx)
	if err != nil {
		return Team{}, err
	}
	return s.CreateTeam(ctx, t)
}

// GetTeam implements [Teams].
func (l *Lazy) GetTeam(ctx context.Context, name string) (Team, error) {
	s, err := l.get(ctx)
	if err != nil {
		return Team{}, err
	}
	return s.GetTeam(ctx, name)
}

// ListTeams implements [Teams].
func (l *Lazy) ListTeams(ctx context.Context) ([]Team, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.ListTeams(ctx)
}

// AddMember implements [Teams].
func (l *Lazy) AddMember(ctx context.Context, team string, m Member) (Team, error) {
	s, err := l.get(ctx)
	if err != nil {
		return Team{}, err
	}
	return s.AddMember(ctx, team, m)
}

// SetMemberStatus implements [Teams].
func (l *Lazy) SetMemberStatus(ctx context.Context, team, member string, st MemberStatus, note string) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return s.SetMemberStatus(ctx, team, member, st, note)
}

// DeleteTeam implements [Teams].
func (l *Lazy) DeleteTeam(ctx context.Context, name string) (Team, error) {
	s, err := l.get(ctx)
	if err != nil {
		return Team{}, err
	}
	return s.DeleteTeam(ctx, name)
}
