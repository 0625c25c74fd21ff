// Package sleep holds the Sleep tool: the agent waits a duration, or until
// something it may want to act on happens, whichever is first —
//
//   - a background task of the session ends (a Bash command run with
//     run_in_background, or a background subagent: both are tasks of the
//     session's [*shell.Jobs]);
//   - a team message waits in one of the agent's mailboxes (a member's own,
//     or a lead's; [team.Mailboxes] over [store.Mailboxes]);
//   - the session owner calls [Waker.Wake] (a person sent a message while
//     the agent works: the terminal queues it, a stream-json client sends
//     it);
//   - the call is interrupted (its context ends).
//
// Sleep holds no process and changes nothing: it is read-only and
// concurrency-safe, so it may run beside other calls of the same turn. A
// source that is not among the session's services simply never wakes it.
package sleep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/builtin/team"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// Name is the tool's name.
const Name = "Sleep"

// MaxDuration is the longest sleep by default ([Options.MaxDuration]).
const MaxDuration = time.Hour

// Input is the input of Sleep.
type Input struct {
	DurationSeconds float64 `json:"duration_seconds" jsonschema:"How long to sleep, in seconds (at most 3600). The sleep ends earlier when a background task ends, a team message arrives, the user sends a message or interrupts."`
}

// Wake says why a sleep ended.
type Wake string

// Why a sleep ended.
const (
	WokeElapsed     Wake = "elapsed"     // the duration passed
	WokeTask        Wake = "task"        // a background task ended
	WokeMessage     Wake = "message"     // a team message waits
	WokeUser        Wake = "user"        // the session owner called Waker.Wake
	WokeInterrupted Wake = "interrupted" // the call's context ended
)

// Output is the structured result of a Sleep call ([tool.Result.Structured]).
type Output struct {
	// Slept is how long the call slept, in milliseconds.
	SleptMS int64 `json:"slept_ms"`
	// Woke says why it ended.
	Woke Wake `json:"woke"`
	// Reason is the waker's text (a task's id and status, the mailbox, the
	// reason given to Waker.Wake).
	Reason string `json:"reason,omitempty"`
	// Tasks are the background tasks that ended while it slept.
	Tasks []shell.JobInfo `json:"tasks,omitempty"`
}

// Options configure Sleep. The zero value is ready to use.
type Options struct {
	// MaxDuration caps a sleep; zero means [MaxDuration]. A longer request
	// sleeps MaxDuration and the result says so.
	MaxDuration time.Duration
	// Now returns the current time; nil means time.Now. Tests inject it.
	Now func() time.Time
}

const description = `Waits for a number of seconds, or until something happens that you may want to act on: a background task (a command run with run_in_background, or a background agent) ends, a team message arrives, or the user sends a message. The user can interrupt the sleep at any time.

Use it when you are waiting for background work, when the user asks you to wait, or when you have nothing to do until something arrives. Prefer it over Bash "sleep": it holds no process and wakes as soon as there is something new. It can run beside other tools in the same turn. The result says why it woke; read a finished task's output with TaskOutput.`

// New returns the Sleep tool.
func New(opts Options) tool.Tool {
	if opts.MaxDuration <= 0 {
		opts.MaxDuration = MaxDuration
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &sleeper{opt: opts}
	return tool.Must(tool.New(Name, description, s.call,
		tool.WithTraits(tool.ReadOnlyTraits),
		tool.WithDoc(tool.Doc{DisplayName: "Sleep"}),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in Input) error {
			if math.IsNaN(in.DurationSeconds) || !(in.DurationSeconds > 0) {
				return errors.New("duration_seconds must be a positive number of seconds")
			}
			return nil
		}),
		// The call's deadline is its sleep plus a margin: Sleep ends
		// itself; the deadline only bounds a stuck source.
		tool.TimeoutFunc(func(in Input) time.Duration { return s.duration(in) + 10*time.Second }),
		tool.WithMaxTimeout(opts.MaxDuration+10*time.Second),
		tool.DescribeFunc(func(in Input) string { return "Sleep " + s.duration(in).Round(time.Second).String() }),
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "wait sleep until background task or message"}),
	))
}

type sleeper struct{ opt Options }

// duration is the requested sleep capped at MaxDuration, before any
// arithmetic that could overflow.
func (s *sleeper) duration(in Input) time.Duration {
	if !(in.DurationSeconds > 0) {
		return 0
	}
	if in.DurationSeconds >= s.opt.MaxDuration.Seconds() {
		return s.opt.MaxDuration
	}
	return max(time.Duration(in.DurationSeconds*float64(time.Second)), time.Millisecond)
}

