// Package servecli holds the command-line commands that the gantry CLI and
// the gantry-temporal CLI share: `cron list`, `cron add` and `cron rm` over
// whichever place keeps the cron jobs (the CLI's database, Temporal
// Schedules). Each CLI gives its own texts and the few options where the
// two back ends differ; the parsing of the flags, the job built from them
// and the output are the same code.
package servecli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/internal/textutil"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// Jobs is where cron jobs are kept. *store.SQLite and the Temporal
// module's durable.Jobs implement it.
type Jobs interface {
	ListCronJobs(ctx context.Context) ([]store.CronJob, error)
	GetCronJob(ctx context.Context, id string) (store.CronJob, error)
	CreateCronJob(ctx context.Context, j store.CronJob) (store.CronJob, error)
	PauseCronJob(ctx context.Context, id string, paused bool, resume func(store.CronJob) (store.CronJob, error)) (store.CronJob, error)
	DeleteCronJob(ctx context.Context, id string) error
}

// CronOptions configure [CronCommand]. Open and Stdout are required; every
// other zero value is a default.
type CronOptions struct {
	// Open opens the jobs for one run of a subcommand; the subcommand calls
	// close when it is done. Open's error is returned as it is (wrap it
	// with an exit code there).
	Open func(cmd *cobra.Command) (jobs Jobs, close func() error, err error)
	// Flags adds the flags Open reads to each subcommand (nil: none).
	Flags func(cmd *cobra.Command)
	// Stdout receives the commands' output.
	Stdout io.Writer
	// Exit gives an error the process exit code it should end with: 1 when
	// an operation failed, 2 when the command line is wrong. nil returns
	// errors as they are.
	Exit func(code int, err error) error
	// Now is the clock that computes a new job's first fire (nil: time.Now).
	Now func() time.Time

	// Short and Long describe `cron`; AddShort and AddExample `cron add`;
	// RmShort `cron rm`. Empty ones take neutral defaults.
	Short, Long, AddShort, AddExample, RmShort string
	// FlagHelp replaces the help text of `cron add` flags by name (only
	// "catchup", "cwd", "allowedTools" and "disallowedTools" differ
	// between the CLIs today).
	FlagHelp map[string]string
	// LocalDelivery adds the --retry, --overlap and --max-queued flags of
	// `cron add`, which a local gantry serve honours.
	LocalDelivery bool
	// CheckDir makes `cron add` require its working directory to exist
	// here (runs start on this machine); without it the directory is only
	// made absolute (runs start on workers elsewhere).
	CheckDir bool
	// ShowLastFired adds a LAST column (the job's last fire) to `cron list`.
	ShowLastFired bool
	// Added is the line `cron add` prints for the job it created (nil:
	// "Added job ID (CRON); next run WHEN.").
	Added func(j store.CronJob) string
}

func (o *CronOptions) exit(code int, err error) error {
	if o.Exit == nil {
		return err
	}
	return o.Exit(code, err)
}

func (o *CronOptions) help(flag, def string) string {
	if h, ok := o.FlagHelp[flag]; ok {
		return h
	}
	return def
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// CronCommand returns the `cron` command with its list, add, pause,
// resume and rm subcommands.
func CronCommand(o CronOptions) *cobra.Command {
	if o.Now == nil {
		o.Now = time.Now
	}
	cmd := &cobra.Command{
		Use:   "cron",
		Short: or(o.Short, "List, add, pause, resume and remove durable cron jobs"),
		Long:  o.Long,
	}
	cmd.AddCommand(cronList(&o), cronAdd(&o), cronPause(&o, true), cronPause(&o, false), cronRm(&o))
	return cmd
}

func (o *CronOptions) withFlags(cmd *cobra.Command) *cobra.Command {
	if o.Flags != nil {
		o.Flags(cmd)
	}
	return cmd
}

func cronList(o *CronOptions) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the durable cron jobs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			jobs, closeJobs, err := o.Open(cmd)
			if err != nil {
				return err
			}
			defer closeJobs()
			list, err := jobs.ListCronJobs(cmd.Context())
			if err != nil {
				return o.exit(1, err)
			}
			if list == nil {
				list = []store.CronJob{}
			}
			return PrintJobs(o.Stdout, list, asJSON, o.ShowLastFired)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return o.withFlags(cmd)
}

// PrintJobs writes jobs as a [serveapi.JobList] in JSON, or as a table
// (with a LAST column when lastFired is set; "No cron jobs." when empty).
func PrintJobs(w io.Writer, jobs []store.CronJob, asJSON, lastFired bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(serveapi.JobList{Jobs: jobs})
	}
	if len(jobs) == 0 {
		_, err := fmt.Fprintln(w, "No cron jobs.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if lastFired {
		fmt.Fprintln(tw, "ID\tCRON\tKIND\tNEXT\tLAST\tDIR\tPROMPT")
	} else {
		fmt.Fprintln(tw, "ID\tCRON\tKIND\tNEXT\tDIR\tPROMPT")
	}
	for _, j := range jobs {
		kind := "once"
		if j.Recurring {
			kind = "recurring"
		}
		next := j.NextAt.Local().Format("2006-01-02 15:04")
		if j.Paused {
			next = "paused"
		}
		prompt := textutil.OneLine(j.Prompt, 60)
		if lastFired {
			last := "-"
			if !j.LastFiredAt.IsZero() {
				last = j.LastFiredAt.Local().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.Cron, kind, next, last, j.Dir, prompt)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.Cron, kind, next, j.Dir, prompt)
		}
	}
	return tw.Flush()
}

