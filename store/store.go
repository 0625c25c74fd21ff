// Package store is Gantry's embedded persistence: the shared task list, the
// todo lists, the mailboxes agents message each other through, and team
// records (cron jobs and triggers will join them), each behind a small
// interface.
//
// Two implementations meet the same contract (the conformance suite in
// [github.com/gantry-dev/gantry/store/storetest] runs against both):
//
//   - [Memory], the in-memory store: the zero value is ready to use and is
//     what the library falls back to when a program configures no store.
//   - [SQLite], a durable store on pure-Go SQLite (modernc.org/sqlite) in
//     WAL mode with a busy timeout, versioned schema and migrations; several
//     processes may share one database file. [Lazy] defers opening it until
//     the first call, so a run that never uses the store never pays for it.
//
// Every write is one transaction: concurrent writers never lose an update,
// and a process killed in the middle of a write leaves the database in the
// state before or after it. Keys are plain strings chosen by the caller:
// a task list is usually named after the lead session or the team, a todo
// list after the session (or agent) that owns it, a mailbox after its
// recipient.
package store

import (
	"context"
	"errors"
	"time"
)

// Errors callers branch on. Implementations wrap them with detail (test with
// errors.Is).
var (
	// ErrNotFound: no task, team or member with that id or name.
	ErrNotFound = errors.New("not found")
	// ErrExists: a team with that name exists already.
	ErrExists = errors.New("already exists")
	// ErrVersion: the task changed since the version the caller read
	// (optimistic concurrency; read it again and retry).
	ErrVersion = errors.New("version mismatch")
	// ErrCycle: the dependency would make a task (transitively) block itself.
	ErrCycle = errors.New("dependency cycle")
	// ErrClaimed: the task is owned by someone else.
	ErrClaimed = errors.New("task already claimed")
	// ErrNotClaimable: the task is not pending, or is blocked by an
	// unfinished task.
	ErrNotClaimable = errors.New("task not claimable")
	// ErrInvalid: the input breaks the contract (empty subject, unknown
	// status, two todos in progress, …).
	ErrInvalid = errors.New("invalid input")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store closed")
	// ErrBusy: the database is locked by another process beyond the busy
	// timeout, or its disk is full; trying again later may succeed.
	ErrBusy = errors.New("store busy")
	// ErrOverlap: a new run of a job refused by its [RunGuard] (another
	// run of the job is live, or the job has enough runs queued).
	ErrOverlap = errors.New("overlapping run of a job")
)

// Store is every concern in one value, as the implementations provide it.
// Tools ask their environment for the single interface they need.
type Store interface {
	Tasks
	Todos
	Mailboxes
	Teams
	// Close releases the store. Calls after Close fail with [ErrClosed].
	Close() error
}

// TaskStatus is a task's state.
type TaskStatus string

// Task states.
const (
	TaskPending    TaskStatus = "pending"
	TaskInProgress TaskStatus = "in_progress"
	TaskCompleted  TaskStatus = "completed"
	// TaskDeleted hides a task from listings; its record is kept.
	TaskDeleted TaskStatus = "deleted"
)

// Valid reports whether s is one of the four states.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskPending, TaskInProgress, TaskCompleted, TaskDeleted:
		return true
	}
	return false
}

