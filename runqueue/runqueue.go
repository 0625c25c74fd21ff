// Package runqueue is the contract between what asks for agent runs — the
// HTTP API of `gantry serve`, the durable cron scheduler, RemoteTrigger,
// `gantry runs` — and the engine that runs them.
//
// An [Engine] starts a run from a [Request] (a prompt, a directory and
// [Options]), streams its [Event]s (each one line of Gantry's stream-json
// output, the shapes `gantry -p --output-format stream-json` prints),
// holds the asks a run is waiting on until someone answers them
// ([Engine.Answer]), lists and inspects runs, and cancels them. Two engines
// meet the contract: [Local], the single-process engine `gantry serve`
// uses, and a distributed one (Temporal: a run is a workflow, a tool call an
// activity) for users who outgrow one machine. Code written against
// [Engine] works with either.
//
// # Durable cron jobs
//
// A durable cron job is not handed to the engine as a schedule: the
// scheduler (package cron) decides that a job is due at a scheduled time,
// and hands that one fire to the engine as an ordinary [Request] whose
// [Origin] is the job (Kind [OriginCron], JobID, ScheduledAt) and whose Key
// is [FireKey](job, scheduled time). Engines guarantee that a Key starts at
// most one run, ever: a second Start with the same Key returns the first
// run and [ErrDuplicate]. So a fire is run at most once whatever the number
// of schedulers (two `gantry serve` processes on one database) — the
// scheduler's lease keeps them from even trying twice, the Key makes it
// safe if they do. A distributed engine maps the Key to its own idempotent
// id (a Temporal workflow id with a reject-duplicate policy).
//
// # Asks
//
// A run that needs a person — a tool call to approve, a model's question,
// a plan, an MCP elicitation — does not fail: the engine records an [Ask]
// (listed in [Run.Asks] while pending and announced by a control_request
// event), and the run waits until [Engine.Answer] delivers the answer, the
// run is cancelled, or the engine's ask timeout denies it.
package runqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
)

// Errors callers branch on (test with errors.Is; engines wrap them with
// detail).
var (
	// ErrNotFound: no run, or no pending ask, with that id.
	ErrNotFound = errors.New("runqueue: not found")
	// ErrDuplicate: a run with the request's Key exists already; Start
	// returns that run along with the error.
	ErrDuplicate = errors.New("runqueue: a run with this key exists")
	// ErrOverlap: the request's overlap policy (Origin.Exclusive,
	// Origin.MaxQueued) refused the run; nothing was started.
	ErrOverlap = errors.New("runqueue: the job's overlap policy refused the run")
	// ErrInvalid: the request or answer breaks the contract (empty prompt,
	// relative directory, an answer of the wrong kind, …).
	ErrInvalid = errors.New("runqueue: invalid input")
	// ErrEnded: the run has ended (it cannot be answered or cancelled).
	ErrEnded = errors.New("runqueue: run has ended")
	// ErrClosed: the engine is closed or draining and starts nothing new.
	ErrClosed = errors.New("runqueue: engine closed")
)

// Engine runs agent runs. Implementations are safe for concurrent use.
type Engine interface {
	// Start records a run for req and starts it (or queues it while the
	// engine is at its concurrency limit). It returns the run as recorded;
	// the run goes on after ctx ends. A request whose Key was used before
	// starts nothing: Start returns the existing run and [ErrDuplicate].
	Start(ctx context.Context, req Request) (Run, error)
	// Get returns a run's current record, pending asks included.
	Get(ctx context.Context, id string) (Run, error)
	// List returns the runs that match f, newest first.
	List(ctx context.Context, f Filter) ([]Run, error)
	// Events yields the run's events with a sequence number greater than
	// after (0 = from the start), first those already recorded, then new
	// ones as they come. The sequence ends after the run's last event once
	// it has ended, or with ctx's error. Several subscribers may follow a
	// run at once; a slow subscriber never slows the run.
	Events(ctx context.Context, id string, after int64) iter.Seq2[Event, error]
	// Answer answers a pending ask of a run. The answer's kind must be the
	// ask's ([ErrInvalid] otherwise); an ask that was answered, timed out
	// or belongs to an ended run gives [ErrNotFound].
	Answer(ctx context.Context, runID, askID string, a interaction.Answer) error
	// Cancel stops a queued or running run; it ends with [StatusCancelled].
	// Cancelling an ended run gives [ErrEnded].
	Cancel(ctx context.Context, id string) error
}

