package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gantry-dev/gantry/serve/servecli"

	"github.com/gantry-dev/gantry/interaction"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/builtin/triggertool"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
)

// openScheduling opens the CLI's database for the cron and runs commands
// (created when missing: a job added before serve ever ran is kept).
func openScheduling(cmd *cobra.Command, a *app) (*store.SQLite, error) {
	path, err := storePath(a)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenSQLite(cmd.Context(), path, store.SQLiteOptions{})
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	return st, nil
}

func newCronCmd(a *app) *cobra.Command {
	return servecli.CronCommand(servecli.CronOptions{
		Open: func(cmd *cobra.Command) (servecli.Jobs, func() error, error) {
			st, err := openScheduling(cmd, a)
			if err != nil {
				return nil, nil, err
			}
			return st, st.Close, nil
		},
		Stdout: a.stdout,
		Exit:   func(code int, err error) error { return &exitError{code: code, err: err} },
		Short:  "List, add, pause, resume and remove durable cron jobs (run by gantry serve)",
		Long: `Durable cron jobs are kept in $GANTRY_HOME/gantry.db and run by gantry serve:
each fire is an agent run of the job's prompt in its directory, with its
permission options. Schedules are 5-field cron expressions in local time
(or --timezone).`,
		AddExample: `  gantry cron add "0 9 * * 1-5" "Summarise yesterday's commits in NOTES.md"
  gantry cron add --once "30 17 * * *" "Run the slow test suite and report failures"`,
		FlagHelp:      map[string]string{"catchup": "fires missed while serve was down: once (default, run one) or none (skip)"},
		LocalDelivery: true,
		CheckDir:      true,
		Added: func(j store.CronJob) string {
			return fmt.Sprintf("Added job %s (%s); next run %s. gantry serve runs it.", j.ID, j.Cron, j.NextAt.Local().Format("Mon 2006-01-02 15:04 MST"))
		},
	})
}

func newRunsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List and inspect the runs of gantry serve (cron fires, API and trigger runs)",
	}
	cmd.AddCommand(newRunsListCmd(a), newRunsShowCmd(a), newRunsLogsCmd(a))
	return cmd
}

