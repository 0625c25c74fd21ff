package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

var _ Scheduling = (*SQLite)(nil)

func checkJob(j CronJob) error {
	if err := checkKey("job id", j.ID); err != nil {
		return err
	}
	if strings.TrimSpace(j.Cron) == "" || strings.TrimSpace(j.Prompt) == "" {
		return errorsf(ErrInvalid, "a cron job needs a schedule and a prompt")
	}
	if err := checkText("prompt", j.Prompt, MaxTextLen); err != nil {
		return err
	}
	if len(j.Options) > 0 && !json.Valid(j.Options) {
		return errorsf(ErrInvalid, "job options are not JSON")
	}
	return nil
}

// CreateCronJob implements [CronJobs].
func (s *SQLite) CreateCronJob(ctx context.Context, j CronJob) (CronJob, error) {
	if j.ID == "" {
		j.ID = NewID(4)
	}
	if j.CreatedAt.IsZero() {
		j.CreatedAt = s.now()
	}
	if j.Paused {
		j.NextAt, j.NextScheduled = time.Time{}, time.Time{}
	}
	if err := checkJob(j); err != nil {
		return CronJob{}, err
	}
	data, err := json.Marshal(j)
	if err != nil {
		return CronJob{}, err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cron_jobs (id, next_at, paused, data) VALUES (?, ?, ?, ?)`, j.ID, jobNext(j), j.Paused, string(data))
		if err != nil && strings.Contains(err.Error(), "UNIQUE") {
			return errorsf(ErrExists, "cron job %s", j.ID)
		}
		return err
	})
	return j, err
}

// jobNext is the next_at column of j: 0 (never due) while paused.
func jobNext(j CronJob) int64 {
	if j.Paused {
		return 0
	}
	return nanos(j.NextAt)
}

func scanJob(r scanner) (CronJob, error) {
	var data string
	if err := r.Scan(&data); err != nil {
		return CronJob{}, err
	}
	var j CronJob
	if err := json.Unmarshal([]byte(data), &j); err != nil {
		return CronJob{}, fmt.Errorf("store: cron job: %w", err)
	}
	return j, nil
}

// GetCronJob implements [CronJobs].
func (s *SQLite) GetCronJob(ctx context.Context, id string) (CronJob, error) {
	if s.closed() {
		return CronJob{}, ErrClosed
	}
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT data FROM cron_jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return CronJob{}, errorsf(ErrNotFound, "cron job %s", id)
	}
	return j, s.dbErr(err)
}

// ListCronJobs implements [CronJobs].
func (s *SQLite) ListCronJobs(ctx context.Context) ([]CronJob, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	rows, err := s.db.QueryContext(ctx, `SELECT data FROM cron_jobs ORDER BY paused, next_at, id`)
	if err != nil {
		return nil, s.dbErr(err)
	}
	defer rows.Close()
	var out []CronJob
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, s.dbErr(err)
		}
		out = append(out, j)
	}
	return out, s.dbErr(rows.Err())
}

// DeleteCronJob implements [CronJobs].
func (s *SQLite) DeleteCronJob(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM cron_jobs WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return errorsf(ErrNotFound, "cron job %s", id)
		}
		return nil
	})
}

// PauseCronJob implements [CronJobs].
func (s *SQLite) PauseCronJob(ctx context.Context, id string, paused bool, resume func(CronJob) (CronJob, error)) (CronJob, error) {
	var out CronJob
	err := s.write(ctx, func(tx *sql.Tx) error {
		j, err := scanJob(tx.QueryRowContext(ctx, `SELECT data FROM cron_jobs WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return errorsf(ErrNotFound, "cron job %s", id)
		}
		if err != nil {
			return err
		}
		if j.Paused == paused {
			out = j
			return nil
		}
		if paused {
			j.Paused, j.NextAt, j.NextScheduled = true, time.Time{}, time.Time{}
		} else {
			if resume == nil {
				return errorsf(ErrInvalid, "resuming cron job %s needs its next fire", id)
			}
			p := j
			p.Paused = false
			if j, err = resume(p); err != nil {
				return err
			}
			j.ID, j.Paused = id, false
			if j.NextAt.IsZero() {
				return errorsf(ErrInvalid, "cron job %s has no next fire to resume at", id)
			}
		}
		if err := checkJob(j); err != nil {
			return err
		}
		data, err := json.Marshal(j)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cron_jobs SET next_at = ?, paused = ?, data = ? WHERE id = ?`, jobNext(j), j.Paused, string(data), id); err != nil {
			return err
		}
		out = j
		return nil
	})
	if err != nil {
		return CronJob{}, err
	}
	return out, nil
}

// ClaimDue implements [CronJobs].
func (s *SQLite) ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int,
	advance func(CronJob) (CronJob, bool)) ([]Fire, error) {
	if limit <= 0 {
		limit = 100
	}
	// A cheap read first: most ticks find nothing due and take no write
	// lock.
	if s.closed() {
		return nil, ErrClosed
	}
	st, err := s.prep(ctx, nil, `SELECT 1 FROM cron_jobs WHERE next_at > 0 AND next_at <= ? AND paused = 0 LIMIT 1`)
	if err != nil {
		return nil, s.dbErr(err)
	}
	var one int
	if err := st.QueryRowContext(ctx, nanos(now)).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, s.dbErr(err)
	}
	var out []Fire
	err = s.write(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `SELECT data FROM cron_jobs WHERE next_at > 0 AND next_at <= ? AND paused = 0 ORDER BY next_at LIMIT ?`, nanos(now), limit)
		if err != nil {
			return err
		}
		var due []CronJob
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return err
			}
			due = append(due, j)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, j := range due {
			next, fire := advance(j)
			if fire {
				jd, _ := json.Marshal(j)
				r, err := tx.ExecContext(ctx, `INSERT INTO cron_fires (job_id, scheduled_at, owner, lease_until, run_id, job) VALUES (?, ?, ?, ?, '', ?)
					ON CONFLICT DO NOTHING`, j.ID, nanos(j.NextScheduled), owner, nanos(leaseUntil), string(jd))
				if err != nil {
					return err
				}
				if n, _ := r.RowsAffected(); n == 1 {
					out = append(out, Fire{Job: j, Scheduled: j.NextScheduled, Owner: owner})
				}
			}
			if next.NextAt.IsZero() {
				if _, err := tx.ExecContext(ctx, `DELETE FROM cron_jobs WHERE id = ?`, j.ID); err != nil {
					return err
				}
				continue
			}
			next.ID = j.ID
			nd, err := json.Marshal(next)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE cron_jobs SET next_at = ?, data = ? WHERE id = ?`, nanos(next.NextAt), string(nd), j.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetFireRun implements [CronJobs].
func (s *SQLite) SetFireRun(ctx context.Context, jobID string, scheduled time.Time, runID string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE cron_fires SET run_id = ? WHERE job_id = ? AND scheduled_at = ?`, runID, jobID, nanos(scheduled))
		return err
	})
}

// ReapFires implements [CronJobs].
func (s *SQLite) ReapFires(ctx context.Context, now time.Time, dead func(string) bool) ([]Fire, error) {
	var out []Fire
	err := s.write(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `SELECT job_id, scheduled_at, owner, lease_until, job FROM cron_fires WHERE run_id = ''`)
		if err != nil {
			return err
		}
		type key struct {
			id string
			at int64
		}
		var lost []key
		for rows.Next() {
			var f Fire
			var at, lease int64
			var job string
			if err := rows.Scan(&f.Job.ID, &at, &f.Owner, &lease, &job); err != nil {
				rows.Close()
				return err
			}
			if lease >= nanos(now) && (dead == nil || !dead(f.Owner)) {
				continue
			}
			json.Unmarshal([]byte(job), &f.Job)
			f.Scheduled, f.RunID = fromNanos(at), RunLost
			out = append(out, f)
			lost = append(lost, key{f.Job.ID, at})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, k := range lost {
			if _, err := tx.ExecContext(ctx, `UPDATE cron_fires SET run_id = ? WHERE job_id = ? AND scheduled_at = ?`, RunLost, k.id, k.at); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

const runCols = `id, coalesce(key, ''), status, owner, lease_until, origin, job_id, trigger_id, serial, data, created_at,
	coalesce((SELECT max(seq) FROM run_events e WHERE e.run_id = runs.id), 0)`

func scanRun(r scanner) (RunRecord, error) {
	var rr RunRecord
	var lease, created int64
	var data string
	if err := r.Scan(&rr.ID, &rr.Key, &rr.Status, &rr.Owner, &lease, &rr.Origin, &rr.JobID, &rr.TriggerID, &rr.Serial, &data, &created, &rr.LastSeq); err != nil {
		return RunRecord{}, err
	}
	rr.LeaseUntil, rr.CreatedAt, rr.Data = fromNanos(lease), fromNanos(created), json.RawMessage(data)
	return rr, nil
}

// liveRuns are the states of a live run, in SQL.
const liveRuns = `('queued', 'running', 'waiting')`

func nullKey(k string) any {
	if k == "" {
		return nil
	}
	return k
}

// CreateRun implements [Runs].
func (s *SQLite) CreateRun(ctx context.Context, r RunRecord) (RunRecord, error) {
	if err := checkKey("run id", r.ID); err != nil {
		return RunRecord{}, err
	}
	if !json.Valid(r.Data) {
		return RunRecord{}, errorsf(ErrInvalid, "run %s: data is not JSON", r.ID)
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = s.now()
	}
	var existing RunRecord
	err := s.write(ctx, func(tx *sql.Tx) error {
		if r.Key != "" {
			e, err := scanRun(tx.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE key = ?`, r.Key))
			if err == nil {
				existing = e
				return errorsf(ErrExists, "a run with key %s", r.Key)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if g := r.Guard; g != nil && r.JobID != "" {
			var live, queued int
			var first string
			err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(status = ?), 0), coalesce(min(status), '') FROM runs
				WHERE job_id = ? AND job_id != '' AND status IN (?, ?, ?)`, RunQueued, r.JobID, RunQueued, RunRunning, RunWaiting).Scan(&live, &queued, &first)
			if err != nil {
				return err
			}
			if why := g.Refuses(live, queued, first); why != "" {
				return errorsf(ErrOverlap, "run of job %s: %s", r.JobID, why)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, key, status, owner, lease_until, origin, job_id, trigger_id, serial, data, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, nullKey(r.Key), r.Status, r.Owner, nanos(r.LeaseUntil), r.Origin, r.JobID, r.TriggerID,
			r.Serial, string(r.Data), nanos(r.CreatedAt))
		if err != nil && strings.Contains(err.Error(), "UNIQUE") {
			return errorsf(ErrExists, "run %s", r.ID)
		}
		return err
	})
	if errors.Is(err, ErrExists) && existing.ID != "" {
		return existing, err
	}
	return r, err
}

// UpdateRun implements [Runs].
func (s *SQLite) UpdateRun(ctx context.Context, r RunRecord) error {
	if !json.Valid(r.Data) {
		return errorsf(ErrInvalid, "run %s: data is not JSON", r.ID)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		st, err := s.prep(ctx, tx, `UPDATE runs SET status = ?, owner = ?, lease_until = ?, data = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		res, err := st.ExecContext(ctx, r.Status, r.Owner, nanos(r.LeaseUntil), string(r.Data), r.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errorsf(ErrNotFound, "run %s", r.ID)
		}
		return nil
	})
}

