package serve

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/console"
	"github.com/gantry-dev/gantry/internal/trigger"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
)

//go:embed openapi.json
var openapiDoc []byte

// maxBody caps request bodies.
const maxBody = 1 << 20

// keepAlive is the interval of SSE comments that keep idle streams open
// through proxies.
const keepAlive = 15 * time.Second

// Handler returns the HTTP API (see the OpenAPI document at
// /openapi.json) and, unless Options.NoConsole, the web console at "/"
// (package console). Every API path but /openapi.json and /v1/health
// needs the bearer token when the server has one; the console has its own
// login (the token, exchanged for a session cookie).
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) newHandler() (http.Handler, error) {
	api := s.apiMux()
	if s.o.NoConsole {
		return s.auth(api, false), nil
	}
	hosts := slices.Clone(s.o.ConsoleHosts)
	if s.o.Listener != nil {
		if ap, err := netip.ParseAddrPort(s.o.Listener.Addr().String()); err == nil && !ap.Addr().IsUnspecified() {
			hosts = append(hosts, ap.Addr().String())
		}
	}
	key := s.o.ConsoleKey
	if key == nil && s.o.Home != "" {
		// Logins survive a restart: the key of their signed cookies is
		// kept in the home, like the token.
		k, err := console.LoadKey(filepath.Join(s.o.Home, console.KeyFile))
		if err != nil {
			return nil, err
		}
		key = k
	}
	con, err := console.New(console.Options{API: api, Token: s.o.Token, Hosts: hosts, Secure: s.o.TLS != nil,
		SessionKey: key, Logger: s.log, Now: s.now})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", api)
	mux.Handle("/openapi.json", api)
	mux.Handle("/", con)
	return s.auth(mux, true), nil
}

// apiMux returns the API's routes, without the token check.
func (s *Server) apiMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openapiDoc)
	})
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		// Without the token: liveness only (no host, no process id).
		if !s.authorized(r) {
			writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "owner": s.o.Owner})
	})
	mux.HandleFunc("POST /v1/runs", s.startRun)
	mux.HandleFunc("GET /v1/runs", s.listRuns)
	mux.HandleFunc("GET /v1/runs/{id}", s.getRun)
	mux.HandleFunc("GET /v1/runs/{id}/events", s.events)
	mux.HandleFunc("POST /v1/runs/{id}/asks/{ask}", s.answer)
	mux.HandleFunc("POST /v1/runs/{id}/cancel", s.cancel)
	mux.HandleFunc("GET /v1/jobs", s.listJobs)
	mux.HandleFunc("POST /v1/jobs", s.createJob)
	mux.HandleFunc("GET /v1/jobs/{id}", s.getJob)
	mux.HandleFunc("DELETE /v1/jobs/{id}", s.deleteJob)
	mux.HandleFunc("POST /v1/jobs/{id}/pause", s.pauseJob(true))
	mux.HandleFunc("POST /v1/jobs/{id}/resume", s.pauseJob(false))
	mux.HandleFunc("GET /v1/triggers", s.listTriggers)
	mux.HandleFunc("POST /v1/triggers", s.createTrigger)
	mux.HandleFunc("GET /v1/triggers/{id}", s.getTrigger)
	mux.HandleFunc("PATCH /v1/triggers/{id}", s.updateTrigger)
	mux.HandleFunc("DELETE /v1/triggers/{id}", s.deleteTrigger)
	mux.HandleFunc("POST /v1/triggers/{id}/run", s.runTrigger)
	mux.HandleFunc("POST /v1/triggers/{id}/pause", s.pauseTrigger(true))
	mux.HandleFunc("POST /v1/triggers/{id}/resume", s.pauseTrigger(false))
	mux.HandleFunc("GET /v1/triggers/{id}/runs", s.triggerRuns)
	return mux
}

// authorized reports whether r carries the bearer token (or the server
// has none).
func (s *Server) authorized(r *http.Request) bool {
	return s.o.Token == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+s.o.Token)) == 1
}