// Live is an optional interface of an [Engine] that publishes the stream
// events of a run's model calls in flight (text deltas) as they arrive.
// They are previews: not recorded, not numbered (Seq 0), never replayed;
// the message event that follows is the truth. gantry serve's SSE stream
// interleaves them with the recorded events.
type Live interface {
	// Live yields the run's live events (stream_event lines) from now on
	// until ctx ends.
	Live(ctx context.Context, id string) iter.Seq[Event]
}

// Status is a run's state.
type Status string

// Run states. Queued, Running and Waiting are live; the others are
// final.
const (
	StatusQueued  Status = "queued"
	StatusRunning Status = "running"
	// StatusWaiting: the run waits for an answer to an ask (a permission,
	// a question, a plan approval, …). It holds no execution slot: other
	// runs start meanwhile, and it takes a slot again once answered.
	StatusWaiting   Status = "waiting"
	StatusSucceeded Status = "succeeded"
	// StatusFailed: the run ended with an error result (max turns, budget,
	// a model error, …); Run.Result or Run.Error says why.
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
	// StatusLost: the process running it died (a crash, kill -9); the run's
	// outcome is unknown. It is reported, never silently run again.
	StatusLost Status = "lost"
)

// Ended reports whether s is final.
func (s Status) Ended() bool {
	switch s {
	case StatusSucceeded, StatusFailed, StatusCancelled, StatusLost:
		return true
	}
	return false
}

// Valid reports whether s is one of the states.
func (s Status) Valid() bool {
	return s == StatusQueued || s == StatusRunning || s == StatusWaiting || s.Ended()
}

// Origin kinds.
const (
	OriginAPI     = "api"     // the HTTP API
	OriginCron    = "cron"    // a durable cron job's fire
	OriginTrigger = "trigger" // a RemoteTrigger run
	OriginCLI     = "cli"     // a command line
)

// Origin says where a run comes from.
type Origin struct {
	// Kind is one of the Origin* constants ("" = api).
	Kind string `json:"kind,omitempty"`
	// JobID is the cron job of a cron fire; TriggerID the trigger of a
	// trigger run.
	JobID     string `json:"job_id,omitempty"`
	TriggerID string `json:"trigger_id,omitempty"`
	// ScheduledAt is the time a cron fire was scheduled for.
	ScheduledAt time.Time `json:"scheduled_at,omitzero"`
	// Retry asks for the run to be started again, once, if it is lost (its
	// process died); without it a lost run is only reported.
	Retry bool `json:"retry,omitempty"`
	// Serial keeps the run queued while another run of its job is running
	// or waiting (a cron job's overlap policy "queue").
	Serial bool `json:"serial,omitempty"`
	// Exclusive and MaxQueued are a cron job's overlap policy checked
	// where the run is recorded, in the same transaction (engines whose
	// journal is a store.Runs, as gantry serve's): Exclusive refuses the
	// run while another run of the job is queued, running or waiting
	// ("skip"); MaxQueued > 0 refuses it while the job has that many runs
	// queued. A refused start fails with [ErrOverlap]. Neither is recorded
	// with the run; an engine without such a journal ignores them.
	Exclusive bool `json:"-"`
	MaxQueued int  `json:"-"`
}

// FireKey is the idempotency key of one fire of a cron job: the job's id
// and the scheduled time (Unix seconds).
func FireKey(jobID string, scheduled time.Time) string {
	return "cron:" + jobID + ":" + strconv.FormatInt(scheduled.Unix(), 10)
}

