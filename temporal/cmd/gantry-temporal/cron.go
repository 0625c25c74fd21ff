package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// newCronCmd is `gantry cron` on Temporal Schedules: the same jobs, kept
// by the Temporal service instead of a local database.
func newCronCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cron",
		Short: "List, add, pause, resume and remove durable cron jobs (Temporal Schedules)",
		Long: `Durable cron jobs on Temporal: each job is a Temporal Schedule whose fires
start runs on the task queue's workers — one run per fire, whether or not a
gantry-temporal serve runs. Schedules are 5-field cron expressions in local
time (or --timezone). The jobs are the ones gantry-temporal serve's
/v1/jobs and the workers' CronCreate/CronList/CronDelete tools see. Pausing a
job pauses its schedule: Temporal skips its fires until it is resumed.`,
	}
	cmd.AddCommand(newCronListCmd(a), newCronAddCmd(a), newCronPauseCmd(a, true), newCronPauseCmd(a, false), newCronRmCmd(a))
	return cmd
}

func newCronListCmd(a *app) *cobra.Command {
	var c conn
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the durable cron jobs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			jobs, err := durable.NewJobs(cl, durable.JobsOptions{TaskQueue: c.queue}).ListCronJobs(cmd.Context())
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if jobs == nil {
				jobs = []store.CronJob{}
			}
			if asJSON {
				return json.NewEncoder(a.stdout).Encode(serveapi.JobList{Jobs: jobs})
			}
			if len(jobs) == 0 {
				fmt.Fprintln(a.stdout, "No cron jobs.")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCRON\tKIND\tNEXT\tLAST\tDIR\tPROMPT")
			for _, j := range jobs {
				kind, last := "once", "-"
				if j.Recurring {
					kind = "recurring"
				}
				if !j.LastFiredAt.IsZero() {
					last = j.LastFiredAt.Local().Format("2006-01-02 15:04")
				}
				next := "paused"
				if !j.Paused {
					next = j.NextAt.Local().Format("2006-01-02 15:04")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.Cron, kind, next, last, j.Dir, oneLine(j.Prompt, 60))
			}
			return tw.Flush()
		},
	}
	c.add(cmd, a)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newCronAddCmd(a *app) *cobra.Command {
	var c conn
	var jr serveapi.JobRequest
	var once bool
	var mode, cwd string
	var allowed, disallowed []string
	cmd := &cobra.Command{
		Use:   `add "CRON" "PROMPT"`,
		Short: "Add a durable cron job (a Temporal Schedule)",
		Example: `  gantry-temporal cron add "0 9 * * 1-5" "Summarise yesterday's commits in NOTES.md"
  gantry-temporal cron add --once --timezone Europe/Paris "30 17 * * *" "Run the slow test suite and report failures"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := cwd
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			dir, err := filepath.Abs(dir)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			jr.Cron, jr.Prompt, jr.Dir = args[0], args[1], dir
			rec := !once
			jr.Recurring = &rec
			jr.Options.Mode = tool.Mode(mode)
			for _, v := range allowed {
				jr.Options.Allow = append(jr.Options.Allow, toolset.SplitNames(v)...)
			}
			for _, v := range disallowed {
				jr.Options.Deny = append(jr.Options.Deny, toolset.SplitNames(v)...)
			}
			j, err := serve.NewJob(jr, time.Now())
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			if j, err = durable.NewJobs(cl, durable.JobsOptions{TaskQueue: c.queue}).CreateCronJob(cmd.Context(), j); err != nil {
				return &exitError{code: 1, err: err}
			}
			fmt.Fprintf(a.stdout, "Added job %s (%s; schedule %s%s); next run %s.\n", j.ID, j.Cron, durable.SchedulePrefix, j.ID,
				j.NextAt.Local().Format("Mon 2006-01-02 15:04:05 MST"))
			return nil
		},
	}
	c.add(cmd, a)
	fl := cmd.Flags()
	fl.BoolVar(&once, "once", false, "fire once, at the next match (default: recurring)")
	fl.StringVar(&jr.Timezone, "timezone", "", "IANA time zone of the schedule (default: local time)")
	fl.StringVar(&jr.Catchup, "catchup", "", "fires missed while the Temporal service was down: once (default: those of the last period) or none (skip fires over 2 min late)")
	fl.StringVar(&jr.Lifetime, "lifetime", "", `how long a recurring job lives (Go duration, default 168h; "0" = forever)`)
	fl.StringVar(&cwd, "cwd", "", "the runs' working directory on the workers (default: the current directory)")
	fl.StringVar(&jr.Options.Model, "model", "", "model of the runs")
	fl.StringVar(&mode, "permission-mode", "", "permission mode of the runs (default: the directory's settings)")
	fl.StringArrayVar(&allowed, "allowedTools", nil, "allow rules added for the runs")
	fl.StringArrayVar(&disallowed, "disallowedTools", nil, "deny rules added for the runs")
	fl.IntVar(&jr.Options.MaxTurns, "max-turns", 0, "turn limit of each run")
	fl.Float64Var(&jr.Options.MaxBudgetUSD, "max-budget-usd", 0, "cost limit of each run")
	return cmd
}

// newCronPauseCmd is `cron pause` (paused) or `cron resume`.
func newCronPauseCmd(a *app, paused bool) *cobra.Command {
	var c conn
	use, short := "pause ID...", "Pause durable cron jobs (their schedules skip every fire until resumed)"
	if !paused {
		use, short = "resume ID...", "Resume paused cron jobs (at their schedule's next match)"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			jobs := durable.NewJobs(cl, durable.JobsOptions{TaskQueue: c.queue})
			for _, id := range args {
				j, err := cron.Pause(cmd.Context(), jobs, id, paused, time.Now())
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				if paused {
					fmt.Fprintln(a.stdout, "Paused job", j.ID)
				} else {
					fmt.Fprintf(a.stdout, "Resumed job %s; next run %s.\n", j.ID, j.NextAt.Local().Format("Mon 2006-01-02 15:04 MST"))
				}
			}
			return nil
		},
	}
	c.add(cmd, a)
	return cmd
}

func newCronRmCmd(a *app) *cobra.Command {
	var c conn
	cmd := &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove durable cron jobs (their schedules; runs already started go on)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			jobs := durable.NewJobs(cl, durable.JobsOptions{TaskQueue: c.queue})
			for _, id := range args {
				if err := jobs.DeleteCronJob(cmd.Context(), id); err != nil {
					return &exitError{code: 1, err: err}
				}
				fmt.Fprintln(a.stdout, "Removed job", id)
			}
			return nil
		},
	}
	c.add(cmd, a)
	return cmd
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
