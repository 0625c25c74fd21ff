// Package serve is `gantry serve`: a long-running process that runs the
// durable cron jobs of the store, records every run (transcript id,
// result, events) in it, marks the runs of a process that died as lost,
// and serves an HTTP API to start runs, stream their events (SSE, in
// stream-json shapes), answer their pending asks, list, inspect and cancel
// them, and manage jobs and triggers.
//
// Several serve processes may share one database: each fire of a job is
// leased to exactly one of them in a transaction, and each run's record
// carries a lease its process renews, so that a process killed mid-run has
// its runs reported lost (by the next process to look) instead of silently
// run again.
package serve

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/console"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
)

// Defaults of [Options].
const (
	DefaultLease = 30 * time.Second
	DefaultTick  = time.Second
	DefaultGrace = 30 * time.Second
	DefaultAddr  = "127.0.0.1:7777"
	// DefaultMaxConns caps the API's open connections.
	DefaultMaxConns = 256
	// HTTP timeouts of the API: request headers must arrive within
	// ReadHeaderTimeout, a whole request within ReadTimeout, a response
	// (not an event stream) within WriteTimeout; an idle keep-alive
	// connection is closed after IdleTimeout.
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 60 * time.Second
)

// keepEnded is how many ended runs a server keeps in memory (older ones
// are read from the store).
const keepEnded = 200