// Options are the agent options of a run. The zero value runs the
// default model in the permission mode of the directory's settings.
type Options struct {
	// Model is the model ("" = the engine's default).
	Model string `json:"model,omitempty"`
	// Mode is the permission mode ("" = the directory's settings, else
	// default). An engine refuses bypassPermissions where the CLI does.
	Mode tool.Mode `json:"mode,omitempty"`
	// Allow and Deny are permission rules added on top of the directory's
	// settings (like --allowedTools and --disallowedTools).
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// MaxTurns and MaxBudgetUSD bound the run (0 = the agent's defaults).
	MaxTurns     int     `json:"max_turns,omitempty"`
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty"`
	// SystemPrompt replaces Gantry's system prompt; AppendSystemPrompt is
	// added to it.
	SystemPrompt       string `json:"system_prompt,omitempty"`
	AppendSystemPrompt string `json:"append_system_prompt,omitempty"`
	// Resume continues the session (transcript) with this id.
	Resume string `json:"resume,omitempty"`
}

// Request asks for one run.
type Request struct {
	// Prompt is the user prompt (required).
	Prompt string `json:"prompt"`
	// Dir is the run's working directory, an absolute path (required).
	Dir     string  `json:"dir"`
	Options Options `json:"options,omitzero"`
	Origin  Origin  `json:"origin,omitzero"`
	// Key, when set, makes Start idempotent: a Key starts at most one run
	// ([ErrDuplicate]). Cron fires use [FireKey].
	Key string `json:"key,omitempty"`
}

// Validate checks the parts of the contract every engine enforces.
func (r Request) Validate() error {
	switch {
	case r.Prompt == "":
		return fmt.Errorf("%w: the prompt is empty", ErrInvalid)
	case r.Dir == "" || r.Dir[0] != '/':
		return fmt.Errorf("%w: the directory %q is not an absolute path", ErrInvalid, r.Dir)
	case r.Options.Mode != "" && !r.Options.Mode.Valid():
		return fmt.Errorf("%w: unknown permission mode %q", ErrInvalid, r.Options.Mode)
	case r.Options.MaxTurns < 0 || r.Options.MaxBudgetUSD < 0:
		return fmt.Errorf("%w: negative limit", ErrInvalid)
	}
	switch r.Origin.Kind {
	case "", OriginAPI, OriginCron, OriginTrigger, OriginCLI:
	default:
		return fmt.Errorf("%w: unknown origin %q", ErrInvalid, r.Origin.Kind)
	}
	return nil
}

// Result is how a run ended, as the stream-json result line says it.
type Result struct {
	// Subtype is the agent's result subtype ("success",
	// "error_max_turns", …).
	Subtype    string  `json:"subtype"`
	IsError    bool    `json:"is_error"`
	Text       string  `json:"result"`
	NumTurns   int     `json:"num_turns"`
	CostUSD    float64 `json:"total_cost_usd"`
	DurationMS int64   `json:"duration_ms"`
}

