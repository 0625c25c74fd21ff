package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/builtin/notify"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

func newServeCmd(a *app) *cobra.Command {
	var addr, tokenFile, provider, model, tlsCert, tlsKey string
	var noHTTP bool
	var o serve.Options
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run durable cron jobs and serve the run API (foreground; SIGTERM drains)",
		Long: `gantry serve runs the durable cron jobs of $GANTRY_HOME/gantry.db as agent runs,
records every run (transcript id, events, result), reports the runs of a serve
process that died as lost, and serves an HTTP API (--http, default
127.0.0.1:7777; bearer token from --token-file, default
$GANTRY_HOME/serve.token, created when missing): start runs, stream their
events (SSE), answer their asks, list, inspect and cancel them, manage jobs
and triggers. The API is described at /openapi.json. The same address serves
a web console at / (log in with the token; --no-console for none): off
loopback it needs TLS (--tls-cert, --tls-key) or --insecure-console, and it
answers only to loopback names, the listening address and --console-host.
Logs go to stderr.
SIGTERM or SIGINT stops starting runs and waits for the running ones up to
--grace.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			log := slog.New(slog.NewTextHandler(a.stderr, nil))
			if _, _, err := newProvider(a, provider, model); err != nil {
				return &exitError{code: 1, err: err}
			}
			path, err := storePath(a)
			if err != nil {
				return err
			}
			home := filepath.Dir(path)
			// A busy database answers 503 within ~2 s instead of blocking.
			st, err := store.OpenSQLite(ctx, path, store.SQLiteOptions{BusyTimeout: serveBusyTimeout})
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer st.Close()
			if err := st.QuickCheck(ctx); err != nil {
				return &exitError{code: 1, err: fmt.Errorf("%w\nserve refuses a damaged database. Stop every gantry process using it, keep a copy, then "+
					"recover with `sqlite3 %s .recover | sqlite3 recovered.db` and move recovered.db in its place, or restore a backup", err, path)}
			}
			sessHome, err := transcript.DefaultHome(a.getenv)
			if err != nil {
				return err
			}
			o.Store, o.Logger, o.Home = st, log, home
			o.Runner = &serve.AgentRunner{
				NewProvider: func(_ context.Context, m string) (llm.Provider, string, error) {
					if m == "" {
						m = model
					}
					return newProvider(a, provider, m)
				},
				Store:    st,
				Sessions: transcript.NewStore(sessHome),
				Workspace: func(wo *workspace.Options) {
					wo.Getenv, wo.UserHome = a.getenv, a.getenv("HOME")
					wo.Warn = func(msg string) { log.Warn(msg) }
					wo.Builtin.Trigger = triggerOptions(a)
				},
			}
			if !noHTTP {
				if tokenFile == "" {
					tokenFile = filepath.Join(home, "serve.token")
				}
				if o.Token, err = loadToken(tokenFile); err != nil {
					return &exitError{code: 1, err: err}
				}
				o.TokenFile = tokenFile
				if o.TLS, err = serve.LoadTLS(tlsCert, tlsKey); errors.Is(err, serve.ErrTLSHalf) {
					return &exitError{code: 2, err: errors.New("--tls-cert and --tls-key go together")}
				} else if err != nil {
					return &exitError{code: 1, err: err}
				}
				// Where a client finds the bearer token (never the token).
				log.Info("serve: API token", "token_file", tokenFile, "use", "Authorization: Bearer $(cat "+tokenFile+")")
				if o.Listener, err = net.Listen("tcp", addr); err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			srv, err := serve.New(o)
			if err != nil {
				if o.Listener != nil {
					o.Listener.Close()
				}
				return &exitError{code: 2, err: err}
			}
			return srv.Run(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&addr, "http", serve.DefaultAddr, "address of the HTTP API")
	fl.BoolVar(&noHTTP, "no-http", false, "serve no API (only run the cron jobs)")
	fl.StringVar(&tokenFile, "token-file", "", "file holding the API's bearer token (default $GANTRY_HOME/serve.token, created when missing)")
	fl.IntVar(&o.MaxRunning, "max-running", 0, "runs at once (default 4; more wait queued)")
	fl.DurationVar(&o.Grace, "grace", serve.DefaultGrace, "how long a shutdown waits for running runs")
	fl.DurationVar(&o.Lease, "lease", serve.DefaultLease, "lease of a run: a process silent this long has its runs reported lost")
	fl.DurationVar(&o.AskTimeout, "ask-timeout", 0, "how long a run waits for an answer to an ask before it is denied (default 1h)")
	fl.StringVar(&provider, "provider", "", "model provider: anthropic or openai (default: from the environment)")
	fl.StringVar(&model, "model", "", "default model of the runs")
	fl.Func("notify-webhook", "POST each run's notifications (PushNotification) as JSON to this URL", func(u string) error {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("%q is not an http(s) URL", u)
		}
		wh := &notify.Webhook{URL: u}
		o.Notify = func(ctx context.Context, _ string, n *interaction.NotificationRequest) error { return wh.Send(ctx, n) }
		return nil
	})
	fl.StringVar(&tlsCert, "tls-cert", "", "serve the API and the console over TLS with this certificate (PEM; with --tls-key)")
	fl.StringVar(&tlsKey, "tls-key", "", "the TLS certificate's private key (PEM)")
	fl.BoolVar(&o.NoConsole, "no-console", false, "serve no web console (only the API)")
	fl.BoolVar(&o.InsecureConsole, "insecure-console", false, "serve the console on a non-loopback address without TLS (the login crosses the network in clear text)")
	fl.StringSliceVar(&o.ConsoleHosts, "console-host", nil, "a host name the console answers to (besides loopback names and the listening address; repeatable)")
	return cmd
}

// loadToken reads the API token, creating the file with a random token
// (mode 0600) when it does not exist.
func loadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		buf := make([]byte, 32)
		rand.Read(buf)
		tok := hex.EncodeToString(buf)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return loadToken(path) // created meanwhile by another serve
		}
		_, werr := f.WriteString(tok + "\n")
		if err := errors.Join(werr, f.Close()); err != nil {
			return "", fmt.Errorf("token file: %w", err)
		}
		return tok, nil
	}
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("token file %s is readable by others (mode %04o): run `chmod 600 %s` (or remove it to have a new one made)",
			path, fi.Mode().Perm(), path)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minTokenLen {
		return "", fmt.Errorf("token file %s holds a token of %d characters; at least %d are required (128 bits as hex): "+
			"remove it to have a random one made, or write e.g. `openssl rand -hex 32`", path, len(tok), minTokenLen)
	}
	return tok, nil
}

// serveBusyTimeout bounds how long serve waits for a locked database.
const serveBusyTimeout = 2 * time.Second

// minTokenLen is the shortest API token accepted: 128 bits written as
// hex.
const minTokenLen = 32