// Task is one entry of a shared task list.
type Task struct {
	// ID is assigned by the store: "1", "2", … within the list.
	ID      string `json:"id"`
	Subject string `json:"subject"`
	// Description says what needs doing; ActiveForm is the present-
	// continuous line shown while it runs ("Running the tests").
	Description string     `json:"description"`
	ActiveForm  string     `json:"activeForm,omitempty"`
	Status      TaskStatus `json:"status"`
	// Owner is the agent working on it ("" = unowned).
	Owner string `json:"owner,omitempty"`
	// Blocks are the tasks waiting for this one; BlockedBy the tasks this
	// one waits for. Both sides are kept consistent by the store.
	Blocks    []string       `json:"blocks,omitempty"`
	BlockedBy []string       `json:"blockedBy,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Version starts at 1 and grows by one with every update.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Open reports whether t still counts as work: neither completed nor
// deleted.
func (t Task) Open() bool { return t.Status == TaskPending || t.Status == TaskInProgress }

// NewTask is the input of [Tasks.CreateTask].
type NewTask struct {
	Subject     string
	Description string
	ActiveForm  string
	Metadata    map[string]any
}

// TaskPatch changes a task. Nil fields are left as they are.
type TaskPatch struct {
	Subject, Description, ActiveForm *string
	Status                           *TaskStatus
	// Owner sets the owner ("" clears it).
	Owner *string
	// AddBlocks and AddBlockedBy add dependency edges (ids in the same
	// list); an edge that would close a cycle fails with [ErrCycle].
	AddBlocks, AddBlockedBy []string
	// Metadata is merged into the task's: a key with a nil value is removed.
	Metadata map[string]any
	// IfVersion, when non-zero, makes the update fail with [ErrVersion]
	// unless the task is at exactly that version.
	IfVersion int64
}

// Tasks is a set of named task lists shared by a session, its subagents and
// its team.
type Tasks interface {
	// CreateTask adds a pending task to list and returns it.
	CreateTask(ctx context.Context, list string, t NewTask) (Task, error)
	// GetTask returns one task (deleted ones too).
	GetTask(ctx context.Context, list, id string) (Task, error)
	// ListTasks returns the list's tasks except deleted ones, by id.
	ListTasks(ctx context.Context, list string) ([]Task, error)
	// UpdateTask applies p atomically and returns the new task.
	UpdateTask(ctx context.Context, list, id string, p TaskPatch) (Task, error)
	// ClaimTask atomically makes owner the owner of a claimable task
	// (pending, unowned or already owner's, every blocker completed or
	// deleted) and sets it in progress. It fails with [ErrClaimed] or
	// [ErrNotClaimable] otherwise; of several concurrent claims exactly one
	// wins.
	ClaimTask(ctx context.Context, list, id, owner string) (Task, error)
}

// Claimable reports whether t can be claimed in a list where done tells
// whether a task id is completed or deleted.
func Claimable(t Task, done func(id string) bool) bool {
	if t.Status != TaskPending || t.Owner != "" {
		return false
	}
	for _, b := range t.BlockedBy {
		if !done(b) {
			return false
		}
	}
	return true
}

// TodoStatus is a todo item's state.
type TodoStatus string

// Todo states.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoCompleted  TodoStatus = "completed"
)

// Todo is one item of a todo list.
type Todo struct {
	Content    string     `json:"content"`
	Status     TodoStatus `json:"status"`
	ActiveForm string     `json:"activeForm"`
}

// TodoList is a stored todo list.
type TodoList struct {
	Items []Todo `json:"todos"`
	// UpdatedAt is when it was last written (zero if never).
	UpdatedAt time.Time `json:"updatedAt"`
}

// ValidateTodos checks a todo list: every item has content and an active
// form and a known status, and at most one is in progress.
func ValidateTodos(items []Todo) error {
	inProgress := 0
	for i, t := range items {
		switch t.Status {
		case TodoPending, TodoCompleted:
		case TodoInProgress:
			inProgress++
		default:
			return errorsf(ErrInvalid, "todo %d: unknown status %q (want pending, in_progress or completed)", i+1, t.Status)
		}
		if t.Content == "" {
			return errorsf(ErrInvalid, "todo %d: content is empty", i+1)
		}
		if t.ActiveForm == "" {
			return errorsf(ErrInvalid, "todo %d: activeForm is empty", i+1)
		}
	}
	if inProgress > 1 {
		return errorsf(ErrInvalid, "%d todos are in_progress; at most one may be", inProgress)
	}
	return nil
}

// Todos keeps one todo list per key (a session or agent id).
type Todos interface {
	// SetTodos replaces the list whole (an empty list clears it). It
	// validates with [ValidateTodos].
	SetTodos(ctx context.Context, key string, items []Todo) error
	// GetTodos returns the list (empty, with a zero UpdatedAt, if never set).
	GetTodos(ctx context.Context, key string) (TodoList, error)
}

// Message is one message in a mailbox.
type Message struct {
	// Seq orders a mailbox's messages: it grows with every message sent to
	// that mailbox (across mailboxes it is unique but not contiguous).
	Seq     int64     `json:"seq"`
	Mailbox string    `json:"mailbox"`
	From    string    `json:"from"`
	Text    string    `json:"text"`
	SentAt  time.Time `json:"sentAt"`
}

// Mailboxes are durable, ordered queues of messages. Delivery is
// exactly-once for a consumer that acks what it has durably handled:
// [Mailboxes.Pending] returns what is not acked yet, and [Mailboxes.Ack]
// removes it; a consumer that crashes before acking gets the same messages
// again.
type Mailboxes interface {
	// Send appends one message per recipient mailbox in one transaction
	// and returns them (in the order of to).
	Send(ctx context.Context, from string, to []string, text string) ([]Message, error)
	// Pending returns up to limit unacked messages of mailbox in order
	// (limit <= 0 means all).
	Pending(ctx context.Context, mailbox string, limit int) ([]Message, error)
	// Ack marks every message of mailbox up to and including seq handled.
	Ack(ctx context.Context, mailbox string, seq int64) error
	// Wait returns when mailbox has an unacked message with a sequence
	// greater than after, or when ctx ends (with its error).
	Wait(ctx context.Context, mailbox string, after int64) error
}

// MemberStatus is a team member's state.
type MemberStatus string

// Member states.
const (
	MemberStarting MemberStatus = "starting"
	// MemberRunning: the member is working on a turn.
	MemberRunning MemberStatus = "running"
	// MemberIdle: the member finished its work and waits for a message.
	MemberIdle MemberStatus = "idle"
	// MemberStopped: the member was stopped (its team deleted).
	MemberStopped MemberStatus = "stopped"
	// MemberFailed: the member's run ended with an error.
	MemberFailed MemberStatus = "failed"
)

// Member is one agent of a team.
type Member struct {
	Name string `json:"name"`
	// AgentType is the subagent type the member runs as ("general-purpose",
	// a custom agent's name, …); Role is what it is for.
	AgentType string       `json:"agentType,omitempty"`
	Role      string       `json:"role,omitempty"`
	Status    MemberStatus `json:"status"`
	// Note is the latest detail about the status (an error, a summary).
	Note      string    `json:"note,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Team is a named group of agents led by a session.
type Team struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Lead is the lead session's id; its mailbox is named "lead".
	Lead    string   `json:"lead,omitempty"`
	Members []Member `json:"members"`
	// TaskList is the team's shared task list.
	TaskList  string    `json:"taskList"`
	CreatedAt time.Time `json:"createdAt"`
	// DeletedAt is set once the team is deleted (the record is kept).
	DeletedAt time.Time `json:"deletedAt,omitzero"`
}

