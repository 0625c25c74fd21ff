package store

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Memory is the in-memory [Store]. The zero value is ready to use; it is
// safe for concurrent use and holds everything until the process ends.
type Memory struct {
	// Now is the clock (nil = time.Now).
	Now func() time.Time

	mu     sync.Mutex
	closed bool
	lists  map[string]*memList
	todos  map[string]TodoList
	boxes  map[string][]Message // unacked messages, in order
	seq    int64
	teams  map[string]Team
	signal signal
}

type memList struct {
	next  int64
	tasks map[string]Task
	edges []edge
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store (the same as new(Memory)).
func NewMemory() *Memory { return &Memory{} }

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now().UTC()
	}
	return time.Now().UTC()
}

// lock takes the lock and reports ErrClosed.
func (m *Memory) lock() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// Close implements [Store]; later calls fail with [ErrClosed].
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.signal.broadcast()
	return nil
}

func (m *Memory) list(name string) *memList {
	if m.lists == nil {
		m.lists = map[string]*memList{}
	}
	l := m.lists[name]
	if l == nil {
		l = &memList{tasks: map[string]Task{}}
		m.lists[name] = l
	}
	return l
}

// cloneMeta copies metadata the way a database would store it: through
// JSON, so both implementations give the same types back.
func cloneMeta(meta map[string]any) (map[string]any, error) {
	if len(meta) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, errorsf(ErrInvalid, "metadata is not JSON: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, errorsf(ErrInvalid, "metadata is not JSON: %v", err)
	}
	return out, nil
}

func cloneTask(t Task) Task {
	t.Blocks = slices.Clone(t.Blocks)
	t.BlockedBy = slices.Clone(t.BlockedBy)
	t.Metadata, _ = cloneMeta(t.Metadata)
	return t
}

// withEdges fills Blocks and BlockedBy from the list's edges.
func (l *memList) withEdges(t Task) Task {
	t = cloneTask(t)
	t.Blocks, t.BlockedBy = nil, nil
	for _, e := range l.edges {
		if e.From == t.ID {
			t.Blocks = append(t.Blocks, e.To)
		}
		if e.To == t.ID {
			t.BlockedBy = append(t.BlockedBy, e.From)
		}
	}
	slices.SortFunc(t.Blocks, idLess)
	slices.SortFunc(t.BlockedBy, idLess)
	return t
}

// CreateTask implements [Tasks].
func (m *Memory) CreateTask(ctx context.Context, list string, nt NewTask) (Task, error) {
	if err := checkKey("task list", list); err != nil {
		return Task{}, err
	}
	if err := checkNewTask(nt); err != nil {
		return Task{}, err
	}
	meta, err := cloneMeta(nt.Metadata)
	if err != nil {
		return Task{}, err
	}
	if err := m.lock(); err != nil {
		return Task{}, err
	}
	defer m.mu.Unlock()
	l := m.list(list)
	l.next++
	now := m.now()
	t := Task{
		ID: strconv.FormatInt(l.next, 10), Subject: nt.Subject, Description: nt.Description, ActiveForm: nt.ActiveForm,
		Status: TaskPending, Metadata: meta, Version: 1, CreatedAt: now, UpdatedAt: now,
	}
	l.tasks[t.ID] = t
	return l.withEdges(t), nil
}

// GetTask implements [Tasks].
func (m *Memory) GetTask(ctx context.Context, list, id string) (Task, error) {
	if err := m.lock(); err != nil {
		return Task{}, err
	}
	defer m.mu.Unlock()
	l, t, err := m.task(list, id)
	if err != nil {
		return Task{}, err
	}
	return l.withEdges(t), nil
}

// task finds a task; callers hold the lock.
func (m *Memory) task(list, id string) (*memList, Task, error) {
	l := m.lists[list]
	if l == nil {
		return nil, Task{}, errorsf(ErrNotFound, "task %s", id)
	}
	t, ok := l.tasks[id]
	if !ok {
		return nil, Task{}, errorsf(ErrNotFound, "task %s", id)
	}
	return l, t, nil
}

// ListTasks implements [Tasks].
func (m *Memory) ListTasks(ctx context.Context, list string) ([]Task, error) {
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	l := m.lists[list]
	if l == nil {
		return nil, nil
	}
	var out []Task
	for _, t := range l.tasks {
		if t.Status != TaskDeleted {
			out = append(out, l.withEdges(t))
		}
	}
	slices.SortFunc(out, func(a, b Task) int { return idLess(a.ID, b.ID) })
	return out, nil
}

