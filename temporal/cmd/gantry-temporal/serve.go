package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/console"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/transcript"
)

func newServeCmd(a *app) *cobra.Command {
	var c conn
	var listen, tokenFile, dbPath, listenCert, listenKey string
	var noConsole, insecureConsole bool
	var consoleHosts []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "The HTTP API of gantry serve, backed by Temporal",
		Long: `Serve gantry serve's HTTP API — start runs, follow their events (SSE, in
stream-json shapes), answer their asks, list, inspect and cancel them,
/openapi.json — with runs executed by the workers of the task queue. Runs
are Temporal's records, so any number of serve processes can share them.
Durable cron jobs (POST /v1/jobs, a trigger's schedule, the CronCreate tool
of the workers' runs) are Temporal Schedules: the Temporal service fires
them, one run per fire, whether or not a serve process runs. Triggers are
kept in a local database (--db).

Followers of a run's events (SSE) get the model's text deltas as they are
written when the workers stream them here: start the workers with
--live http://ADDRESS (the API's address; the same token).

On a loopback address no token is needed; elsewhere the API needs the
bearer token in --token-file (or GANTRY_SERVE_TOKEN).

The API and the console are served over TLS with --listen-tls-cert and
--listen-tls-key (PEM files; --tls-cert and --tls-key are the Temporal
connection's client certificate).

The web console of gantry serve is served at / (log in with the token;
--no-console for none). Off loopback the console needs TLS (or a
TLS-terminating proxy in front, with its name in --console-host, and
--insecure-console).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			token := a.getenv("GANTRY_SERVE_TOKEN")
			if tokenFile != "" {
				b, err := os.ReadFile(tokenFile)
				if err != nil {
					return &exitError{code: 2, err: fmt.Errorf("--token-file: %w", err)}
				}
				token = strings.TrimSpace(string(b))
			}
			tlsConf, err := serve.LoadTLS(listenCert, listenKey)
			if errors.Is(err, serve.ErrTLSHalf) {
				return &exitError{code: 2, err: errors.New("--listen-tls-cert and --listen-tls-key go together")}
			} else if err != nil {
				return &exitError{code: 1, err: err}
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer ln.Close()
			if token == "" && !serve.Loopback(ln.Addr()) {
				return &exitError{code: 2, err: fmt.Errorf("the API listens on %s, which is not a loopback address: a token is required (--token-file)", ln.Addr())}
			}
			if !noConsole {
				if err := console.CheckListen(ln.Addr(), tlsConf != nil, insecureConsole); err != nil {
					return &exitError{code: 2, err: err}
				}
				if ap, err := netip.ParseAddrPort(ln.Addr().String()); err == nil && !ap.Addr().IsUnspecified() {
					consoleHosts = append(consoleHosts, ap.Addr().String())
				}
			}
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			home, err := transcript.DefaultHome(a.getenv)
			if err != nil {
				return err
			}
			if dbPath == "" {
				dbPath = filepath.Join(home, "temporal-serve.db")
			}
			if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
				return err
			}
			var consoleKey []byte
			if !noConsole {
				// Logins survive a restart: their key is kept in the home.
				if err := os.MkdirAll(home, 0o700); err != nil {
					return err
				}
				if consoleKey, err = console.LoadKey(filepath.Join(home, console.KeyFile)); err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			st, err := store.OpenSQLite(ctx, dbPath, store.SQLiteOptions{})
			if err != nil {
				return fmt.Errorf("open %s: %w", dbPath, err)
			}
			defer st.Close()
			broker := &durable.Broker{}
			srv, err := serve.New(serve.Options{
				Store:      durable.SchedulingStore(st, durable.NewJobs(cl, durable.JobsOptions{TaskQueue: c.queue, DataConverter: c.dc})),
				Engine:     durable.NewEngine(cl, durable.EngineOptions{TaskQueue: c.queue, DataConverter: c.dc, Live: broker}),
				Token:      token,
				TLS:        tlsConf, // served on ln below; the console's cookies are Secure
				ConsoleKey: consoleKey,
				NoConsole:  noConsole, ConsoleHosts: consoleHosts,
				Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			})
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			// The API, and the live endpoint the workers stream their
			// model calls' events to (worker --live URL).
			mux := http.NewServeMux()
			mux.Handle(durable.LivePath, broker.Handler(token))
			mux.Handle("/", srv.Handler())
			hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
				BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
			httpDone := make(chan error, 1)
			scheme, sln := "http", ln
			if tlsConf != nil {
				scheme, sln = "https", tls.NewListener(ln, tlsConf)
			}
			go func() { httpDone <- hs.Serve(sln) }()
			fmt.Fprintf(a.stderr, "gantry-temporal: API on %[1]s://%[2]s (runs on task queue %[3]q at %[4]s; workers stream live events to it with --live %[1]s://%[2]s)\n",
				scheme, ln.Addr(), c.queue, c.address)
			runErr := srv.Run(ctx)
			sh, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			hs.Shutdown(sh)
			cancel()
			<-httpDone
			if runErr != nil && !errors.Is(runErr, ctx.Err()) {
				return runErr
			}
			return nil
		},
	}
	c.add(cmd, a)
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:8484", "address of the HTTP API")
	fl.StringVar(&tokenFile, "token-file", "", "file holding the API's bearer token (required off loopback)")
	fl.StringVar(&dbPath, "db", "", "database of triggers (default: $GANTRY_HOME/temporal-serve.db)")
	fl.StringVar(&listenCert, "listen-tls-cert", "", "serve the API and the console over TLS with this certificate (PEM; with --listen-tls-key)")
	fl.StringVar(&listenKey, "listen-tls-key", "", "the serving certificate's private key (PEM)")
	fl.BoolVar(&noConsole, "no-console", false, "serve no web console (only the API)")
	fl.BoolVar(&insecureConsole, "insecure-console", false, "serve the console on a non-loopback address without TLS (the login crosses the network in clear text)")
	fl.StringSliceVar(&consoleHosts, "console-host", nil, "a host name the console answers to (besides loopback names and the listening address; repeatable)")
	return cmd
}