// auth requires the bearer token (when the server has one), except for
// the console's paths (everything outside /v1/ when it is served: they
// have their own login).
func (s *Server) auth(next http.Handler, console bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open := r.URL.Path == "/openapi.json" || r.URL.Path == "/v1/health" ||
			console && !strings.HasPrefix(r.URL.Path, "/v1/")
		if !open && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gantry"`)
			writeError(w, http.StatusUnauthorized, serveapi.CodeUnauthorized, "a valid bearer token is required")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var b serveapi.ErrorBody
	b.Error.Code, b.Error.Message = code, msg
	writeJSON(w, status, b)
}

// fail writes the error response of err.
func (s *Server) fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, runqueue.ErrNotFound), errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, serveapi.CodeNotFound, err.Error())
	case errors.Is(err, runqueue.ErrInvalid), errors.Is(err, store.ErrInvalid):
		writeError(w, http.StatusBadRequest, serveapi.CodeInvalid, err.Error())
	case errors.Is(err, runqueue.ErrDuplicate), errors.Is(err, store.ErrExists):
		writeError(w, http.StatusConflict, serveapi.CodeDuplicate, err.Error())
	case errors.Is(err, runqueue.ErrEnded):
		writeError(w, http.StatusConflict, serveapi.CodeEnded, err.Error())
	case errors.Is(err, store.ErrBusy):
		// A locked database or a full disk: try again shortly.
		w.Header().Set("Retry-After", "2")
		writeError(w, http.StatusServiceUnavailable, serveapi.CodeUnavailable, err.Error())
	case errors.Is(err, runqueue.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, serveapi.CodeUnavailable, "the server is shutting down")
	default:
		s.log.Error("serve: request failed", "err", err)
		writeError(w, http.StatusInternalServerError, serveapi.CodeInternal, err.Error())
	}
}

// decode reads a JSON body strictly into v.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: request body: %v", runqueue.ErrInvalid, err)
	}
	return nil
}

// checkDir refuses a run directory that does not exist.
func checkDir(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: directory %q does not exist", runqueue.ErrInvalid, dir)
	}
	return nil
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var req runqueue.Request
	if err := decode(w, r, &req); err != nil {
		s.fail(w, err)
		return
	}
	req.Origin = runqueue.Origin{Kind: runqueue.OriginAPI, Retry: req.Origin.Retry}
	s.start(w, r.Context(), req)
}

func (s *Server) start(w http.ResponseWriter, ctx context.Context, req runqueue.Request) {
	if err := req.Validate(); err != nil {
		s.fail(w, err)
		return
	}
	if err := checkDir(req.Dir); err != nil {
		s.fail(w, err)
		return
	}
	run, err := s.engine.Start(ctx, req)
	if errors.Is(err, runqueue.ErrDuplicate) {
		var b serveapi.ErrorBody
		b.Error.Code, b.Error.Message, b.Run = serveapi.CodeDuplicate, err.Error(), &run
		writeJSON(w, http.StatusConflict, b)
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Location", "/v1/runs/"+run.ID)
	writeJSON(w, http.StatusCreated, run)
}

// filterOf reads a run filter from a query.
func filterOf(r *http.Request) (runqueue.Filter, error) {
	q := r.URL.Query()
	f := runqueue.Filter{Origin: q.Get("origin"), JobID: q.Get("job_id"), TriggerID: q.Get("trigger_id")}
	if st := q.Get("status"); st != "" {
		for _, x := range strings.Split(st, ",") {
			s := runqueue.Status(strings.TrimSpace(x))
			if !s.Valid() {
				return f, fmt.Errorf("%w: unknown status %q", runqueue.ErrInvalid, x)
			}
			f.Status = append(f.Status, s)
		}
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 || n > 1000 {
			return f, fmt.Errorf("%w: limit must be 0..1000", runqueue.ErrInvalid)
		}
		f.Limit = n
	}
	return f, nil
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) { s.writeRuns(w, r, "") }

// writeRuns answers a run listing of the query's filter (of one trigger
// when triggerID is set).
func (s *Server) writeRuns(w http.ResponseWriter, r *http.Request, triggerID string) {
	f, err := filterOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	if triggerID != "" {
		f.TriggerID = triggerID
	}
	runs, err := s.engine.List(r.Context(), f)
	if err != nil {
		s.fail(w, err)
		return
	}
	if runs == nil {
		runs = []runqueue.Run{}
	}
	writeJSON(w, http.StatusOK, serveapi.RunList{Runs: runs})
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.engine.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, run)
}