func newRunsListCmd(a *app) *cobra.Command {
	var f runqueue.Filter
	var status string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, s := range strings.Split(status, ",") {
				if s = strings.TrimSpace(s); s != "" {
					if !runqueue.Status(s).Valid() {
						return &exitError{code: 2, err: fmt.Errorf("unknown status %q", s)}
					}
					f.Status = append(f.Status, runqueue.Status(s))
				}
			}
			st, err := openScheduling(cmd, a)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := serve.Stored(st).List(cmd.Context(), f)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if runs == nil {
				runs = []runqueue.Run{}
			}
			return printTable(a, asJSON, serveapi.RunList{Runs: runs}, runs, "No runs.", "ID\tSTATUS\tORIGIN\tCREATED\tDIR\tPROMPT",
				func(r runqueue.Run) []any {
					origin := r.Request.Origin.Kind
					if id := r.Request.Origin.JobID; id != "" {
						origin += ":" + id
					}
					return []any{r.ID, r.Status, origin, r.CreatedAt.Local().Format("2006-01-02 15:04:05"), r.Request.Dir, interaction.OneLine(r.Request.Prompt, 50)}
				})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&status, "status", "", "only runs in these states (comma-separated: queued, running, succeeded, failed, cancelled, lost)")
	fl.StringVar(&f.Origin, "origin", "", "only runs of this origin (api, cron, trigger, cli)")
	fl.StringVar(&f.JobID, "job", "", "only the runs of this cron job")
	fl.IntVar(&f.Limit, "limit", 0, "at most this many runs (default 100)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newRunsShowCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one run: request, status, session, result",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, r, err := storedRun(cmd, a, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			if asJSON {
				return json.NewEncoder(a.stdout).Encode(r)
			}
			printRun(a.stdout, r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// storedRun opens the database and reads a run; the caller closes the
// store.
func storedRun(cmd *cobra.Command, a *app, id string) (*store.SQLite, *serve.Engine, runqueue.Run, error) {
	st, err := openScheduling(cmd, a)
	if err != nil {
		return nil, nil, runqueue.Run{}, err
	}
	eng := serve.Stored(st)
	r, err := eng.Get(cmd.Context(), id)
	if err != nil {
		st.Close()
		return nil, nil, runqueue.Run{}, &exitError{code: 1, err: err}
	}
	return st, eng, r, nil
}

func printRun(w io.Writer, r runqueue.Run) {
	o := r.Request.Origin
	fmt.Fprintf(w, "Run %s: %s\n", r.ID, r.Status)
	fmt.Fprintf(w, "  origin:  %s", o.Kind)
	if o.JobID != "" {
		fmt.Fprintf(w, " (job %s, scheduled %s)", o.JobID, o.ScheduledAt.Local().Format(time.RFC3339))
	}
	if o.TriggerID != "" {
		fmt.Fprintf(w, " (trigger %s)", o.TriggerID)
	}
	fmt.Fprintf(w, "\n  dir:     %s\n  prompt:  %s\n", r.Request.Dir, interaction.OneLine(r.Request.Prompt, 200))
	if r.SessionID != "" {
		fmt.Fprintf(w, "  session: %s (gantry -p --resume %s …)\n", r.SessionID, r.SessionID)
	}
	fmt.Fprintf(w, "  created: %s", r.CreatedAt.Local().Format(time.RFC3339))
	if !r.EndedAt.IsZero() {
		fmt.Fprintf(w, "; ended %s", r.EndedAt.Local().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "\n  owner:   %s\n  events:  %d\n", r.Owner, r.Events)
	for _, ask := range r.Asks {
		fmt.Fprintf(w, "  waiting: %s ask %s\n", ask.Kind, ask.ID)
	}
	if r.Result != nil {
		fmt.Fprintf(w, "  result:  %s, %d turns, $%.4f\n%s\n", r.Result.Subtype, r.Result.NumTurns, r.Result.CostUSD, indent(r.Result.Text))
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  error:   %s\n", r.Error)
	}
}

func newRunsLogsCmd(a *app) *cobra.Command {
	var follow bool
	var after int64
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a run's events (stream-json lines); --follow waits for new ones until the run ends",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, eng, r, err := storedRun(cmd, a, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			if !follow && r.Events <= after {
				return nil
			}
			for ev, err := range eng.Events(cmd.Context(), r.ID, after) {
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				fmt.Fprintf(a.stdout, "%s\n", ev.Data)
				if !follow && ev.Seq >= r.Events {
					break
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events until the run ends")
	cmd.Flags().Int64Var(&after, "after", 0, "start after this event number")
	return cmd
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// serveTokenFile is the default token file of gantry serve.
func serveTokenFile(a *app) (string, error) {
	path, err := storePath(a)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(path), serveapi.TokenFile), nil
}

// triggerOptions tell RemoteTrigger which gantry serve to talk to: the one
// at $GANTRY_SERVE_URL (token from $GANTRY_SERVE_TOKEN_FILE) for every
// action, else the local one (found through its state file) for runs.
func triggerOptions(a *app) triggertool.Options {
	if u := a.getenv("GANTRY_SERVE_URL"); u != "" {
		tf := a.getenv("GANTRY_SERVE_TOKEN_FILE")
		return triggertool.Options{Remote: func() (*serveapi.Client, error) {
			if tf == "" {
				return nil, errors.New("GANTRY_SERVE_URL is set but GANTRY_SERVE_TOKEN_FILE is not")
			}
			tok, err := serveapi.ReadToken(tf)
			if err != nil {
				return nil, err
			}
			return &serveapi.Client{URL: u, Token: tok}, nil
		}}
	}
	return triggertool.Options{Local: func() (*serveapi.Client, error) {
		path, err := storePath(a)
		if err != nil {
			return nil, err
		}
		return serveapi.Discover(filepath.Dir(path))
	}}
}

// printTable prints a listing: whole as JSON, or rows as a table under
// header (empty: the message).
func printTable[T any](a *app, asJSON bool, whole any, rows []T, empty, header string, cells func(T) []any) error {
	if asJSON {
		return json.NewEncoder(a.stdout).Encode(whole)
	}
	if len(rows) == 0 {
		fmt.Fprintln(a.stdout, empty)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		for i, c := range cells(r) {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