// UpdateTask implements [Tasks].
func (m *Memory) UpdateTask(ctx context.Context, list, id string, p TaskPatch) (Task, error) {
	if err := m.lock(); err != nil {
		return Task{}, err
	}
	defer m.mu.Unlock()
	l, t, err := m.task(list, id)
	if err != nil {
		return Task{}, err
	}
	if p.IfVersion != 0 && p.IfVersion != t.Version {
		return Task{}, errorsf(ErrVersion, "task %s is at version %d, not %d", id, t.Version, p.IfVersion)
	}
	t = cloneTask(t)
	if err := applyPatch(&t, p); err != nil {
		return Task{}, err
	}
	if p.Metadata != nil {
		if _, err := cloneMeta(t.Metadata); err != nil {
			return Task{}, err
		}
	}
	fresh, err := checkEdges(l.edges, patchEdges(id, p), func(x string) bool { _, ok := l.tasks[x]; return ok })
	if err != nil {
		return Task{}, err
	}
	l.edges = append(l.edges, fresh...)
	t.Version++
	t.UpdatedAt = m.now()
	l.tasks[id] = t
	return l.withEdges(t), nil
}

// ClaimTask implements [Tasks].
func (m *Memory) ClaimTask(ctx context.Context, list, id, owner string) (Task, error) {
	if err := checkKey("owner", owner); err != nil {
		return Task{}, err
	}
	if err := m.lock(); err != nil {
		return Task{}, err
	}
	defer m.mu.Unlock()
	l, t, err := m.task(list, id)
	if err != nil {
		return Task{}, err
	}
	t = l.withEdges(t)
	if err := claimCheck(t, owner, func(x string) bool { return !l.tasks[x].Open() }); err != nil {
		return Task{}, err
	}
	t.Owner, t.Status = owner, TaskInProgress
	t.Version++
	t.UpdatedAt = m.now()
	l.tasks[id] = t
	return t, nil
}

// claimCheck is the claim rule shared by the implementations.
func claimCheck(t Task, owner string, done func(string) bool) error {
	if t.Owner != "" && t.Owner != owner {
		return errorsf(ErrClaimed, "task %s is owned by %s", t.ID, t.Owner)
	}
	if t.Status != TaskPending {
		return errorsf(ErrNotClaimable, "task %s is %s", t.ID, t.Status)
	}
	for _, b := range t.BlockedBy {
		if !done(b) {
			return errorsf(ErrNotClaimable, "task %s is blocked by task %s", t.ID, b)
		}
	}
	return nil
}

// SetTodos implements [Todos].
func (m *Memory) SetTodos(ctx context.Context, key string, items []Todo) error {
	if err := checkTodos(key, items); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if m.todos == nil {
		m.todos = map[string]TodoList{}
	}
	m.todos[key] = TodoList{Items: slices.Clone(items), UpdatedAt: m.now()}
	return nil
}

func checkTodos(key string, items []Todo) error {
	if err := checkKey("todo list", key); err != nil {
		return err
	}
	if len(items) > MaxTodos {
		return errorsf(ErrInvalid, "%d todos (at most %d)", len(items), MaxTodos)
	}
	for i, t := range items {
		if err := checkText("todo "+strconv.Itoa(i+1), t.Content+t.ActiveForm, MaxTextLen); err != nil {
			return err
		}
	}
	return ValidateTodos(items)
}

// GetTodos implements [Todos].
func (m *Memory) GetTodos(ctx context.Context, key string) (TodoList, error) {
	if err := m.lock(); err != nil {
		return TodoList{}, err
	}
	defer m.mu.Unlock()
	l := m.todos[key]
	l.Items = slices.Clone(l.Items)
	return l, nil
}

// Send implements [Mailboxes].
func (m *Memory) Send(ctx context.Context, from string, to []string, text string) ([]Message, error) {
	if err := checkSend(from, to, text); err != nil {
		return nil, err
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	if m.boxes == nil {
		m.boxes = map[string][]Message{}
	}
	now := m.now()
	out := make([]Message, 0, len(to))
	for _, box := range to {
		m.seq++
		msg := Message{Seq: m.seq, Mailbox: box, From: from, Text: text, SentAt: now}
		m.boxes[box] = append(m.boxes[box], msg)
		out = append(out, msg)
	}
	m.signal.broadcast()
	return out, nil
}

func checkSend(from string, to []string, text string) error {
	if err := checkKey("sender", from); err != nil {
		return err
	}
	if len(to) == 0 {
		return errorsf(ErrInvalid, "no recipient")
	}
	for _, box := range to {
		if err := checkKey("mailbox", box); err != nil {
			return err
		}
	}
	if text == "" {
		return errorsf(ErrInvalid, "message is empty")
	}
	return checkText("message", text, MaxTextLen)
}

// Pending implements [Mailboxes].
func (m *Memory) Pending(ctx context.Context, mailbox string, limit int) ([]Message, error) {
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	msgs := m.boxes[mailbox]
	if limit > 0 && len(msgs) > limit {
		msgs = msgs[:limit]
	}
	return slices.Clone(msgs), nil
}

// Ack implements [Mailboxes].
func (m *Memory) Ack(ctx context.Context, mailbox string, seq int64) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	msgs := m.boxes[mailbox]
	i := 0
	for i < len(msgs) && msgs[i].Seq <= seq {
		i++
	}
	m.boxes[mailbox] = slices.Clone(msgs[i:])
	return nil
}