// Options configure a [Server]. Store and Runner are required.
type Options struct {
	// Store keeps jobs, runs, events and triggers (a durable store shared
	// by every serve process of this machine or cluster).
	Store store.Scheduling
	// Runner runs one run in this process (see [AgentRunner]).
	Runner runqueue.Runner
	// Engine, when set, runs the runs instead of this process's queue: a
	// distributed engine (gantry-temporal's, on Temporal) that keeps the
	// runs' records itself. Runner, MaxRunning and AskTimeout are then
	// unused; the store keeps jobs and triggers, and the scheduler hands
	// each fire to Engine with its Key.
	Engine runqueue.Engine
	// Owner names this process in leases ("" = [NewOwner]).
	Owner string
	// MaxRunning and AskTimeout configure the run queue (0 = its
	// defaults).
	MaxRunning int
	AskTimeout time.Duration
	// Notify, when set, is called with each notification a local run
	// sends, after its event line (runqueue.LocalOptions.Notify); the CLI
	// sets it from --notify-webhook.
	Notify func(ctx context.Context, runID string, n *interaction.NotificationRequest) error
	// Lease is how long a run or fire stays leased to this process without
	// a renewal (renewed every third of it; 0 = DefaultLease). A run whose
	// lease ran out is lost.
	Lease time.Duration
	// Tick is the scheduler's interval (0 = DefaultTick).
	Tick time.Duration
	// Grace is how long a shutdown waits for running runs before it
	// cancels them (0 = DefaultGrace).
	Grace time.Duration
	// Listener serves the HTTP API (nil = no API).
	Listener net.Listener
	// MaxConns caps the API's open connections (0 = DefaultMaxConns):
	// more wait to be accepted. IdleTimeout closes idle keep-alive
	// connections (0 = the IdleTimeout constant).
	MaxConns    int
	IdleTimeout time.Duration
	// Token is the API's bearer token. It is required unless the listener
	// is on a loopback address. The web console's login takes it too.
	Token string
	// TLS, when set, serves the API and the console over TLS on Listener
	// ([LoadTLS] makes it from PEM files). A caller that serves Handler on
	// its own TLS listener (no Listener) sets it too: the console then
	// marks its cookies Secure.
	TLS *tls.Config
	// NoConsole serves no web console: only the API (then every path but
	// the API's answers 401 without the token, else 404).
	NoConsole bool
	// ConsoleHosts are the names (host or host:port) the console answers
	// to besides the loopback names and the listener's own address: a
	// request whose Host header names another is refused (DNS rebinding).
	ConsoleHosts []string
	// InsecureConsole serves the console on a non-loopback listener
	// without TLS. Without it (or TLS, or NoConsole) New refuses such a
	// listener: the console's login would cross the network in clear
	// text.
	InsecureConsole bool
	// Home, when set, is the Gantry home where the server records its URL
	// ([serveapi.StateFile]) for local clients while it runs; TokenFile is
	// recorded with it. The console keeps its session key there
	// (console.KeyFile, created mode 0600) unless ConsoleKey is set, so
	// that its logins survive a restart; without either they live in this
	// process's memory.
	Home, TokenFile string
	// ConsoleKey is the console's session key (console.LoadKey), for a
	// server without Home whose logins should survive a restart.
	ConsoleKey []byte
	// Procs is the directory where the runs' running commands are
	// recorded ([sandbox.Ledger]; "" = <Home>/procs when Home is set, else
	// none). At start, and whenever it looks for lost runs, the server
	// kills what the commands of a dead serve process left and removes
	// their temporary files before it marks the runs lost. New gives an
	// [*AgentRunner] Runner without a Ledger this one.
	Procs string
	// Logger receives the server's log (nil = discard).
	Logger *slog.Logger
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Server is one serve process. Create it with [New]; [Server.Run] runs
// it until its context ends.
type Server struct {
	o       Options
	log     *slog.Logger
	now     func() time.Time
	local   *runqueue.Local
	engine  runqueue.Engine // *Engine, or Options.Engine
	sched   *cron.Scheduler
	kick    chan struct{} // a slot freed up or a run was queued: claim now
	url     string        // the API's URL once listening
	handler http.Handler  // the API and the console
}

// New returns a server; nothing runs until [Server.Run].
func New(o Options) (*Server, error) {
	if o.Store == nil || (o.Runner == nil && o.Engine == nil) {
		return nil, errors.New("serve: Options.Store and Runner (or Engine) are required")
	}
	if o.Owner == "" {
		o.Owner = NewOwner()
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Tick <= 0 {
		o.Tick = DefaultTick
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Procs == "" && o.Home != "" {
		o.Procs = filepath.Join(o.Home, "procs")
	}
	if ar, ok := o.Runner.(*AgentRunner); ok && ar.Ledger == nil && o.Procs != "" {
		ar.Ledger = &sandbox.Ledger{Dir: o.Procs, Owner: o.Owner}
	}
	if o.Listener != nil && o.Token == "" && !Loopback(o.Listener.Addr()) {
		return nil, fmt.Errorf("serve: the API listens on %s, which is not a loopback address: a token is required", o.Listener.Addr())
	}
	if o.Listener != nil && !o.NoConsole {
		if err := console.CheckListen(o.Listener.Addr(), o.TLS != nil, o.InsecureConsole); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	s := &Server{o: o, log: o.Logger, now: o.Now, kick: make(chan struct{}, 1)}
	if o.Engine != nil {
		s.engine = o.Engine
	} else {
		j := &Journal{Runs: o.Store, Lease: o.Lease, Now: o.Now}
		local, err := runqueue.NewLocal(runqueue.LocalOptions{Runner: o.Runner, Owner: o.Owner, MaxRunning: o.MaxRunning,
			AskTimeout: o.AskTimeout, Now: o.Now, Journal: j, KeepEnded: keepEnded, OnFree: s.wake, Notify: o.Notify})
		if err != nil {
			return nil, err
		}
		s.local = local
		// Every Start wakes the claim loop: a run may have gone to the
		// shared queue.
		s.engine = &waker{&Engine{local: local, runs: o.Store, poll: 250 * time.Millisecond}, s.wake}
	}
	var err error
	if s.handler, err = s.newHandler(); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	s.sched, err = cron.NewScheduler(cron.Options{Store: o.Store, Runs: o.Store, Engine: s.engine,
		Owner: o.Owner, Now: o.Now, Lease: o.Lease, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Engine returns the server's run queue.
func (s *Server) Engine() runqueue.Engine { return s.engine }

// Scheduler returns the server's cron scheduler.
func (s *Server) Scheduler() *cron.Scheduler { return s.sched }

// Loopback reports whether a listener address is a loopback address.
func Loopback(a net.Addr) bool {
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().IsLoopback()
}

// Run runs the server until ctx ends: it reports the runs of dead
// processes as lost, then runs the scheduler, renews its leases, watches
// for lost runs and serves the API. When ctx ends it stops starting runs,
// waits for the running ones up to the grace period (cancelling them
// after it), and returns.
func (s *Server) Run(ctx context.Context) error {
	if _, err := s.Reap(ctx); err != nil {
		return err
	}
	var srv *http.Server
	httpDone := make(chan error, 1)
	if s.o.Listener != nil {
		idle := s.o.IdleTimeout
		if idle <= 0 {
			idle = IdleTimeout
		}
		maxConns := s.o.MaxConns
		if maxConns <= 0 {
			maxConns = DefaultMaxConns
		}
		srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
			WriteTimeout: WriteTimeout, IdleTimeout: idle, MaxHeaderBytes: 64 << 10,
			BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
		ln := netutil.LimitListener(s.o.Listener, maxConns)
		scheme := "http"
		if s.o.TLS != nil {
			ln, scheme = tls.NewListener(ln, s.o.TLS), "https"
		}
		go func() { httpDone <- srv.Serve(ln) }()
		url := scheme + "://" + s.o.Listener.Addr().String()
		s.url = url
		s.log.Info("serve: API listening", "url", url, "auth", s.o.Token != "")
		if !s.o.NoConsole {
			s.log.Info("serve: console", "url", url+"/", "login", "the API token")
		}
		if err := s.writeState(url); err != nil {
			s.log.Warn("serve: recording the URL", "err", err)
		}
	}
	s.log.Info("serve: started", "owner", s.o.Owner)

	loops, stopLoops := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(3)
	sctx, stopSched := context.WithCancel(ctx)
	go func() { defer wg.Done(); s.sched.Run(sctx, s.o.Tick) }()
	go func() { defer wg.Done(); s.claim(sctx) }()
	go func() { defer wg.Done(); s.maintain(loops) }()

	<-ctx.Done()
	s.log.Info("serve: stopping; waiting for running runs", "grace", s.o.Grace)
	stopSched()
	gctx, cancel := context.WithTimeout(context.Background(), s.o.Grace)
	if s.local != nil {
		if err := s.local.Shutdown(gctx); err != nil {
			s.log.Warn("serve: runs still running after the grace period were cancelled")
		}
	}
	cancel()
	if srv != nil {
		sh, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(sh)
		cancel()
		<-httpDone
		s.removeState()
	}
	stopLoops()
	wg.Wait()
	s.log.Info("serve: stopped")
	return nil
}

// claimEvery is how often a server with free slots looks at the shared
// queue (besides when a slot frees up or it queues a run itself).
const claimEvery = 200 * time.Millisecond

// wake makes the claim loop look at the shared queue now.
func (s *Server) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// waker wakes the claim loop after each Start (a cron fire goes to the
// shared queue).
type waker struct {
	runqueue.Engine
	wake func()
}

func (w *waker) Start(ctx context.Context, req runqueue.Request) (runqueue.Run, error) {
	r, err := w.Engine.Start(ctx, req)
	w.wake()
	return r, err
}

// claim takes runs of the shared queue while this process has free slots,
// until ctx ends: whichever serve process has room runs the next run.
func (s *Server) claim(ctx context.Context) {
	if s.local == nil {
		return
	}
	t := time.NewTicker(claimEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
		if _, err := s.ClaimOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("serve: claiming queued runs", "err", err)
		}
	}
}

// ClaimOnce claims as many runs of the shared queue as this process has
// free slots and starts them; it returns how many it started.
func (s *Server) ClaimOnce(ctx context.Context) (int, error) {
	free := s.local.Free()
	if free <= 0 {
		return 0, nil
	}
	recs, err := s.o.Store.ClaimRuns(ctx, s.o.Owner, s.now().Add(s.o.Lease), free)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rec := range recs {
		r, err := decodeRun(rec)
		if err == nil {
			err = s.local.Adopt(r)
		}
		if err != nil {
			// Give it back to the queue for another process.
			r.Owner, r.Status = "", runqueue.StatusQueued
			if b, merr := json.Marshal(r); merr == nil {
				rec.Data = b
			}
			rec.Status, rec.Owner, rec.LeaseUntil = store.RunQueued, "", time.Time{}
			if _, uerr := s.o.Store.UpdateRunIf(context.WithoutCancel(ctx), rec, store.RunRunning, s.o.Owner); uerr != nil {
				s.log.Error("serve: giving a claimed run back", "run", rec.ID, "err", uerr)
			}
			continue
		}
		s.log.Info("serve: claimed a queued run", "run", rec.ID, "origin", rec.Origin, "job", rec.JobID)
		n++
	}
	return n, nil
}

// maintain renews this process's leases and reaps lost runs until ctx
// ends.
func (s *Server) maintain(ctx context.Context) {
	renew := time.NewTicker(s.o.Lease / 3)
	defer renew.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			if err := s.o.Store.RenewLeases(ctx, s.o.Owner, s.now().Add(s.o.Lease)); err != nil && ctx.Err() == nil {
				s.log.Error("serve: renewing leases", "err", err)
			}
			if _, err := s.Reap(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("serve: reaping lost runs", "err", err)
			}
			if s.url != "" {
				_ = s.writeState(s.url) // another serve's record may have gone
			}
		}
	}
}

// Reap kills what the commands of dead processes on this host left
// (see Options.Procs), then marks lost the live runs whose process died
// (its lease ran out, or it ran on this host and is gone) and the fires leased by such a process
// before their run started; each is logged, and started again when its
// request asks for retry. It returns the lost runs.
func (s *Server) Reap(ctx context.Context) ([]runqueue.Run, error) {
	if s.o.Procs != "" {
		// Kill what dead processes' commands left before their runs are
		// reported lost: nothing of a lost run runs on.
		rep, err := sandbox.ReapLedger(s.o.Procs, Dead)
		if err != nil {
			s.log.Warn("serve: reaping the commands of dead processes", "err", err)
		}
		if rep.Commands > 0 {
			s.log.Warn("serve: killed what commands of a dead process left", "commands", rep.Commands,
				"processes", rep.Killed, "temp_files", rep.Removed)
		}
	}
	now := s.now()
	var lost, requeued []runqueue.Run
	_, err := s.o.Store.ReapRuns(ctx, now, Dead, func(rec store.RunRecord) store.RunRecord {
		r, err := decodeRun(rec)
		if err != nil {
			rec.Status = store.RunLost
			return rec
		}
		if r.StartedAt.IsZero() && rec.LastSeq == 0 {
			// Never started (queued, or claimed and not yet launched):
			// another process runs it.
			r.Owner = ""
			if b, err := json.Marshal(r); err == nil {
				rec.Data = b
			}
			rec.Status = store.RunQueued
			requeued = append(requeued, r)
			return rec
		}
		r.Status, r.EndedAt, r.Asks = runqueue.StatusLost, now, nil
		r.Error = fmt.Sprintf("lost: its process (%s) died or stopped renewing its lease; the outcome is unknown", rec.Owner)
		if b, err := json.Marshal(r); err == nil {
			rec.Data = b
		}
		rec.Status = store.RunLost
		lost = append(lost, r)
		return rec
	})
	if err != nil {
		return nil, fmt.Errorf("serve: reap: %w", err)
	}
	for _, r := range requeued {
		s.log.Warn("serve: a queued run of a dead process was queued again", "run", r.ID, "origin", r.Request.Origin.Kind)
	}
	if len(requeued) > 0 {
		s.wake()
	}
	for _, r := range lost {
		s.log.Warn("serve: run lost", "run", r.ID, "owner", r.Owner, "origin", r.Request.Origin.Kind, "job", r.Request.Origin.JobID)
		if r.Request.Origin.Retry && !strings.HasSuffix(r.Request.Key, "/retry") {
			req := r.Request
			req.Key = req.Key + "/retry"
			if req.Key == "/retry" {
				req.Key = "retry:" + r.ID
			}
			if nr, err := s.engine.Start(ctx, req); err == nil {
				s.log.Info("serve: lost run started again (retry)", "run", r.ID, "new", nr.ID)
			}
		}
	}
	if _, err := s.sched.Reap(ctx, Dead); err != nil {
		return lost, err
	}
	return lost, nil
}

// writeState records this server's URL for local clients, unless another
// live serve process is recorded there (the first one stays; this one
// records itself when that one's record goes).
func (s *Server) writeState(url string) error {
	if s.o.Home == "" {
		return nil
	}
	path := filepath.Join(s.o.Home, serveapi.StateFile)
	if b, err := os.ReadFile(path); err == nil {
		var st serveapi.State
		if json.Unmarshal(b, &st) == nil && st.Owner == s.o.Owner {
			return nil
		}
		if json.Unmarshal(b, &st) == nil && st.Owner != s.o.Owner && st.PID > 0 && serveapi.Alive(st.PID) && !Dead(st.Owner) {
			return nil
		}
	}
	b, _ := json.Marshal(serveapi.State{URL: url, PID: os.Getpid(), Owner: s.o.Owner, TokenFile: s.o.TokenFile})
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// removeState removes the state file if it is still this process's.
func (s *Server) removeState() {
	if s.o.Home == "" {
		return
	}
	path := filepath.Join(s.o.Home, serveapi.StateFile)
	b, err := os.ReadFile(path)
	var st serveapi.State
	if err == nil && json.Unmarshal(b, &st) == nil && st.Owner == s.o.Owner {
		os.Remove(path)
	}
}

// Live implements [runqueue.Live] when the wrapped engine does.
func (w *waker) Live(ctx context.Context, id string) iter.Seq[runqueue.Event] {
	if le, ok := w.Engine.(runqueue.Live); ok {
		return le.Live(ctx, id)
	}
	return func(func(runqueue.Event) bool) {}
}

// ErrTLSHalf is [LoadTLS]'s error for a certificate without its key or a
// key without its certificate.
var ErrTLSHalf = errors.New("serve: a TLS certificate needs its key, and a key its certificate")

// LoadTLS returns the server TLS configuration of the PEM certificate
// (chain) in certFile and its private key in keyFile, TLS 1.2 at least;
// nil when both are "" (plain HTTP). One without the other is
// [ErrTLSHalf]. The files are read once: a renewed certificate takes a
// restart.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "" || keyFile == "":
		return nil, ErrTLSHalf
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serve: TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
