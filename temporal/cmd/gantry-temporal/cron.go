package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/serve/servecli"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/temporal/durable"
)

// newCronCmd is `gantry cron` on Temporal Schedules: the same jobs, kept
// by the Temporal service instead of a local database.
func newCronCmd(a *app) *cobra.Command {
	var c conn
	return servecli.CronCommand(servecli.CronOptions{
		Open: func(*cobra.Command) (servecli.Jobs, func() error, error) {
			cl, err := c.dial(a)
			if err != nil {
				return nil, nil, err
			}
			return durable.NewJobs(cl, durable.JobsOptions{TaskQueue: c.queue}), func() error { cl.Close(); return nil }, nil
		},
		Flags:  func(cmd *cobra.Command) { c.add(cmd, a) },
		Stdout: a.stdout,
		Exit:   func(code int, err error) error { return &exitError{code: code, err: err} },
		Short:  "List, add, pause, resume and remove durable cron jobs (Temporal Schedules)",
		Long: `Durable cron jobs on Temporal: each job is a Temporal Schedule whose fires
start runs on the task queue's workers — one run per fire, whether or not a
gantry-temporal serve runs. Schedules are 5-field cron expressions in local
time (or --timezone). The jobs are the ones gantry-temporal serve's
/v1/jobs and the workers' CronCreate/CronList/CronDelete tools see.`,
		AddShort: "Add a durable cron job (a Temporal Schedule)",
		AddExample: `  gantry-temporal cron add "0 9 * * 1-5" "Summarise yesterday's commits in NOTES.md"
  gantry-temporal cron add --once --timezone Europe/Paris "30 17 * * *" "Run the slow test suite and report failures"`,
		RmShort: "Remove durable cron jobs (their schedules; runs already started go on)",
		FlagHelp: map[string]string{
			"catchup":         "fires missed while the Temporal service was down: once (default: those of the last period) or none (skip fires over 2 min late)",
			"cwd":             "the runs' working directory on the workers (default: the current directory)",
			"allowedTools":    "allow rules added for the runs",
			"disallowedTools": "deny rules added for the runs",
		},
		ShowLastFired: true,
		Added: func(j store.CronJob) string {
			return fmt.Sprintf("Added job %s (%s; schedule %s%s); next run %s.", j.ID, j.Cron, durable.SchedulePrefix, j.ID,
				j.NextAt.Local().Format("Mon 2006-01-02 15:04:05 MST"))
		},
	})
}