func (s *sleeper) call(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
	d := s.duration(in)
	start := s.opt.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type wake struct {
		why    Wake
		reason string
	}
	woke := make(chan wake, 1)
	send := func(w wake) {
		select {
		case woke <- w:
		default:
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: every watcher returns

	tasks, _ := tool.Use[*shell.Jobs](env)
	var before map[string]bool
	var ended <-chan struct{}
	if tasks != nil {
		ended = tasks.Ended()
		before = map[string]bool{}
		for _, t := range tasks.List() {
			if t.Status == shell.TaskRunning {
				before[t.ID] = true
			}
		}
	}
	if boxes, err := tool.Use[store.Mailboxes](env); err == nil {
		names, _ := team.Mailboxes(ctx, env)
		for _, name := range names {
			wg.Go(func() {
				if boxes.Wait(ctx, name, 0) == nil {
					send(wake{WokeMessage, "a message waits in " + name})
				}
			})
		}
	}
	var user <-chan struct{}
	var userReason func() string
	if w, err := tool.Use[*Waker](env); err == nil {
		user, userReason = w.wait()
	}

	timer := time.NewTimer(d)
	defer timer.Stop()
	var w wake
	select {
	case <-timer.C:
		w = wake{why: WokeElapsed}
	case <-ended:
		w = wake{why: WokeTask}
	case w = <-woke:
	case <-user:
		w = wake{WokeUser, userReason()}
	case <-ctx.Done():
		w = wake{why: WokeInterrupted}
	}
	out := Output{SleptMS: s.opt.Now().Sub(start).Milliseconds(), Woke: w.why, Reason: w.reason}
	if tasks != nil {
		for _, t := range tasks.List() {
			if before[t.ID] && t.Status != shell.TaskRunning {
				out.Tasks = append(out.Tasks, t)
			}
		}
	}
	if w.why == WokeTask && len(out.Tasks) > 0 {
		out.Reason = describeTasks(out.Tasks)
	}
	r := tool.TextResult(s.text(in, d, out))
	r.Structured = out
	return r, nil
}

func describeTasks(ts []shell.JobInfo) string {
	var parts []string
	for _, t := range ts {
		what := t.Description
		if what == "" {
			what = t.Command
		}
		if r := []rune(what); len(r) > 60 {
			what = string(r[:59]) + "…"
		}
		parts = append(parts, fmt.Sprintf("%s task %s (%s) %s", t.Kind, t.ID, what, t.Status))
	}
	return strings.Join(parts, "; ")
}

func (s *sleeper) text(in Input, d time.Duration, out Output) string {
	slept := human(time.Duration(out.SleptMS) * time.Millisecond)
	var b strings.Builder
	switch out.Woke {
	case WokeElapsed:
		fmt.Fprintf(&b, "Slept %v.", human(d))
	case WokeTask:
		fmt.Fprintf(&b, "Woke after %v: background work ended: %s. Read its output with TaskOutput.", slept, out.Reason)
	case WokeMessage:
		fmt.Fprintf(&b, "Woke after %v: %s; it is delivered with this turn.", slept, out.Reason)
	case WokeUser:
		fmt.Fprintf(&b, "Woke after %v: the user sent a message", slept)
		if out.Reason != "" {
			fmt.Fprintf(&b, " (%s)", out.Reason)
		}
		b.WriteString(".")
	case WokeInterrupted:
		fmt.Fprintf(&b, "Sleep interrupted after %v.", slept)
	}
	if in.DurationSeconds > s.opt.MaxDuration.Seconds() {
		fmt.Fprintf(&b, " (The sleep was capped at %v.)", s.opt.MaxDuration)
	}
	if out.Woke != WokeTask && len(out.Tasks) > 0 {
		fmt.Fprintf(&b, " Background work that ended meanwhile: %s.", describeTasks(out.Tasks))
	}
	return b.String()
}

// human rounds d for the model: to the second from a second on, else to
// the millisecond.
func human(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// Waker lets the session owner end the Sleep calls running now — when the
// person sends a message while the agent works, for example. Provide one
// with tool.Provide(services, sleep.NewWaker()). It is safe for concurrent
// use; a Wake with no Sleep running is forgotten.
type Waker struct {
	mu     sync.Mutex
	ch     chan struct{}
	reason string
}

// NewWaker returns a Waker.
func NewWaker() *Waker { return &Waker{ch: make(chan struct{})} }

// Wake ends every Sleep call running now; reason (a few words, may be "")
// is given to the model.
func (w *Waker) Wake(reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reason = reason
	close(w.ch)
	w.ch = make(chan struct{})
}

// wait returns the channel the next Wake closes and a function that reads
// that Wake's reason.
func (w *Waker) wait() (<-chan struct{}, func() string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := w.ch
	return ch, func() string {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.reason
	}
}