// GetRun implements [Runs].
func (s *SQLite) GetRun(ctx context.Context, id string) (RunRecord, error) {
	if s.closed() {
		return RunRecord{}, ErrClosed
	}
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return RunRecord{}, errorsf(ErrNotFound, "run %s", id)
	}
	return r, s.dbErr(err)
}

// ListRuns implements [Runs].
func (s *SQLite) ListRuns(ctx context.Context, f RunFilter) ([]RunRecord, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	q := `SELECT ` + runCols + ` FROM runs WHERE 1=1`
	var args []any
	if len(f.Status) > 0 {
		q += ` AND status IN (?` + strings.Repeat(`, ?`, len(f.Status)-1) + `)`
		for _, st := range f.Status {
			args = append(args, st)
		}
	}
	for _, c := range []struct{ col, v string }{{"origin", f.Origin}, {"job_id", f.JobID}, {"trigger_id", f.TriggerID}} {
		if c.v != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q += ` ORDER BY created_at DESC, rowid DESC LIMIT ?`
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.dbErr(err)
	}
	defer rows.Close()
	var out []RunRecord
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, s.dbErr(err)
		}
		out = append(out, r)
	}
	return out, s.dbErr(rows.Err())
}

// AppendRunEvents implements [Runs].
func (s *SQLite) AppendRunEvents(ctx context.Context, runID string, evs []RunEvent) error {
	if len(evs) == 0 {
		return nil
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		st, err := s.prep(ctx, tx, `INSERT INTO run_events (run_id, seq, type, data) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if _, err := st.ExecContext(ctx, runID, e.Seq, e.Type, string(e.Data)); err != nil {
				return err
			}
		}
		return nil
	})
}

// RunEvents implements [Runs].
func (s *SQLite) RunEvents(ctx context.Context, runID string, after int64, limit int) ([]RunEvent, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, type, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, runID, after, limit)
	if err != nil {
		return nil, s.dbErr(err)
	}
	defer rows.Close()
	var out []RunEvent
	for rows.Next() {
		var e RunEvent
		var data string
		if err := rows.Scan(&e.Seq, &e.Type, &data); err != nil {
			return nil, s.dbErr(err)
		}
		e.Data = json.RawMessage(data)
		out = append(out, e)
	}
	return out, s.dbErr(rows.Err())
}

// RenewLeases implements [Runs]. It uses a connection of its own and does
// not queue behind this process's other writes: a lease is renewed as long
// as the database can be written at all within the busy timeout.
func (s *SQLite) RenewLeases(ctx context.Context, owner string, until time.Time) error {
	if s.closed() {
		return ErrClosed
	}
	tx, err := s.lease.BeginTx(ctx, nil)
	if err != nil {
		return s.dbErr(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET lease_until = ? WHERE owner = ? AND status IN `+liveRuns, nanos(until), owner); err != nil {
		return s.dbErr(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE cron_fires SET lease_until = ? WHERE owner = ? AND run_id = ''`, nanos(until), owner); err != nil {
		return s.dbErr(err)
	}
	return s.dbErr(tx.Commit())
}

// ReapRuns implements [Runs].
func (s *SQLite) ReapRuns(ctx context.Context, now time.Time, dead func(string) bool, lose func(RunRecord) RunRecord) ([]RunRecord, error) {
	var out []RunRecord
	err := s.write(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `SELECT `+runCols+` FROM runs WHERE status IN `+liveRuns+` AND owner != ''`)
		if err != nil {
			return err
		}
		var lost []RunRecord
		for rows.Next() {
			r, err := scanRun(rows)
			if err != nil {
				rows.Close()
				return err
			}
			if !r.LeaseUntil.Before(now) && (dead == nil || !dead(r.Owner)) {
				continue
			}
			lost = append(lost, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range lost {
			if lose != nil {
				r = lose(r)
			}
			if r.Status != RunQueued {
				r.Status = RunLost
			} else {
				r.Owner, r.LeaseUntil = "", time.Time{}
			}
			if !json.Valid(r.Data) {
				return errorsf(ErrInvalid, "run %s: data is not JSON", r.ID)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, owner = ?, lease_until = ?, data = ? WHERE id = ?`,
				r.Status, r.Owner, nanos(r.LeaseUntil), string(r.Data), r.ID); err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// ClaimRuns implements [Runs].
func (s *SQLite) ClaimRuns(ctx context.Context, owner string, leaseUntil time.Time, limit int) ([]RunRecord, error) {
	if limit <= 0 || owner == "" {
		return nil, nil
	}
	if s.closed() {
		return nil, ErrClosed
	}
	// A cheap read first: most polls find the queue empty and take no
	// write lock.
	st, err := s.prep(ctx, nil, `SELECT 1 FROM runs WHERE status = 'queued' AND owner = '' LIMIT 1`)
	if err != nil {
		return nil, s.dbErr(err)
	}
	var one int
	if err := st.QueryRowContext(ctx).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, s.dbErr(err)
	}
	var out []RunRecord
	err = s.write(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `SELECT `+runCols+` FROM runs WHERE status = 'queued' AND owner = ''
			AND NOT (serial AND EXISTS (SELECT 1 FROM runs o WHERE o.job_id = runs.job_id AND o.status IN ('running', 'waiting')))
			ORDER BY created_at, rowid LIMIT ?`, limit*4)
		if err != nil {
			return err
		}
		jobs := map[string]bool{}
		for rows.Next() && len(out) < limit {
			r, err := scanRun(rows)
			if err != nil {
				rows.Close()
				return err
			}
			if r.Serial {
				if jobs[r.JobID] {
					continue
				}
				jobs[r.JobID] = true
			}
			out = append(out, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range out {
			out[i].Status, out[i].Owner, out[i].LeaseUntil = RunRunning, owner, leaseUntil
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, owner = ?, lease_until = ? WHERE id = ?`,
				RunRunning, owner, nanos(leaseUntil), out[i].ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateRunIf implements [Runs].
func (s *SQLite) UpdateRunIf(ctx context.Context, r RunRecord, status, owner string) (bool, error) {
	if !json.Valid(r.Data) {
		return false, errorsf(ErrInvalid, "run %s: data is not JSON", r.ID)
	}
	var done bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, owner = ?, lease_until = ?, data = ? WHERE id = ? AND status = ? AND owner = ?`,
			r.Status, r.Owner, nanos(r.LeaseUntil), string(r.Data), r.ID, status, owner)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		done = n == 1
		return nil
	})
	return done, err
}

func scanTrigger(r scanner) (Trigger, error) {
	var t Trigger
	var data string
	var created, updated int64
	if err := r.Scan(&t.ID, &t.Name, &data, &created, &updated); err != nil {
		return Trigger{}, err
	}
	t.Data, t.CreatedAt, t.UpdatedAt = json.RawMessage(data), fromNanos(created), fromNanos(updated)
	return t, nil
}

func checkTrigger(t Trigger) error {
	if err := checkKey("trigger name", t.Name); err != nil {
		return err
	}
	if !json.Valid(t.Data) {
		return errorsf(ErrInvalid, "trigger %s: data is not JSON", t.Name)
	}
	return nil
}

// CreateTrigger implements [Triggers].
func (s *SQLite) CreateTrigger(ctx context.Context, t Trigger) (Trigger, error) {
	if t.ID == "" {
		t.ID = "trg_" + NewID(6)
	}
	if err := checkTrigger(t); err != nil {
		return Trigger{}, err
	}
	t.CreatedAt = s.now()
	t.UpdatedAt = t.CreatedAt
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO triggers (id, name, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
			t.ID, t.Name, string(t.Data), nanos(t.CreatedAt), nanos(t.UpdatedAt))
		if err != nil && strings.Contains(err.Error(), "UNIQUE") {
			return errorsf(ErrExists, "trigger %s", t.Name)
		}
		return err
	})
	return t, err
}

