// Package serveapi is the HTTP API of `gantry serve`: its wire types, the
// error codes, and [Client], a [runqueue.Engine] that talks to a remote
// (or local) serve process — the CLI's `gantry runs` against a URL and the
// RemoteTrigger tool use it. The server side is package serve; the API is
// described by the OpenAPI document served at /openapi.json.
package serveapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/sse"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
)

// Files in the Gantry home directory.
const (
	// TokenFile holds the API token serve requires (created 0600 with a
	// random token when missing).
	TokenFile = "serve.token"
	// StateFile is written by a running serve: its URL and process, so
	// that local clients find it.
	StateFile = "serve.json"
)

// State is the content of [StateFile].
type State struct {
	URL       string `json:"url"`
	PID       int    `json:"pid"`
	Owner     string `json:"owner"`
	TokenFile string `json:"token_file"`
}

// Error codes of the API's error body {"error": {"code", "message"}}.
const (
	CodeNotFound     = "not_found"
	CodeInvalid      = "invalid"
	CodeDuplicate    = "duplicate"
	CodeEnded        = "ended"
	CodeUnauthorized = "unauthorized"
	CodeUnavailable  = "unavailable"
	CodeInternal     = "internal"
)

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// Run is the existing run of a duplicate key.
	Run *runqueue.Run `json:"run,omitempty"`
}

// RunList is the body of GET /v1/runs.
type RunList struct {
	Runs []runqueue.Run `json:"runs"`
}

// EventPage is the JSON body of GET /v1/runs/{id}/events without SSE:
// events after a cursor, and the cursor to continue with.
type EventPage struct {
	Events []runqueue.Event `json:"events"`
	// Next is the Seq of the last event returned (the cursor of the next
	// page); Ended says the run has ended and Next is its last event.
	Next  int64 `json:"next"`
	Ended bool  `json:"ended"`
}

// JobRequest is the body of POST /v1/jobs.
type JobRequest struct {
	Cron      string           `json:"cron"`
	Timezone  string           `json:"timezone,omitempty"`
	Prompt    string           `json:"prompt"`
	Recurring *bool            `json:"recurring,omitempty"`
	Dir       string           `json:"dir"`
	Options   runqueue.Options `json:"options,omitzero"`
	Catchup   string           `json:"catchup,omitempty"`
	Retry     bool             `json:"retry,omitempty"`
	// Overlap is the job's overlap policy: "skip" ("" too), "queue" or
	// "allow"; MaxQueued caps its queued runs (0 = 1).
	Overlap   string `json:"overlap,omitempty"`
	MaxQueued int    `json:"max_queued,omitempty"`
	// Lifetime bounds a recurring job, in Go duration syntax ("168h"; ""
	// = 7 days, "0" = never).
	Lifetime string `json:"lifetime,omitempty"`
}

// JobList is the body of GET /v1/jobs.
type JobList struct {
	Jobs []store.CronJob `json:"jobs"`
}

// Client is a [runqueue.Engine] over the HTTP API of a serve process.
type Client struct {
	// URL is the API's base URL ("http://127.0.0.1:7777").
	URL string
	// Token is the bearer token.
	Token string
	// HTTP is the client (nil = a client without a timeout: event streams
	// last as long as runs).
	HTTP *http.Client
}

var _ runqueue.Engine = (*Client)(nil)

// Discover returns a client of the serve process running on the Gantry
// home home (its [StateFile] names it and its process is alive), or an
// error saying why there is none.
func Discover(home string) (*Client, error) {
	b, err := os.ReadFile(filepath.Join(home, StateFile))
	if err != nil {
		return nil, fmt.Errorf("no gantry serve is running here (%s not found)", StateFile)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil || st.URL == "" {
		return nil, fmt.Errorf("serveapi: %s is not valid", StateFile)
	}
	if st.PID > 0 && !Alive(st.PID) {
		return nil, fmt.Errorf("no gantry serve is running here (process %d is gone)", st.PID)
	}
	tf := st.TokenFile
	if tf == "" {
		tf = filepath.Join(home, TokenFile)
	}
	tok, err := ReadToken(tf)
	if err != nil {
		return nil, err
	}
	return &Client{URL: st.URL, Token: tok}, nil
}

// ReadToken reads a token file (surrounding space ignored).
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("serveapi: token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("serveapi: token file %s is empty", path)
	}
	return tok, nil
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// do sends a request with a JSON body (nil = none) and decodes a JSON
// response into out (nil = discard).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.URL, "/")+path, rd)
	if err != nil {
		return fmt.Errorf("serveapi: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("serveapi: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return decodeError(resp, out)
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("serveapi: %s %s: %w", method, path, err)
	}
	return nil
}

// decodeError maps an error response to the runqueue (and store) errors.
func decodeError(resp *http.Response, out any) error {
	var eb ErrorBody
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(b, &eb) != nil || eb.Error.Code == "" {
		return fmt.Errorf("serveapi: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	var base error
	switch eb.Error.Code {
	case CodeNotFound:
		base = runqueue.ErrNotFound
	case CodeInvalid:
		base = runqueue.ErrInvalid
	case CodeDuplicate:
		base = runqueue.ErrDuplicate
		if r, ok := out.(*runqueue.Run); ok && eb.Run != nil {
			*r = *eb.Run
		}
	case CodeEnded:
		base = runqueue.ErrEnded
	case CodeUnavailable:
		base = runqueue.ErrClosed
	default:
		return fmt.Errorf("serveapi: %s: %s", resp.Status, eb.Error.Message)
	}
	return &apiError{base: base, msg: eb.Error.Message}
}

type apiError struct {
	base error
	msg  string
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.base }

// Start implements [runqueue.Engine].
func (c *Client) Start(ctx context.Context, req runqueue.Request) (runqueue.Run, error) {
	var r runqueue.Run
	err := c.do(ctx, http.MethodPost, "/v1/runs", req, &r)
	return r, err
}

// Get implements [runqueue.Engine].
func (c *Client) Get(ctx context.Context, id string) (runqueue.Run, error) {
	var r runqueue.Run
	err := c.do(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id), nil, &r)
	return r, err
}

// List implements [runqueue.Engine].
func (c *Client) List(ctx context.Context, f runqueue.Filter) ([]runqueue.Run, error) {
	var l RunList
	err := c.do(ctx, http.MethodGet, "/v1/runs?"+FilterQuery(f).Encode(), nil, &l)
	return l.Runs, err
}

// FilterQuery is the query string of a filter.
func FilterQuery(f runqueue.Filter) url.Values {
	q := url.Values{}
	if len(f.Status) > 0 {
		var ss []string
		for _, s := range f.Status {
			ss = append(ss, string(s))
		}
		q.Set("status", strings.Join(ss, ","))
	}
	for k, v := range map[string]string{"origin": f.Origin, "job_id": f.JobID, "trigger_id": f.TriggerID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q
}

// EventPage returns up to limit events after a cursor, without waiting.
func (c *Client) EventPage(ctx context.Context, id string, after int64, limit int) (EventPage, error) {
	var p EventPage
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(limit)}}
	err := c.do(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id)+"/events?"+q.Encode(), nil, &p)
	return p, err
}

