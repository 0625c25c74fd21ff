package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// Defaults of [SQLiteOptions].
const (
	DefaultBusyTimeout  = 5 * time.Second
	DefaultPollInterval = 250 * time.Millisecond
)

// SQLiteOptions configure [OpenSQLite]. The zero value is ready to use.
type SQLiteOptions struct {
	// BusyTimeout is how long a write waits for another process's write
	// to finish before failing (default 5 s).
	BusyTimeout time.Duration
	// PollInterval is how often [SQLite.Wait] looks for messages sent by
	// other processes (default 250 ms; messages sent through the same
	// *SQLite wake waiters at once).
	PollInterval time.Duration
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// SQLite is the durable [Store] on one SQLite database file, in WAL mode
// (readers never wait for the writer). Several processes may open the same
// file. Create it with [OpenSQLite]; it is safe for concurrent use.
type SQLite struct {
	db *sql.DB
	// lease is a connection of its own for lease renewals: they go on
	// while this process's other writes queue (see RenewLeases).
	lease *sql.DB
	path  string
	opts  SQLiteOptions
	// wmu serialises this process's write transactions, so that they queue
	// here instead of spinning on SQLite's busy handler; other processes
	// are kept out by SQLite's lock and the busy timeout.
	wmu chan struct{}

	pmu   sync.Mutex
	stmts map[string]*sql.Stmt // prepared hot statements

	smu    sync.Mutex
	signal signal
	done   chan struct{}
	once   sync.Once
}

var _ Store = (*SQLite)(nil)

// SchemaVersion is the schema version this package writes. A database with
// a newer version (written by a newer Gantry) is refused. It equals
// len(migrations).
const SchemaVersion = 4

// migrations[i] moves the schema from version i to i+1. Append only: a
// released migration is never edited.
var migrations = []string{
	// 1: tasks, dependencies, todos, mailboxes, teams.
	`CREATE TABLE tasks (
		list TEXT NOT NULL,
		id INTEGER NOT NULL,
		subject TEXT NOT NULL,
		description TEXT NOT NULL,
		active_form TEXT NOT NULL,
		status TEXT NOT NULL,
		owner TEXT NOT NULL,
		metadata TEXT,
		version INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (list, id)
	) WITHOUT ROWID;
	CREATE TABLE task_edges (
		list TEXT NOT NULL,
		blocker INTEGER NOT NULL,
		blocked INTEGER NOT NULL,
		PRIMARY KEY (list, blocker, blocked)
	) WITHOUT ROWID;
	CREATE TABLE todos (
		key TEXT PRIMARY KEY,
		items TEXT NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE TABLE messages (
		seq INTEGER PRIMARY KEY AUTOINCREMENT,
		mailbox TEXT NOT NULL,
		sender TEXT NOT NULL,
		body TEXT NOT NULL,
		sent_at INTEGER NOT NULL
	);
	CREATE INDEX messages_mailbox ON messages (mailbox, seq);
	CREATE TABLE teams (
		name TEXT PRIMARY KEY,
		description TEXT NOT NULL,
		lead TEXT NOT NULL,
		task_list TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		deleted_at INTEGER NOT NULL
	);
	CREATE TABLE team_members (
		team TEXT NOT NULL,
		name TEXT NOT NULL,
		ord INTEGER NOT NULL,
		agent_type TEXT NOT NULL,
		role TEXT NOT NULL,
		status TEXT NOT NULL,
		note TEXT NOT NULL,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (team, name)
	);`,
	// 2: cron jobs and their fires, runs and their events, triggers.
	`CREATE TABLE cron_jobs (
		id TEXT PRIMARY KEY,
		next_at INTEGER NOT NULL,
		data TEXT NOT NULL
	);
	CREATE INDEX cron_jobs_next ON cron_jobs (next_at);
	CREATE TABLE cron_fires (
		job_id TEXT NOT NULL,
		scheduled_at INTEGER NOT NULL,
		owner TEXT NOT NULL,
		lease_until INTEGER NOT NULL,
		run_id TEXT NOT NULL,
		job TEXT NOT NULL,
		PRIMARY KEY (job_id, scheduled_at)
	);
	CREATE INDEX cron_fires_open ON cron_fires (lease_until) WHERE run_id = '';
	CREATE TABLE runs (
		id TEXT PRIMARY KEY,
		key TEXT UNIQUE,
		status TEXT NOT NULL,
		owner TEXT NOT NULL,
		lease_until INTEGER NOT NULL,
		origin TEXT NOT NULL,
		job_id TEXT NOT NULL,
		trigger_id TEXT NOT NULL,
		data TEXT NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE INDEX runs_created ON runs (created_at);
	CREATE INDEX runs_live ON runs (status, lease_until) WHERE status IN ('queued', 'running');
	CREATE TABLE run_events (
		run_id TEXT NOT NULL,
		seq INTEGER NOT NULL,
		type TEXT NOT NULL,
		data TEXT NOT NULL,
		PRIMARY KEY (run_id, seq)
	) WITHOUT ROWID;
	CREATE TABLE triggers (
		id TEXT PRIMARY KEY,
		name TEXT NOT NULL UNIQUE,
		data TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);`,
	// 3: the waiting state, the shared queue (unowned queued runs, the
	// serial runs of a job) and the runs of a job.
	`ALTER TABLE runs ADD COLUMN serial INTEGER NOT NULL DEFAULT 0;
	DROP INDEX runs_live;
	CREATE INDEX runs_live ON runs (status, lease_until) WHERE status IN ('queued', 'running', 'waiting');
	CREATE INDEX runs_queue ON runs (created_at) WHERE status = 'queued' AND owner = '';
	CREATE INDEX runs_job ON runs (job_id, status) WHERE job_id != '';`,
	// 4: paused cron jobs (their next_at is 0 while paused).
	`ALTER TABLE cron_jobs ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;`,
}

// OpenSQLite opens (creating if needed, with its directory) the database at
// path and migrates its schema to [SchemaVersion].
func OpenSQLite(ctx context.Context, path string, opts SQLiteOptions) (*SQLite, error) {
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if path == "" {
		return nil, errors.New("store: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	// NORMAL in WAL mode: a crashed process loses nothing committed; a
	// power cut may lose the last commits but never corrupts.
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(time.Minute)
	lease, err := sql.Open("sqlite", dsn)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	lease.SetMaxOpenConns(1)
	s := &SQLite{db: db, lease: lease, path: abs, opts: opts, done: make(chan struct{}), wmu: make(chan struct{}, 1)}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		lease.Close()
		return nil, fmt.Errorf("store: %s: %w", abs, err)
	}
	_ = os.Chmod(abs, 0o600)
	return s, nil
}

// Path returns the database file's absolute path.
func (s *SQLite) Path() string { return s.path }

// migrate brings the schema to SchemaVersion, one transaction per step.
func (s *SQLite) migrate(ctx context.Context) error {
	for {
		done := false
		err := s.write(ctx, func(tx *sql.Tx) error {
			var v int
			if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
				return err
			}
			if v > SchemaVersion {
				return fmt.Errorf("schema version %d is newer than this Gantry's %d", v, SchemaVersion)
			}
			if v == SchemaVersion {
				done = true
				return nil
			}
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migration to version %d: %w", v+1, err)
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1))
			return err
		})
		if err != nil || done {
			return err
		}
	}
}

