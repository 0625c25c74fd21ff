// Package cron schedules prompts: 5-field cron expressions in local time
// ([Parse], [Schedule.Next]), the durable [Scheduler] of `gantry serve`
// (jobs in the store, each fire leased in a transaction and handed to a
// run-queue engine at most once), and session-only jobs ([SessionJobs]) that
// fire between the turns of the session that created them.
package cron

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/adhocore/gronx"
)

// Defaults.
const (
	// DefaultLifetime is how long a recurring job lives before it expires.
	DefaultLifetime = 7 * 24 * time.Hour
	// MaxJitter caps the delay that spreads recurring jobs sharing a
	// minute; a job's delay is at most a tenth of its period.
	MaxJitter = 15 * time.Minute
	// OneShotJitter caps the delay of one-shot jobs.
	OneShotJitter = 30 * time.Second
)

// Schedule is a parsed 5-field cron expression in a time zone.
type Schedule struct {
	expr string
	loc  *time.Location
}

// Parse parses a 5-field cron expression (minute hour day-of-month month
// day-of-week; numbers, ranges, steps, lists, names such as MON or JAN)
// read in loc (nil = time.Local).
func Parse(expr string, loc *time.Location) (Schedule, error) {
	if loc == nil {
		loc = time.Local
	}
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return Schedule{}, fmt.Errorf("cron: %q has %d fields; want 5 (minute hour day-of-month month day-of-week)", expr, len(fields))
	}
	e := strings.Join(fields, " ")
	if !gronx.IsValid(e) {
		return Schedule{}, fmt.Errorf("cron: %q is not a valid cron expression", expr)
	}
	// gronx accepts some out-of-range values; a match must exist within
	// five years (rejects "0 0 31 2 *").
	s := Schedule{expr: e, loc: loc}
	if _, err := s.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, loc)); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// String returns the expression.
func (s Schedule) String() string { return s.expr }

// Location returns the time zone the expression is read in.
func (s Schedule) Location() *time.Location { return s.loc }

// Next returns the first matching time strictly after after.
//
// The expression is matched against the wall clock of the schedule's
// time zone. Across a daylight-saving change: a wall-clock time that occurs
// twice (the repeated hour of autumn) fires once, at its first occurrence;
// a time skipped by the spring change fires at the same distance past the
// change (02:30 becomes 03:30), so a daily job never loses a day.
func (s Schedule) Next(after time.Time) (time.Time, error) {
	naive := wall(after.In(s.loc))
	limit := naive.AddDate(5, 0, 0)
	for naive.Before(limit) {
		n, err := gronx.NextTickAfter(s.expr, naive, false)
		if err != nil {
			return time.Time{}, fmt.Errorf("cron: %q: no next time after %s: %w", s.expr, after.Format(time.RFC3339), err)
		}
		t := time.Date(n.Year(), n.Month(), n.Day(), n.Hour(), n.Minute(), 0, 0, s.loc)
		if w := wall(t); w.Before(n) {
			// n is in a spring-forward gap and time.Date went back:
			// move to the same distance past the change.
			t = t.Add(n.Sub(w))
		}
		if t.After(after) {
			return t, nil
		}
		if !n.After(naive) {
			break
		}
		naive = n
	}
	return time.Time{}, fmt.Errorf("cron: %q never matches after %s", s.expr, after.Format(time.RFC3339))
}

// wall returns t's wall clock as a UTC time.
func wall(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

// Period estimates the schedule's period around t: the time between the
// next two matches.
func (s Schedule) Period(t time.Time) time.Duration {
	a, err := s.Next(t)
	if err != nil {
		return 0
	}
	b, err := s.Next(a)
	if err != nil {
		return 0
	}
	return b.Sub(a)
}

// Jitter returns the delay of a job's fires: a fixed fraction (from the
// job's id) of a tenth of the period, at most [MaxJitter] for recurring
// jobs and [OneShotJitter] for one-shot ones. Jobs that share a minute are
// spread over it; a job never fires before its scheduled time.
func Jitter(id string, period time.Duration, recurring bool) time.Duration {
	h := fnv.New32a()
	h.Write([]byte(id))
	frac := float64(h.Sum32()) / (1 << 32)
	bound := OneShotJitter
	if recurring {
		bound = min(period/10, MaxJitter)
	}
	if bound <= 0 {
		return 0
	}
	return time.Duration(frac * float64(bound)).Truncate(time.Second)
}
