package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/session"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/temporal/durable"
)

func newServeCmd(a *app) *cobra.Command {
	var c conn
	var listen, tokenFile, dbPath string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "The HTTP API of gantry serve, backed by Temporal",
		Long: `Serve gantry serve's HTTP API — start runs, follow their events (SSE, in
stream-json shapes), answer their asks, list, inspect and cancel them,
/openapi.json — with runs executed by the workers of the task queue. Runs
are Temporal's records, so any number of serve processes can share them.
Cron jobs and triggers are kept in a local database (--db); each fire
starts at most one run (its key is the workflow id).

On a loopback address no token is needed; elsewhere the API needs the
bearer token in --token-file (or GANTRY_SERVE_TOKEN).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			if dbPath == "" {
				home, err := session.DefaultHome(a.getenv)
				if err != nil {
					return err
				}
				dbPath = filepath.Join(home, "temporal-serve.db")
			}
			if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
				return err
			}
			st, err := store.OpenSQLite(ctx, dbPath, store.SQLiteOptions{})
			if err != nil {
				return fmt.Errorf("open %s: %w", dbPath, err)
			}
			defer st.Close()
			token := a.getenv("GANTRY_SERVE_TOKEN")
			if tokenFile != "" {
				b, err := os.ReadFile(tokenFile)
				if err != nil {
					return &exitError{code: 2, err: fmt.Errorf("--token-file: %w", err)}
				}
				token = strings.TrimSpace(string(b))
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			srv, err := serve.New(serve.Options{
				Store:    st,
				Engine:   durable.NewEngine(cl, durable.EngineOptions{TaskQueue: c.queue, DataConverter: c.dc}),
				Listener: ln, Token: token,
				Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			})
			if err != nil {
				ln.Close()
				return &exitError{code: 2, err: err}
			}
			fmt.Fprintf(a.stderr, "gantry-temporal: API on http://%s (runs on task queue %q at %s)\n", ln.Addr(), c.queue, c.address)
			if err := srv.Run(ctx); err != nil && !errors.Is(err, ctx.Err()) {
				return err
			}
			return nil
		},
	}
	c.add(cmd, a)
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:8484", "address of the HTTP API")
	fl.StringVar(&tokenFile, "token-file", "", "file holding the API's bearer token (required off loopback)")
	fl.StringVar(&dbPath, "db", "", "database of cron jobs and triggers (default: $GANTRY_HOME/temporal-serve.db)")
	return cmd
}