// Close implements [Store].
func (s *SQLite) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		s.smu.Lock()
		s.signal.broadcast()
		s.smu.Unlock()
		s.pmu.Lock()
		for _, st := range s.stmts {
			st.Close()
		}
		s.stmts = nil
		s.pmu.Unlock()
		err = errors.Join(s.db.Close(), s.lease.Close())
	})
	return err
}

func (s *SQLite) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *SQLite) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now().UTC()
	}
	return time.Now().UTC()
}

// write runs fn in an immediate transaction.
func (s *SQLite) write(ctx context.Context, fn func(*sql.Tx) error) error {
	if s.closed() {
		return ErrClosed
	}
	// Waiting for this process's other writers is bounded like waiting
	// for other processes' (the busy timeout).
	t := time.NewTimer(s.opts.BusyTimeout)
	defer t.Stop()
	select {
	case s.wmu <- struct{}{}:
	case <-t.C:
		return fmt.Errorf("%w: waited %s for the database's write lock", ErrBusy, s.opts.BusyTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.wmu }()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.dbErr(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return busy(err)
	}
	return s.dbErr(tx.Commit())
}

// busy marks a locked database or a full disk as [ErrBusy].
func busy(err error) error {
	if err == nil || errors.Is(err, ErrBusy) {
		return err
	}
	msg := err.Error()
	for _, m := range []string{"SQLITE_BUSY", "database is locked", "SQLITE_FULL", "database or disk is full", "SQLITE_LOCKED"} {
		if strings.Contains(msg, m) {
			return fmt.Errorf("%w: %w", ErrBusy, err)
		}
	}
	return err
}

// QuickCheck runs SQLite's PRAGMA quick_check: it returns an error naming
// the damage when the database file is corrupt.
func (s *SQLite) QuickCheck(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return fmt.Errorf("store: %s: integrity check: %w", s.path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("store: %s: integrity check: %w", s.path, err)
		}
		if line != "ok" && len(problems) < 5 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: %s: integrity check: %w", s.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("store: %s is corrupt (%s)", s.path, strings.Join(problems, "; "))
	}
	return nil
}

