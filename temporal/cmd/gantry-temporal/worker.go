package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/worker"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmenv"
	"github.com/gantry-dev/gantry/temporal/durable"
)

func newWorkerCmd(a *app) *cobra.Command {
	var c conn
	var maxRuns int
	var sticky, idle time.Duration
	var provider, model string
	var live []string
	var liveTokenFile string
	var encodingCacheMB int64
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Poll the task queue and execute runs (model calls and tool calls happen here)",
		Long: `Poll a Temporal task queue and execute Gantry runs: the agent loop (workflow
tasks), model calls and tool calls (activities). Tool calls run in the run's
working directory on this machine, through Gantry's permission pipeline.

The model provider comes from this process's environment, as for gantry:
ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL) selects Anthropic, else OPENAI_API_KEY
or OPENAI_BASE_URL an OpenAI-compatible server. Stop with Ctrl-C or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pubs, err := livePublishers(a, live, liveTokenFile)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			p, m, err := newProvider(a, provider, model)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			wopts := durable.WorkerOptions{Provider: p, Model: m, Getenv: a.getenv, IdleRuntime: idle, Live: pubs,
				CronJobs: durable.NewJobs(cl, durable.JobsOptions{TaskQueue: c.queue, DataConverter: c.dc})}
			switch {
			case encodingCacheMB < 0:
				wopts.EncodingCacheBytes = -1
			case encodingCacheMB > 0:
				wopts.EncodingCacheBytes = encodingCacheMB << 20
			}
			acts, err := durable.NewActivities(wopts)
			if err != nil {
				return err
			}
			defer acts.Close()
			wo := worker.Options{StickyScheduleToStartTimeout: sticky}
			if maxRuns > 0 {
				wo.MaxConcurrentActivityExecutionSize = maxRuns
				wo.MaxConcurrentWorkflowTaskExecutionSize = max(2, maxRuns)
			}
			w := worker.New(cl, c.queue, wo)
			durable.Register(w, acts)
			fmt.Fprintf(a.stderr, "gantry-temporal: worker polling %q on %s (namespace %s), model %s\n", c.queue, c.address, c.namespace, m)
			stop := make(chan any)
			go func() {
				<-cmd.Context().Done()
				close(stop)
			}()
			return w.Run(stop)
		},
	}
	c.add(cmd, a)
	fl := cmd.Flags()
	fl.IntVar(&maxRuns, "max-concurrent-runs", 0, "most model and tool calls this worker runs at once (0 = the SDK's default, 1000); runs waiting for an answer do not count")
	fl.DurationVar(&sticky, "sticky-timeout", 2*time.Second, "how long a run's next step waits for this worker before any worker may take it")
	fl.DurationVar(&idle, "idle-runtime", durable.DefaultIdleRuntime, "how long the runtime of a run (tool pool, MCP servers, permission state) is kept between its steps")
	fl.Int64Var(&encodingCacheMB, "encoding-cache-mb", durable.DefaultEncodingCacheBytes>>20, "memory bound, over all runs, of the encoded messages kept between a run's model calls (so that a turn encodes only what it adds); negative keeps none")
	fl.StringVar(&provider, "provider", "", "model provider: anthropic or openai (default: from the environment)")
	fl.StringArrayVar(&live, "live", nil, "URL of a gantry-temporal serve to stream the model calls' events to (its SSE followers see text deltas as they are written); repeatable")
	fl.StringVar(&liveTokenFile, "live-token-file", "", "file holding that serve's bearer token (default: GANTRY_SERVE_TOKEN)")
	fl.StringVar(&model, "model", "", "default model of runs that name none (default: GANTRY_MODEL, else the provider's)")
	return cmd
}

// livePublishers are the publishers of --live (nil without one).
func livePublishers(a *app, urls []string, tokenFile string) (durable.Publisher, error) {
	if len(urls) == 0 {
		return nil, nil
	}
	token := a.getenv("GANTRY_SERVE_TOKEN")
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--live-token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	var pubs durable.Publishers
	for _, u := range urls {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("--live %q: want the http(s) URL of a gantry-temporal serve", u)
		}
		pubs = append(pubs, &durable.HTTPPublisher{URL: u, Token: token})
	}
	return pubs, nil
}

// newProvider picks the provider as gantry does (see package llmenv).
func newProvider(a *app, name, model string) (llm.Provider, string, error) {
	return llmenv.Provider(name, model, a.getenv)
}