// Events implements [runqueue.Engine] over the SSE stream; a dropped
// connection is resumed from the last event received.
func (c *Client) Events(ctx context.Context, id string, after int64) iter.Seq2[runqueue.Event, error] {
	return func(yield func(runqueue.Event, error) bool) {
		for attempt := 0; ; attempt++ {
			ended, n, err := c.stream(ctx, id, &after, yield)
			switch {
			case ended || errors.Is(err, errStop):
				return
			case err != nil && (ctx.Err() != nil || attempt >= 3 && n == 0):
				yield(runqueue.Event{}, err)
				return
			case err != nil:
				var ae *apiError
				if errors.As(err, &ae) {
					yield(runqueue.Event{}, err)
					return
				}
			}
			if n > 0 {
				attempt = 0
			}
			select {
			case <-ctx.Done():
				yield(runqueue.Event{}, ctx.Err())
				return
			case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
			}
		}
	}
}

var errStop = errors.New("stop")

// stream reads one SSE connection; it reports whether the run ended and
// how many events came.
func (c *Client) stream(ctx context.Context, id string, after *int64, yield func(runqueue.Event, error) bool) (bool, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.URL, "/")+"/v1/runs/"+url.PathEscape(id)+"/events", nil)
	if err != nil {
		return false, 0, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", strconv.FormatInt(*after, 10))
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return false, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, 0, decodeError(resp, nil)
	}
	r := sse.NewReader(resp.Body)
	defer r.Close()
	r.SetMaxLine(maxEventLine)
	n := 0
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return false, n, io.ErrUnexpectedEOF
		}
		if err != nil {
			return false, n, err
		}
		if string(ev.Name) == "end" {
			return true, n, nil
		}
		seq, _ := strconv.ParseInt(strings.TrimSpace(string(ev.ID)), 10, 64)
		data := ev.Text()
		if len(data) == 0 || seq <= *after { // no event, or one already delivered
			continue
		}
		n++
		*after = seq
		e := runqueue.Event{Seq: seq, Type: strings.TrimSpace(string(ev.Name)), Data: json.RawMessage(bytes.Clone(data))}
		if !yield(e, nil) {
			return false, n, errStop
		}
	}
}

// maxEventLine is the longest line of an event stream the client reads.
const maxEventLine = 64 << 20

// Answer implements [runqueue.Engine].
func (c *Client) Answer(ctx context.Context, runID, askID string, a interaction.Answer) error {
	return c.do(ctx, http.MethodPost, "/v1/runs/"+url.PathEscape(runID)+"/asks/"+url.PathEscape(askID), a, nil)
}

// Cancel implements [runqueue.Engine].
func (c *Client) Cancel(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/v1/runs/"+url.PathEscape(id)+"/cancel", struct{}{}, nil)
}

// PauseJob pauses (paused true) or resumes the cron job id and returns it:
// a paused job is kept, with no next fire, until resumed; resumed, it
// fires at its schedule's next match (the fires it missed while paused
// never run).
func (c *Client) PauseJob(ctx context.Context, id string, paused bool) (store.CronJob, error) {
	var j store.CronJob
	err := c.do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/"+pauseVerb(paused), struct{}{}, &j)
	return j, err
}

// PauseTrigger pauses (paused true) or resumes the schedule of the trigger
// idOrName and returns its job; the trigger still runs on request.
func (c *Client) PauseTrigger(ctx context.Context, idOrName string, paused bool) (store.CronJob, error) {
	var j store.CronJob
	err := c.do(ctx, http.MethodPost, "/v1/triggers/"+url.PathEscape(idOrName)+"/"+pauseVerb(paused), struct{}{}, &j)
	return j, err
}

func pauseVerb(paused bool) string {
	if paused {
		return "pause"
	}
	return "resume"
}

// Do sends an API request with a JSON body (nil = none) and decodes the
// JSON response into out (nil = discard): for the endpoints the Engine
// methods do not cover (jobs, triggers).
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	return c.do(ctx, method, path, body, out)
}