// read runs fn in a read transaction (one consistent snapshot).
func (s *SQLite) read(ctx context.Context, fn func(*sql.Tx) error) error {
	if s.closed() {
		return ErrClosed
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.dbErr(err)
	}
	defer tx.Rollback()
	return fn(tx)
}

func (s *SQLite) dbErr(err error) error {
	if err == nil {
		return nil
	}
	if s.closed() {
		return ErrClosed
	}
	return fmt.Errorf("store: %w", busy(err))
}

// prep returns the prepared statement for query (prepared once per
// connection and kept), bound to tx when tx is not nil.
func (s *SQLite) prep(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	s.pmu.Lock()
	st := s.stmts[query]
	if st == nil {
		if s.closed() {
			s.pmu.Unlock()
			return nil, ErrClosed
		}
		var err error
		if st, err = s.db.PrepareContext(ctx, query); err != nil {
			s.pmu.Unlock()
			return nil, err
		}
		if s.stmts == nil {
			s.stmts = map[string]*sql.Stmt{}
		}
		s.stmts[query] = st
	}
	s.pmu.Unlock()
	if tx != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func parseID(id string) (int64, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == id
}

const taskCols = `id, subject, description, active_form, status, owner, metadata, version, created_at, updated_at`

// taskSelect reads tasks with their dependency edges in one statement (one
// consistent snapshot without an explicit transaction).
const taskSelect = `SELECT id, subject, description, active_form, status, owner, metadata, version, created_at, updated_at,
	(SELECT group_concat(blocked) FROM task_edges e WHERE e.list = t.list AND e.blocker = t.id),
	(SELECT group_concat(blocker) FROM task_edges e WHERE e.list = t.list AND e.blocked = t.id)
	FROM tasks t`

type scanner interface{ Scan(...any) error }

func scanTask(r scanner) (Task, error) {
	var t Task
	var id, created, updated int64
	var meta, blocks, blockedBy sql.NullString
	if err := r.Scan(&id, &t.Subject, &t.Description, &t.ActiveForm, &t.Status, &t.Owner, &meta, &t.Version, &created, &updated, &blocks, &blockedBy); err != nil {
		return Task{}, err
	}
	t.ID = strconv.FormatInt(id, 10)
	t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
	if meta.Valid && meta.String != "" {
		if err := json.Unmarshal([]byte(meta.String), &t.Metadata); err != nil {
			return Task{}, fmt.Errorf("task %s: bad metadata: %w", t.ID, err)
		}
	}
	t.Blocks, t.BlockedBy = idList(blocks), idList(blockedBy)
	return t, nil
}

func idList(s sql.NullString) []string {
	if !s.Valid || s.String == "" {
		return nil
	}
	out := strings.Split(s.String, ",")
	slices.SortFunc(out, idLess)
	return out
}

func metaJSON(m map[string]any) (sql.NullString, error) {
	if len(m) == 0 {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return sql.NullString{}, errorsf(ErrInvalid, "metadata is not JSON: %v", err)
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// loadEdges returns the dependency edges of a list.
func loadEdges(ctx context.Context, tx *sql.Tx, list string) ([]edge, error) {
	rows, err := tx.QueryContext(ctx, `SELECT blocker, blocked FROM task_edges WHERE list = ? ORDER BY blocker, blocked`, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []edge
	for rows.Next() {
		var a, b int64
		if err := rows.Scan(&a, &b); err != nil {
			return nil, err
		}
		out = append(out, edge{strconv.FormatInt(a, 10), strconv.FormatInt(b, 10)})
	}
	return out, rows.Err()
}

// getTask reads one task, inside tx if not nil.
func (s *SQLite) getTask(ctx context.Context, tx *sql.Tx, list, id string) (Task, error) {
	n, ok := parseID(id)
	if !ok {
		return Task{}, errorsf(ErrNotFound, "task %s", id)
	}
	st, err := s.prep(ctx, tx, taskSelect+` WHERE list = ? AND id = ?`)
	if err != nil {
		return Task{}, err
	}
	t, err := scanTask(st.QueryRowContext(ctx, list, n))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, errorsf(ErrNotFound, "task %s", id)
	}
	return t, err
}

// CreateTask implements [Tasks].
func (s *SQLite) CreateTask(ctx context.Context, list string, nt NewTask) (Task, error) {
	if err := checkKey("task list", list); err != nil {
		return Task{}, err
	}
	if err := checkNewTask(nt); err != nil {
		return Task{}, err
	}
	meta, err := metaJSON(nt.Metadata)
	if err != nil {
		return Task{}, err
	}
	var t Task
	err = s.write(ctx, func(tx *sql.Tx) error {
		var next int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM tasks WHERE list = ?`, list).Scan(&next); err != nil {
			return err
		}
		now := nanos(s.now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO tasks (list, `+taskCols+`) VALUES (?, ?, ?, ?, ?, ?, '', ?, 1, ?, ?)`,
			list, next, nt.Subject, nt.Description, nt.ActiveForm, TaskPending, meta, now, now); err != nil {
			return err
		}
		var err error
		t, err = s.getTask(ctx, tx, list, strconv.FormatInt(next, 10))
		return err
	})
	return t, err
}

// GetTask implements [Tasks].
func (s *SQLite) GetTask(ctx context.Context, list, id string) (Task, error) {
	if s.closed() {
		return Task{}, ErrClosed
	}
	t, err := s.getTask(ctx, nil, list, id)
	if errors.Is(err, ErrNotFound) {
		return Task{}, err
	}
	return t, s.dbErr(err)
}

// ListTasks implements [Tasks].
func (s *SQLite) ListTasks(ctx context.Context, list string) ([]Task, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	rows, err := s.db.QueryContext(ctx, taskSelect+` WHERE list = ? AND status != ? ORDER BY id`, list, TaskDeleted)
	if err != nil {
		return nil, s.dbErr(err)
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, s.dbErr(err)
		}
		out = append(out, t)
	}
	return out, s.dbErr(rows.Err())
}

// UpdateTask implements [Tasks].
func (s *SQLite) UpdateTask(ctx context.Context, list, id string, p TaskPatch) (Task, error) {
	var t Task
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = s.getTask(ctx, tx, list, id); err != nil {
			return err
		}
		if p.IfVersion != 0 && p.IfVersion != t.Version {
			return errorsf(ErrVersion, "task %s is at version %d, not %d", id, t.Version, p.IfVersion)
		}
		if err := applyPatch(&t, p); err != nil {
			return err
		}
		meta, err := metaJSON(t.Metadata)
		if err != nil {
			return err
		}
		t.Metadata = nil
		if meta.Valid {
			_ = json.Unmarshal([]byte(meta.String), &t.Metadata) // as it reads back
		}
		if add := patchEdges(id, p); len(add) > 0 {
			existing, err := loadEdges(ctx, tx, list)
			if err != nil {
				return err
			}
			var exErr error
			fresh, err := checkEdges(existing, add, func(x string) bool {
				n, ok := parseID(x)
				if !ok {
					return false
				}
				var one int
				err := tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE list = ? AND id = ?`, list, n).Scan(&one)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					exErr = err
				}
				return err == nil
			})
			if exErr != nil {
				return exErr
			}
			if err != nil {
				return err
			}
			for _, e := range fresh {
				a, _ := parseID(e.From)
				b, _ := parseID(e.To)
				if _, err := tx.ExecContext(ctx, `INSERT INTO task_edges (list, blocker, blocked) VALUES (?, ?, ?)`, list, a, b); err != nil {
					return err
				}
			}
		}
		n, _ := parseID(id)
		t.Version++
		t.UpdatedAt = s.now()
		upd, err := s.prep(ctx, tx, `UPDATE tasks SET subject = ?, description = ?, active_form = ?, status = ?, owner = ?, metadata = ?, version = ?, updated_at = ? WHERE list = ? AND id = ?`)
		if err != nil {
			return err
		}
		if _, err := upd.ExecContext(ctx,
			t.Subject, t.Description, t.ActiveForm, t.Status, t.Owner, meta, t.Version, nanos(t.UpdatedAt), list, n); err != nil {
			return err
		}
		if len(p.AddBlocks)+len(p.AddBlockedBy) > 0 {
			after, err := s.getTask(ctx, tx, list, id)
			t.Blocks, t.BlockedBy = after.Blocks, after.BlockedBy
			return err
		}
		return nil
	})
	return t, err
}

// ClaimTask implements [Tasks].
func (s *SQLite) ClaimTask(ctx context.Context, list, id, owner string) (Task, error) {
	if err := checkKey("owner", owner); err != nil {
		return Task{}, err
	}
	var t Task
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = s.getTask(ctx, tx, list, id); err != nil {
			return err
		}
		var qerr error
		done := func(x string) bool {
			n, _ := parseID(x)
			var st TaskStatus
			if err := tx.QueryRowContext(ctx, `SELECT status FROM tasks WHERE list = ? AND id = ?`, list, n).Scan(&st); err != nil {
				if !errors.Is(err, sql.ErrNoRows) {
					qerr = err
				}
				return true
			}
			return st == TaskCompleted || st == TaskDeleted
		}
		err = claimCheck(t, owner, done)
		if qerr != nil {
			return qerr
		}
		if err != nil {
			return err
		}
		n, _ := parseID(id)
		t.Owner, t.Status = owner, TaskInProgress
		t.Version++
		t.UpdatedAt = s.now()
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET owner = ?, status = ?, version = ?, updated_at = ? WHERE list = ? AND id = ?`,
			t.Owner, t.Status, t.Version, nanos(t.UpdatedAt), list, n)
		return err
	})
	return t, err
}

// SetTodos implements [Todos].
func (s *SQLite) SetTodos(ctx context.Context, key string, items []Todo) error {
	if err := checkTodos(key, items); err != nil {
		return err
	}
	if items == nil {
		items = []Todo{}
	}
	b, err := json.Marshal(items)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO todos (key, items, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET items = excluded.items, updated_at = excluded.updated_at`, key, string(b), nanos(s.now()))
		return err
	})
}

// GetTodos implements [Todos].
func (s *SQLite) GetTodos(ctx context.Context, key string) (TodoList, error) {
	if s.closed() {
		return TodoList{}, ErrClosed
	}
	var items string
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT items, updated_at FROM todos WHERE key = ?`, key).Scan(&items, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return TodoList{}, nil
	}
	if err != nil {
		return TodoList{}, s.dbErr(err)
	}
	l := TodoList{UpdatedAt: fromNanos(at)}
	if err := json.Unmarshal([]byte(items), &l.Items); err != nil {
		return TodoList{}, fmt.Errorf("store: todo list %s: %w", key, err)
	}
	if len(l.Items) == 0 {
		l.Items = nil
	}
	return l, nil
}

// Send implements [Mailboxes].
func (s *SQLite) Send(ctx context.Context, from string, to []string, text string) ([]Message, error) {
	if err := checkSend(from, to, text); err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(to))
	err := s.write(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		now := s.now()
		stmt, err := s.prep(ctx, tx, `INSERT INTO messages (mailbox, sender, body, sent_at) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		for _, box := range to {
			r, err := stmt.ExecContext(ctx, box, from, text, nanos(now))
			if err != nil {
				return err
			}
			seq, err := r.LastInsertId()
			if err != nil {
				return err
			}
			out = append(out, Message{Seq: seq, Mailbox: box, From: from, Text: text, SentAt: now})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.smu.Lock()
	s.signal.broadcast()
	s.smu.Unlock()
	return out, nil
}

// Pending implements [Mailboxes].
func (s *SQLite) Pending(ctx context.Context, mailbox string, limit int) ([]Message, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if limit <= 0 {
		limit = -1
	}
	st, err := s.prep(ctx, nil, `SELECT seq, sender, body, sent_at FROM messages WHERE mailbox = ? ORDER BY seq LIMIT ?`)
	if err != nil {
		return nil, s.dbErr(err)
	}
	rows, err := st.QueryContext(ctx, mailbox, limit)
	if err != nil {
		return nil, s.dbErr(err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m := Message{Mailbox: mailbox}
		var at int64
		if err := rows.Scan(&m.Seq, &m.From, &m.Text, &at); err != nil {
			return nil, s.dbErr(err)
		}
		m.SentAt = fromNanos(at)
		out = append(out, m)
	}
	return out, s.dbErr(rows.Err())
}

// Ack implements [Mailboxes].
func (s *SQLite) Ack(ctx context.Context, mailbox string, seq int64) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		st, err := s.prep(ctx, tx, `DELETE FROM messages WHERE mailbox = ? AND seq <= ?`)
		if err != nil {
			return err
		}
		_, err = st.ExecContext(ctx, mailbox, seq)
		return err
	})
}

// Wait implements [Mailboxes]. Messages sent through s wake it at once;
// messages sent by other processes are seen within the poll interval.
func (s *SQLite) Wait(ctx context.Context, mailbox string, after int64) error {
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	for {
		s.smu.Lock()
		ch := s.signal.wait()
		s.smu.Unlock()
		if s.closed() {
			return ErrClosed
		}
		var one int
		err := s.db.QueryRowContext(ctx, `SELECT 1 FROM messages WHERE mailbox = ? AND seq > ? LIMIT 1`, mailbox, after).Scan(&one)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return s.dbErr(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-t.C:
		}
	}
}

func getTeam(ctx context.Context, tx *sql.Tx, name string) (Team, error) {
	var t Team
	var created, deleted int64
	err := tx.QueryRowContext(ctx, `SELECT name, description, lead, task_list, created_at, deleted_at FROM teams WHERE name = ?`, name).
		Scan(&t.Name, &t.Description, &t.Lead, &t.TaskList, &created, &deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return Team{}, errorsf(ErrNotFound, "team %s", name)
	}
	if err != nil {
		return Team{}, err
	}
	t.CreatedAt, t.DeletedAt = fromNanos(created), fromNanos(deleted)
	rows, err := tx.QueryContext(ctx, `SELECT name, agent_type, role, status, note, updated_at FROM team_members WHERE team = ? ORDER BY ord`, name)
	if err != nil {
		return Team{}, err
	}
	defer rows.Close()
	t.Members = []Member{}
	for rows.Next() {
		var m Member
		var at int64
		if err := rows.Scan(&m.Name, &m.AgentType, &m.Role, &m.Status, &m.Note, &at); err != nil {
			return Team{}, err
		}
		m.UpdatedAt = fromNanos(at)
		t.Members = append(t.Members, m)
	}
	return t, rows.Err()
}

// CreateTeam implements [Teams].
func (s *SQLite) CreateTeam(ctx context.Context, t Team) (Team, error) {
	if err := checkTeam(t); err != nil {
		return Team{}, err
	}
	t = newTeam(t, s.now())
	var out Team
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := getTeam(ctx, tx, t.Name)
		switch {
		case err == nil && old.Active():
			return errorsf(ErrExists, "team %s", t.Name)
		case err == nil:
			if _, err := tx.ExecContext(ctx, `DELETE FROM team_members WHERE team = ?`, t.Name); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM teams WHERE name = ?`, t.Name); err != nil {
				return err
			}
		case !errors.Is(err, ErrNotFound):
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO teams (name, description, lead, task_list, created_at, deleted_at) VALUES (?, ?, ?, ?, ?, 0)`,
			t.Name, t.Description, t.Lead, t.TaskList, nanos(t.CreatedAt)); err != nil {
			return err
		}
		for i, m := range t.Members {
			if _, err := tx.ExecContext(ctx, `INSERT INTO team_members (team, name, ord, agent_type, role, status, note, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				t.Name, m.Name, i, m.AgentType, m.Role, m.Status, m.Note, nanos(m.UpdatedAt)); err != nil {
				return err
			}
		}
		out, err = getTeam(ctx, tx, t.Name)
		return err
	})
	return out, err
}