// Wait implements [Mailboxes].
func (m *Memory) Wait(ctx context.Context, mailbox string, after int64) error {
	for {
		if err := m.lock(); err != nil {
			return err
		}
		ch := m.signal.wait()
		msgs := m.boxes[mailbox]
		has := len(msgs) > 0 && msgs[len(msgs)-1].Seq > after
		m.mu.Unlock()
		if has {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// CreateTeam implements [Teams].
func (m *Memory) CreateTeam(ctx context.Context, t Team) (Team, error) {
	if err := checkTeam(t); err != nil {
		return Team{}, err
	}
	if err := m.lock(); err != nil {
		return Team{}, err
	}
	defer m.mu.Unlock()
	if old, ok := m.teams[t.Name]; ok && old.Active() {
		return Team{}, errorsf(ErrExists, "team %s", t.Name)
	}
	if m.teams == nil {
		m.teams = map[string]Team{}
	}
	t = newTeam(t, m.now())
	m.teams[t.Name] = t
	return cloneTeam(t), nil
}

// newTeam fills the defaults of a team being created.
func newTeam(t Team, now time.Time) Team {
	t = cloneTeam(t)
	t.CreatedAt, t.DeletedAt = now, time.Time{}
	if t.TaskList == "" {
		t.TaskList = "team/" + t.Name
	}
	for i := range t.Members {
		if t.Members[i].Status == "" {
			t.Members[i].Status = MemberStarting
		}
		t.Members[i].UpdatedAt = now
	}
	return t
}

func cloneTeam(t Team) Team {
	t.Members = slices.Clone(t.Members)
	return t
}

// GetTeam implements [Teams].
func (m *Memory) GetTeam(ctx context.Context, name string) (Team, error) {
	if err := m.lock(); err != nil {
		return Team{}, err
	}
	defer m.mu.Unlock()
	t, ok := m.teams[name]
	if !ok {
		return Team{}, errorsf(ErrNotFound, "team %s", name)
	}
	return cloneTeam(t), nil
}

// ListTeams implements [Teams].
func (m *Memory) ListTeams(ctx context.Context) ([]Team, error) {
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	var out []Team
	for _, t := range m.teams {
		out = append(out, cloneTeam(t))
	}
	slices.SortFunc(out, func(a, b Team) int { return compareStrings(a.Name, b.Name) })
	return out, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// AddMember implements [Teams].
func (m *Memory) AddMember(ctx context.Context, team string, mb Member) (Team, error) {
	if err := m.lock(); err != nil {
		return Team{}, err
	}
	defer m.mu.Unlock()
	t, ok := m.teams[team]
	if !ok {
		return Team{}, errorsf(ErrNotFound, "team %s", team)
	}
	mb, err := addMember(t, mb, m.now())
	if err != nil {
		return Team{}, err
	}
	t = cloneTeam(t)
	t.Members = append(t.Members, mb)
	m.teams[team] = t
	return cloneTeam(t), nil
}

// SetMemberStatus implements [Teams].
func (m *Memory) SetMemberStatus(ctx context.Context, team, member string, s MemberStatus, note string) error {
	if err := checkText("note", note, MaxTextLen); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	t, ok := m.teams[team]
	if !ok {
		return errorsf(ErrNotFound, "team %s", team)
	}
	t = cloneTeam(t)
	for i := range t.Members {
		if t.Members[i].Name == member {
			t.Members[i].Status, t.Members[i].Note, t.Members[i].UpdatedAt = s, note, m.now()
			m.teams[team] = t
			return nil
		}
	}
	return errorsf(ErrNotFound, "member %s of team %s", member, team)
}

// DeleteTeam implements [Teams].
func (m *Memory) DeleteTeam(ctx context.Context, name string) (Team, error) {
	if err := m.lock(); err != nil {
		return Team{}, err
	}
	defer m.mu.Unlock()
	t, ok := m.teams[name]
	if !ok {
		return Team{}, errorsf(ErrNotFound, "team %s", name)
	}
	t = cloneTeam(t)
	now := m.now()
	if t.DeletedAt.IsZero() {
		t.DeletedAt = now
	}
	for i := range t.Members {
		if t.Members[i].Status != MemberStopped && t.Members[i].Status != MemberFailed {
			t.Members[i].Status, t.Members[i].UpdatedAt = MemberStopped, now
		}
	}
	m.teams[name] = t
	return cloneTeam(t), nil
}

// signal is a broadcast: wait returns a channel closed at the next
// broadcast. The zero value is ready; callers serialise access.
type signal struct{ ch chan struct{} }

func (s *signal) wait() <-chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) broadcast() {
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}
