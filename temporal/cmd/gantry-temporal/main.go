// Command gantry-temporal runs Gantry agents on Temporal: `worker` polls a
// task queue and executes runs, `run` starts one run and follows it,
// `serve` offers the run API over HTTP, `answer` and `cancel` act on a run.
// See docs/distributed.md in the repository.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// app is the process's streams and environment (tests replace them).
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// exitError carries an exit code; an empty message prints nothing.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func main() {
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot(a).ExecuteContext(ctx)
	stop()
	if err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(a.stderr, "gantry-temporal:", msg)
		}
		os.Exit(code)
	}
}

func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:           "gantry-temporal",
		Short:         "Run Gantry agents on Temporal: durable, resumable runs across workers",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.AddCommand(newWorkerCmd(a), newRunCmd(a), newServeCmd(a), newAnswerCmd(a), newCancelCmd(a), newBlobsCmd(a), newCronCmd(a))
	return root
}

// conn are the flags that reach a Temporal service.
type conn struct {
	address, namespace, queue string
	tls                       bool
	cert, key, ca, serverName string
	apiKey                    string
	blobs                     blobFlags
	// dc is the data converter dial used (the claim-check codec's).
	dc converter.DataConverter
}

func (c *conn) add(cmd *cobra.Command, a *app) {
	fl := cmd.Flags()
	fl.StringVar(&c.address, "address", envOr(a, "TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	fl.StringVar(&c.namespace, "namespace", envOr(a, "TEMPORAL_NAMESPACE", "default"), "Temporal namespace (env TEMPORAL_NAMESPACE)")
	fl.StringVar(&c.queue, "task-queue", "gantry", "task queue the workers poll")
	fl.BoolVar(&c.tls, "tls", false, "connect with TLS (implied by --tls-cert, --tls-ca and --api-key)")
	fl.StringVar(&c.cert, "tls-cert", "", "client certificate file (mTLS, Temporal Cloud)")
	fl.StringVar(&c.key, "tls-key", "", "client key file (mTLS)")
	fl.StringVar(&c.ca, "tls-ca", "", "CA certificate file to verify the server with (default: the system's)")
	fl.StringVar(&c.serverName, "tls-server-name", "", "server name to verify (default: the address's host)")
	fl.StringVar(&c.apiKey, "api-key", "", "API key (Temporal Cloud); default: the TEMPORAL_API_KEY environment variable")
	c.blobs.add(cmd)
}

func envOr(a *app, k, def string) string {
	if v := a.getenv(k); v != "" {
		return v
	}
	return def
}

// dial connects to Temporal with the flags.
func (c *conn) dial(a *app) (client.Client, error) {
	opts := client.Options{HostPort: c.address, Namespace: c.namespace, Logger: quietLogger{}}
	dc, err := c.blobs.dataConverter(a)
	if err != nil {
		return nil, err
	}
	opts.DataConverter, c.dc = dc, dc
	key := c.apiKey
	if key == "" {
		key = a.getenv("TEMPORAL_API_KEY")
	}
	if key != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	if c.tls || c.cert != "" || c.ca != "" || key != "" {
		cfg := &tls.Config{ServerName: c.serverName, MinVersion: tls.VersionTLS12}
		if c.cert != "" || c.key != "" {
			pair, err := tls.LoadX509KeyPair(c.cert, c.key)
			if err != nil {
				return nil, &exitError{code: 2, err: fmt.Errorf("--tls-cert/--tls-key: %w", err)}
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		if c.ca != "" {
			pem, err := os.ReadFile(c.ca)
			if err != nil {
				return nil, &exitError{code: 2, err: fmt.Errorf("--tls-ca: %w", err)}
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, &exitError{code: 2, err: fmt.Errorf("--tls-ca: no certificate in %s", c.ca)}
			}
			cfg.RootCAs = pool
		}
		opts.ConnectionOptions.TLS = cfg
	}
	cl, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", c.address, c.namespace, err)
	}
	return cl, nil
}

// quietLogger drops the SDK's info and debug lines; warnings and errors go
// to stderr.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"gantry-temporal: warn:", msg}, kv...)...)
}
func (quietLogger) Error(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"gantry-temporal: error:", msg}, kv...)...)
}