// events streams a run's events as SSE (Accept: text/event-stream), or
// returns one page of them as JSON.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	after := int64(0)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			s.fail(w, fmt.Errorf("%w: after must be an event sequence number", runqueue.ErrInvalid))
			return
		}
		after = n
	}
	run, err := s.engine.Get(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		s.eventPage(w, r, run, after)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, errors.New("streaming is not supported by this connection"))
		return
	}
	// A stream outlives the server's write timeout: its keep-alive
	// comments show a dead client instead.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	type item struct {
		ev  runqueue.Event
		err error
	}
	ch := make(chan item)
	// Live events (an engine's previews of a model call in flight) are
	// written between the recorded ones, without an id: a reconnecting
	// client resumes after the last recorded event.
	live := make(chan runqueue.Event, 64)
	if le, ok := s.engine.(runqueue.Live); ok && !run.Status.Ended() {
		go func() {
			for ev := range le.Live(ctx, id) {
				select {
				case live <- ev:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(ch)
		for ev, err := range s.engine.Events(ctx, id, after) {
			select {
			case ch <- item{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case it, ok := <-ch:
			if !ok {
				end, _ := s.engine.Get(context.WithoutCancel(ctx), id)
				data, _ := json.Marshal(map[string]any{"status": end.Status, "events": end.Events})
				fmt.Fprintf(w, "event: end\ndata: %s\n\n", data)
				fl.Flush()
				return
			}
			if it.err != nil {
				if ctx.Err() == nil {
					data, _ := json.Marshal(map[string]string{"message": it.err.Error()})
					fmt.Fprintf(w, "event: error\ndata: %s\n\n", data)
					fl.Flush()
				}
				return
			}
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", it.ev.Seq, it.ev.Type, it.ev.Data)
			fl.Flush()
		case ev := <-live:
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, ev.Data)
			fl.Flush()
		case <-tick.C:
			io.WriteString(w, ": keep-alive\n\n")
			fl.Flush()
		case <-ctx.Done():
			return
		}
	}
}

// eventPage returns the recorded events after a cursor, without waiting.
func (s *Server) eventPage(w http.ResponseWriter, r *http.Request, run runqueue.Run, after int64) {
	limit := 500
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 5000 {
			s.fail(w, fmt.Errorf("%w: limit must be 1..5000", runqueue.ErrInvalid))
			return
		}
		limit = n
	}
	page := serveapi.EventPage{Events: []runqueue.Event{}, Next: after}
	last := min(run.Events, after+int64(limit))
	if last > after {
		for ev, err := range s.engine.Events(r.Context(), run.ID, after) {
			if err != nil {
				s.fail(w, err)
				return
			}
			page.Events = append(page.Events, ev)
			page.Next = ev.Seq
			if ev.Seq >= last {
				break
			}
		}
	}
	page.Ended = run.Status.Ended() && page.Next >= run.Events
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	id, askID := r.PathValue("id"), r.PathValue("ask")
	run, err := s.engine.Get(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	var kind interaction.Kind
	for _, a := range run.Asks {
		if a.ID == askID {
			kind = a.Kind
		}
	}
	if kind == "" {
		s.fail(w, fmt.Errorf("%w: run %s has no pending ask %q", runqueue.ErrNotFound, id, askID))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		s.fail(w, fmt.Errorf("%w: %v", runqueue.ErrInvalid, err))
		return
	}
	ans, err := runqueue.DecodeAnswer(kind, body)
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := s.engine.Answer(r.Context(), id, askID, ans); err != nil {
		s.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	if err := s.engine.Cancel(r.Context(), r.PathValue("id")); err != nil {
		s.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	jobs, err := s.o.Store.ListCronJobs(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	if jobs == nil {
		jobs = []store.CronJob{}
	}
	writeJSON(w, http.StatusOK, serveapi.JobList{Jobs: jobs})
}

func (s *Server) createJob(w http.ResponseWriter, r *http.Request) {
	var jr serveapi.JobRequest
	if err := decode(w, r, &jr); err != nil {
		s.fail(w, err)
		return
	}
	j, err := NewJob(jr, s.now())
	if err == nil {
		err = checkDir(jr.Dir)
	}
	if err == nil {
		j, err = s.o.Store.CreateCronJob(r.Context(), j)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, j)
}

// NewJob turns an API (or CLI) job request into a stored job.
func NewJob(jr serveapi.JobRequest, now time.Time) (store.CronJob, error) {
	sp := cron.Spec{Cron: jr.Cron, Location: jr.Timezone, Prompt: jr.Prompt, Recurring: jr.Recurring == nil || *jr.Recurring,
		Dir: jr.Dir, Options: jr.Options, Catchup: jr.Catchup, Retry: jr.Retry,
		Overlap: jr.Overlap, MaxQueued: jr.MaxQueued}
	switch jr.Lifetime {
	case "":
	case "0":
		sp.Lifetime = -1
	default:
		d, err := time.ParseDuration(jr.Lifetime)
		if err != nil || d <= 0 {
			return store.CronJob{}, fmt.Errorf("%w: lifetime %q is not a positive duration", runqueue.ErrInvalid, jr.Lifetime)
		}
		sp.Lifetime = d
	}
	j, err := cron.NewJob("", sp, now)
	if err != nil {
		return store.CronJob{}, fmt.Errorf("%w: %v", runqueue.ErrInvalid, err)
	}
	return j, nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.o.Store.GetCronJob(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, j)
}

func (s *Server) deleteJob(w http.ResponseWriter, r *http.Request) {
	if err := s.o.Store.DeleteCronJob(r.Context(), r.PathValue("id")); err != nil {
		s.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pauseJob pauses (or resumes) a job and answers with it.
func (s *Server) pauseJob(paused bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		j, err := cron.Pause(r.Context(), s.o.Store, r.PathValue("id"), paused, s.now())
		if err != nil {
			s.fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, j)
	}
}

// pauseTrigger pauses (or resumes) a trigger's schedule and answers with
// its job.
func (s *Server) pauseTrigger(paused bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		j, err := trigger.Pause(r.Context(), s.o.Store, r.PathValue("id"), paused, s.now())
		if err != nil {
			s.fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, j)
	}
}

func (s *Server) listTriggers(w http.ResponseWriter, r *http.Request) {
	ts, err := trigger.List(r.Context(), s.o.Store)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"triggers": ts})
}

func readBody(w http.ResponseWriter, r *http.Request) (trigger.Body, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return trigger.Body{}, fmt.Errorf("%w: %v", runqueue.ErrInvalid, err)
	}
	return trigger.ParseBody(b)
}

func (s *Server) createTrigger(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(w, r)
	var t trigger.Trigger
	if err == nil && b.Dir != nil {
		err = checkDir(*b.Dir)
	}
	if err == nil {
		t, err = trigger.Create(r.Context(), s.o.Store, b, "", nil, s.now())
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, t)
}

func (s *Server) getTrigger(w http.ResponseWriter, r *http.Request) {
	t, err := trigger.Get(r.Context(), s.o.Store, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) updateTrigger(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(w, r)
	var t trigger.Trigger
	if err == nil && b.Dir != nil {
		err = checkDir(*b.Dir)
	}
	if err == nil {
		t, err = trigger.Update(r.Context(), s.o.Store, r.PathValue("id"), b, nil, s.now())
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) deleteTrigger(w http.ResponseWriter, r *http.Request) {
	if err := trigger.Delete(r.Context(), s.o.Store, r.PathValue("id")); err != nil {
		s.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) runTrigger(w http.ResponseWriter, r *http.Request) {
	t, err := trigger.Get(r.Context(), s.o.Store, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	s.start(w, r.Context(), trigger.Request(t))
}

func (s *Server) triggerRuns(w http.ResponseWriter, r *http.Request) {
	t, err := trigger.Get(r.Context(), s.o.Store, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	s.writeRuns(w, r, t.ID)
}