// GetTeam implements [Teams].
func (s *SQLite) GetTeam(ctx context.Context, name string) (Team, error) {
	var t Team
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		t, err = getTeam(ctx, tx, name)
		return err
	})
	return t, err
}

// ListTeams implements [Teams].
func (s *SQLite) ListTeams(ctx context.Context) ([]Team, error) {
	var out []Team
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT name FROM teams ORDER BY name`)
		if err != nil {
			return err
		}
		var names []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			names = append(names, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, n := range names {
			t, err := getTeam(ctx, tx, n)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return nil
	})
	return out, err
}

// AddMember implements [Teams].
func (s *SQLite) AddMember(ctx context.Context, team string, m Member) (Team, error) {
	var out Team
	err := s.write(ctx, func(tx *sql.Tx) error {
		t, err := getTeam(ctx, tx, team)
		if err != nil {
			return err
		}
		if m, err = addMember(t, m, s.now()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO team_members (team, name, ord, agent_type, role, status, note, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			team, m.Name, len(t.Members), m.AgentType, m.Role, m.Status, m.Note, nanos(m.UpdatedAt)); err != nil {
			return err
		}
		out, err = getTeam(ctx, tx, team)
		return err
	})
	return out, err
}

// SetMemberStatus implements [Teams].
func (s *SQLite) SetMemberStatus(ctx context.Context, team, member string, st MemberStatus, note string) error {
	if err := checkText("note", note, MaxTextLen); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE team_members SET status = ?, note = ?, updated_at = ? WHERE team = ? AND name = ?`,
			st, note, nanos(s.now()), team, member)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			if _, err := getTeam(ctx, tx, team); err != nil {
				return err
			}
			return errorsf(ErrNotFound, "member %s of team %s", member, team)
		}
		return nil
	})
}

// DeleteTeam implements [Teams].
func (s *SQLite) DeleteTeam(ctx context.Context, name string) (Team, error) {
	var t Team
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = getTeam(ctx, tx, name); err != nil {
			return err
		}
		now := nanos(s.now())
		if t.Active() {
			if _, err := tx.ExecContext(ctx, `UPDATE teams SET deleted_at = ? WHERE name = ?`, now, name); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE team_members SET status = ?, updated_at = ? WHERE team = ? AND status NOT IN (?, ?)`,
			MemberStopped, now, name, MemberStopped, MemberFailed); err != nil {
			return err
		}
		t, err = getTeam(ctx, tx, name)
		return err
	})
	return t, err
}
