package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/gantry-dev/gantry/temporal/durable"
)

func newAnswerCmd(a *app) *cobra.Command {
	var c conn
	var message string
	cmd := &cobra.Command{
		Use:   "answer RUN-ID ASK-ID allow_once|allow_session|allow_always|deny|JSON",
		Short: "Answer a run's pending ask (a permission ask, a question, a plan approval)",
		Long: `Answer a pending ask of a run. A permission ask takes a choice (with
--message for a deny); any ask takes its answer as JSON, for example
'{"answers":{"Which database?":"Postgres"}}' for AskUserQuestion. The run
goes on on whichever worker picks it up.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			answer := args[2]
			if !strings.HasPrefix(strings.TrimSpace(answer), "{") {
				b, _ := json.Marshal(map[string]string{"choice": answer, "message": message})
				answer = string(b)
			}
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			return answerRun(cmd.Context(), a, cl, args[0], args[1], answer)
		},
	}
	c.add(cmd, a)
	cmd.Flags().StringVar(&message, "message", "", "with deny: what the model is told")
	return cmd
}

func answerRun(ctx context.Context, a *app, cl client.Client, runID, askID, answer string) error {
	if err := durable.Answer(ctx, cl, runID, askID, []byte(answer)); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

func newCancelCmd(a *app) *cobra.Command {
	var c conn
	cmd := &cobra.Command{
		Use:   "cancel RUN-ID",
		Short: "Stop a run: the running call is cancelled and the run ends interrupted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			if err := durable.Cancel(cmd.Context(), cl, args[0]); err != nil {
				return &exitError{code: 1, err: err}
			}
			fmt.Fprintln(a.stderr, "gantry-temporal: cancel requested for", args[0])
			return nil
		},
	}
	c.add(cmd, a)
	return cmd
}