func cronAdd(o *CronOptions) *cobra.Command {
	var jr serveapi.JobRequest
	var once bool
	var mode, cwd string
	var allowed, disallowed []string
	cmd := &cobra.Command{
		Use:     `add "CRON" "PROMPT"`,
		Short:   or(o.AddShort, "Add a durable cron job"),
		Example: o.AddExample,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := o.workDir(cwd)
			if err != nil {
				return o.exit(2, err)
			}
			jr.Cron, jr.Prompt, jr.Dir = args[0], args[1], dir
			rec := !once
			jr.Recurring = &rec
			jr.Options.Mode = tool.Mode(mode)
			jr.Options.Allow, jr.Options.Deny = toolset.SplitNameLists(allowed), toolset.SplitNameLists(disallowed)
			j, err := serve.NewJob(jr, o.Now())
			if err != nil {
				return o.exit(2, err)
			}
			jobs, closeJobs, err := o.Open(cmd)
			if err != nil {
				return err
			}
			defer closeJobs()
			if j, err = jobs.CreateCronJob(cmd.Context(), j); err != nil {
				return o.exit(1, err)
			}
			if o.Added != nil {
				fmt.Fprintln(o.Stdout, o.Added(j))
			} else {
				fmt.Fprintf(o.Stdout, "Added job %s (%s); next run %s.\n", j.ID, j.Cron, j.NextAt.Local().Format("Mon 2006-01-02 15:04 MST"))
			}
			return nil
		},
	}
	o.withFlags(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&once, "once", false, "fire once, at the next match (default: recurring)")
	fl.StringVar(&jr.Timezone, "timezone", "", "IANA time zone of the schedule (default: local time)")
	fl.StringVar(&jr.Catchup, "catchup", "", o.help("catchup", "fires missed while the scheduler was down: once (default, run one) or none (skip)"))
	if o.LocalDelivery {
		fl.BoolVar(&jr.Retry, "retry", false, "start a fire again when its run was lost (its serve process died)")
		fl.StringVar(&jr.Overlap, "overlap", "", "while an earlier run of the job is live: skip (default, no new run), queue (wait for it) or allow (run side by side)")
		fl.IntVar(&jr.MaxQueued, "max-queued", 0, "queued runs of the job at most; a fire beyond is skipped (default 1)")
	}
	fl.StringVar(&jr.Lifetime, "lifetime", "", `how long a recurring job lives (Go duration, default 168h; "0" = forever)`)
	fl.StringVar(&cwd, "cwd", "", o.help("cwd", "the runs' working directory (default: the current directory)"))
	fl.StringVar(&jr.Options.Model, "model", "", "model of the runs")
	fl.StringVar(&mode, "permission-mode", "", "permission mode of the runs (default: the directory's settings)")
	fl.StringArrayVar(&allowed, "allowedTools", nil, o.help("allowedTools", "allow rules added for the runs (comma-separated or repeated; a rule keeps the commas inside its parentheses)"))
	fl.StringArrayVar(&disallowed, "disallowedTools", nil, o.help("disallowedTools", "deny rules added for the runs (comma-separated or repeated)"))
	fl.IntVar(&jr.Options.MaxTurns, "max-turns", 0, "turn limit of each run")
	fl.Float64Var(&jr.Options.MaxBudgetUSD, "max-budget-usd", 0, "cost limit of each run")
	return cmd
}

// workDir is the runs' directory: --cwd or the current one, absolute, and
// an existing directory when CheckDir is set.
func (o *CronOptions) workDir(cwd string) (string, error) {
	dir := cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if o.CheckDir {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("--cwd %s is not a directory", dir)
		}
	}
	return dir, nil
}

// cronPause is `cron pause` (paused) or `cron resume`: a paused job is
// kept but never fires until resumed, at its schedule's next match (see
// cron.Pause).
func cronPause(o *CronOptions, paused bool) *cobra.Command {
	use, short := "pause ID...", "Pause durable cron jobs (kept, never fired until resumed)"
	if !paused {
		use, short = "resume ID...", "Resume paused cron jobs (at their schedule's next match)"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			jobs, closeJobs, err := o.Open(cmd)
			if err != nil {
				return err
			}
			defer closeJobs()
			for _, id := range args {
				j, err := cron.Pause(cmd.Context(), jobs, id, paused, o.Now())
				if err != nil {
					return o.exit(1, err)
				}
				if paused {
					fmt.Fprintln(o.Stdout, "Paused job", j.ID)
				} else {
					fmt.Fprintf(o.Stdout, "Resumed job %s; next run %s.\n", j.ID, j.NextAt.Local().Format("Mon 2006-01-02 15:04 MST"))
				}
			}
			return nil
		},
	}
	return o.withFlags(cmd)
}

func cronRm(o *CronOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rm ID...",
		Short: or(o.RmShort, "Remove durable cron jobs"),
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			jobs, closeJobs, err := o.Open(cmd)
			if err != nil {
				return err
			}
			defer closeJobs()
			for _, id := range args {
				if err := jobs.DeleteCronJob(cmd.Context(), id); err != nil {
					return o.exit(1, err)
				}
				fmt.Fprintln(o.Stdout, "Removed job", id)
			}
			return nil
		},
	}
	return o.withFlags(cmd)
}