// GetTrigger implements [Triggers].
func (s *SQLite) GetTrigger(ctx context.Context, idOrName string) (Trigger, error) {
	if s.closed() {
		return Trigger{}, ErrClosed
	}
	t, err := scanTrigger(s.db.QueryRowContext(ctx, `SELECT id, name, data, created_at, updated_at FROM triggers WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1`,
		idOrName, idOrName, idOrName))
	if errors.Is(err, sql.ErrNoRows) {
		return Trigger{}, errorsf(ErrNotFound, "trigger %s", idOrName)
	}
	return t, s.dbErr(err)
}

// ListTriggers implements [Triggers].
func (s *SQLite) ListTriggers(ctx context.Context) ([]Trigger, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, data, created_at, updated_at FROM triggers ORDER BY name`)
	if err != nil {
		return nil, s.dbErr(err)
	}
	defer rows.Close()
	var out []Trigger
	for rows.Next() {
		t, err := scanTrigger(rows)
		if err != nil {
			return nil, s.dbErr(err)
		}
		out = append(out, t)
	}
	return out, s.dbErr(rows.Err())
}

// UpdateTrigger implements [Triggers].
func (s *SQLite) UpdateTrigger(ctx context.Context, t Trigger) (Trigger, error) {
	if err := checkTrigger(t); err != nil {
		return Trigger{}, err
	}
	var out Trigger
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := scanTrigger(tx.QueryRowContext(ctx, `SELECT id, name, data, created_at, updated_at FROM triggers WHERE id = ?`, t.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return errorsf(ErrNotFound, "trigger %s", t.ID)
		}
		if err != nil {
			return err
		}
		out = t
		out.CreatedAt, out.UpdatedAt = old.CreatedAt, s.now()
		_, err = tx.ExecContext(ctx, `UPDATE triggers SET name = ?, data = ?, updated_at = ? WHERE id = ?`, t.Name, string(t.Data), nanos(out.UpdatedAt), t.ID)
		if err != nil && strings.Contains(err.Error(), "UNIQUE") {
			return errorsf(ErrExists, "trigger %s", t.Name)
		}
		return err
	})
	return out, err
}

// DeleteTrigger implements [Triggers].
func (s *SQLite) DeleteTrigger(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM triggers WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return errorsf(ErrNotFound, "trigger %s", id)
		}
		return nil
	})
}