// Active reports whether the team has not been deleted.
func (t Team) Active() bool { return t.DeletedAt.IsZero() }

// Member returns the member with that name.
func (t Team) Member(name string) (Member, bool) {
	for _, m := range t.Members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

// Teams keeps team records.
type Teams interface {
	// CreateTeam stores a new team; a team of that name that is still
	// active gives [ErrExists] (a deleted one is replaced).
	CreateTeam(ctx context.Context, t Team) (Team, error)
	// GetTeam returns a team, deleted or not.
	GetTeam(ctx context.Context, name string) (Team, error)
	// ListTeams returns every team by name.
	ListTeams(ctx context.Context) ([]Team, error)
	// AddMember adds m to the active team and returns the team: m's
	// status defaults to starting. A deleted team gives [ErrNotFound]; a
	// name already in the team, a reserved name or a full team (more than
	// MaxMembers) gives [ErrInvalid].
	AddMember(ctx context.Context, team string, m Member) (Team, error)
	// SetMemberStatus records a member's status and note.
	SetMemberStatus(ctx context.Context, team, member string, s MemberStatus, note string) error
	// DeleteTeam marks the team deleted and its members stopped, and
	// returns it. The record is kept.
	DeleteTeam(ctx context.Context, name string) (Team, error)
}

// Scope says where one agent stands in the shared store. Programs put it
// among a session's tool services (tool.Provide); tools that find none use
// the session's id as the task list and leave the agent unnamed.
type Scope struct {
	// TaskList is the task list the agent shares with its lead, subagents
	// and team ("" = the session's id).
	TaskList string
	// Name is the agent's name as a task owner and message sender ("" for
	// a lead without a team; team members have their member name).
	Name string
	// Team is the team the agent is a member of ("" = none).
	Team string
}

// List returns the task list of an agent with this scope in the session
// sessionID: TaskList, else the session's id, else "default".
func (s Scope) List(sessionID string) string {
	switch {
	case s.TaskList != "":
		return s.TaskList
	case sessionID != "":
		return sessionID
	}
	return "default"
}

// DefaultFile is the database file name the CLI keeps in the Gantry home
// directory ($GANTRY_HOME, default ~/.gantry).
const DefaultFile = "gantry.db"