// Run is a run's record.
type Run struct {
	ID      string  `json:"id"`
	Request Request `json:"request"`
	Status  Status  `json:"status"`
	// SessionID is the transcript's id once the run has started.
	SessionID string `json:"session_id,omitempty"`
	// Result is set once the agent reported one; Error says why a run
	// failed without one (or was lost or cancelled).
	Result *Result `json:"result,omitempty"`
	Error  string  `json:"error,omitempty"`
	// Asks are the pending asks.
	Asks []Ask `json:"asks,omitempty"`
	// Events is the number of events recorded so far.
	Events int64 `json:"events"`
	// Owner names the process (or worker) that runs it.
	Owner     string    `json:"owner,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// Filter selects runs for [Engine.List]. The zero value selects the 100
// newest.
type Filter struct {
	// Status keeps runs in one of these states (empty = any).
	Status []Status `json:"status,omitempty"`
	// Origin keeps runs of this origin kind; JobID and TriggerID those of
	// one job or trigger.
	Origin    string `json:"origin,omitempty"`
	JobID     string `json:"job_id,omitempty"`
	TriggerID string `json:"trigger_id,omitempty"`
	// Limit caps the result (0 = 100).
	Limit int `json:"limit,omitempty"`
}

// Match reports whether r passes the filter (Limit aside).
func (f Filter) Match(r Run) bool {
	if len(f.Status) > 0 {
		ok := false
		for _, s := range f.Status {
			ok = ok || s == r.Status
		}
		if !ok {
			return false
		}
	}
	o := r.Request.Origin
	kind := o.Kind
	if kind == "" {
		kind = OriginAPI
	}
	return (f.Origin == "" || f.Origin == kind) && (f.JobID == "" || f.JobID == o.JobID) &&
		(f.TriggerID == "" || f.TriggerID == o.TriggerID)
}

// limit returns the filter's effective limit.
func (f Filter) limit() int {
	if f.Limit <= 0 {
		return 100
	}
	return f.Limit
}

// Event is one event of a run: one stream-json line.
type Event struct {
	// Seq numbers a run's events 1, 2, 3, … without gaps.
	Seq int64 `json:"seq"`
	// Type is the line's "type" ("system", "assistant", "user",
	// "stream_event", "control_request", "result", …).
	Type string `json:"type"`
	// Data is the line, a JSON object.
	Data json.RawMessage `json:"data"`
}

// Ask is a pending ask of a run.
type Ask struct {
	ID      string              `json:"id"`
	Kind    interaction.Kind    `json:"kind"`
	Request interaction.Request `json:"-"`
	// CreatedAt is when the run started waiting.
	CreatedAt time.Time `json:"created_at"`
}

type askJSON struct {
	ID        string           `json:"id"`
	Kind      interaction.Kind `json:"kind"`
	Request   json.RawMessage  `json:"request"`
	CreatedAt time.Time        `json:"created_at"`
}

// MarshalJSON writes the ask with its request.
func (a Ask) MarshalJSON() ([]byte, error) {
	req, err := json.Marshal(a.Request)
	if err != nil {
		return nil, err
	}
	return json.Marshal(askJSON{ID: a.ID, Kind: a.Kind, Request: req, CreatedAt: a.CreatedAt})
}

// UnmarshalJSON reads an ask written by MarshalJSON.
func (a *Ask) UnmarshalJSON(b []byte) error {
	var j askJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	req, err := DecodeRequest(j.Kind, j.Request)
	if err != nil {
		return err
	}
	*a = Ask{ID: j.ID, Kind: j.Kind, Request: req, CreatedAt: j.CreatedAt}
	return nil
}

// DecodeRequest decodes the JSON of an interaction request of kind k.
func DecodeRequest(k interaction.Kind, data []byte) (interaction.Request, error) {
	var r interaction.Request
	switch k {
	case interaction.KindPermission:
		r = new(interaction.PermissionRequest)
	case interaction.KindQuestion:
		r = new(interaction.QuestionRequest)
	case interaction.KindPlan:
		r = new(interaction.PlanRequest)
	case interaction.KindElicitation:
		r = new(interaction.ElicitationRequest)
	case interaction.KindTrust:
		r = new(interaction.TrustRequest)
	default:
		return nil, fmt.Errorf("%w: unknown ask kind %q", ErrInvalid, k)
	}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%w: %s request: %v", ErrInvalid, k, err)
	}
	return r, nil
}

// DecodeAnswer decodes the JSON of an answer of kind k (the shapes of the
// interaction package's *Answer types).
func DecodeAnswer(k interaction.Kind, data []byte) (interaction.Answer, error) {
	var a interaction.Answer
	switch k {
	case interaction.KindPermission:
		a = new(interaction.PermissionAnswer)
	case interaction.KindQuestion:
		a = new(interaction.QuestionAnswer)
	case interaction.KindPlan:
		a = new(interaction.PlanAnswer)
	case interaction.KindElicitation:
		a = new(interaction.ElicitationAnswer)
	case interaction.KindTrust:
		a = new(interaction.TrustAnswer)
	default:
		return nil, fmt.Errorf("%w: unknown ask kind %q", ErrInvalid, k)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty %s answer", ErrInvalid, k)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(a); err != nil {
		return nil, fmt.Errorf("%w: %s answer: %v", ErrInvalid, k, err)
	}
	return a, nil
}
