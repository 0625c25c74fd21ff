package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/gantry-dev/gantry/interaction"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/checkpoint"
	"github.com/gantry-dev/gantry/transcript"
)

// openCheckpoints opens the checkpoint store of dir under $GANTRY_HOME.
func openCheckpoints(a *app, dir string) (*checkpoint.Store, string, error) {
	home, err := transcript.DefaultHome(a.getenv)
	if err != nil {
		return nil, "", err
	}
	st, err := checkpoint.Open(checkpoint.Options{Dir: dir, Home: home})
	return st, home, err
}

type checkpointFlags struct {
	cwd     string
	session string
	json    bool
	all     bool // list: every session
}

func (f *checkpointFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.cwd, "cwd", "", "project directory (default: the current directory)")
	cmd.Flags().StringVar(&f.session, "session", "", "only the checkpoints of this session (default: the project's latest session)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
}

func (f *checkpointFlags) open(a *app) (*checkpoint.Store, string, string, error) {
	sf := safetyFlags{cwd: f.cwd}
	dir, err := sf.workDir()
	if err != nil {
		return nil, "", "", &exitError{code: 2, err: err}
	}
	st, home, err := openCheckpoints(a, dir)
	if err != nil {
		return nil, "", "", &exitError{code: 1, err: err}
	}
	return st, home, dir, nil
}

func newCheckpointsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoints",
		Short: "The project's checkpoints: the state of its files before each prompt and each writing tool call",
	}
	f := &checkpointFlags{}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the checkpoints of the project's latest session, oldest first",
		Long: `List the checkpoints of the project's latest session (the session of its newest
checkpoint), oldest first; --session names another, --all lists every session.
Checkpoints taken before a tool call that changed nothing — a call that was
denied, or that failed before writing — are left out: rewinding to one would
be the same as rewinding to the next.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, _, err := f.open(a)
			if err != nil {
				return err
			}
			infos, lerr := listCheckpoints(st, f.session, f.all)
			if f.json {
				if infos == nil {
					infos = []checkpoint.Info{}
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.Encode(infos)
			} else {
				if !f.all && f.session == "" && len(infos) > 0 {
					fmt.Fprintf(a.stdout, "session %s (the latest; --all lists every session)\n", infos[0].Session)
				}
				printCheckpoints(a.stdout, infos)
			}
			if lerr != nil {
				return &exitError{code: 1, err: lerr}
			}
			return nil
		},
	}
	f.add(list)
	list.Flags().BoolVar(&f.all, "all", false, "list the checkpoints of every session of the project")
	pf := &checkpointFlags{}
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Remove the checkpoints past their retention (30 days) and those of deleted sessions, and what only they used",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, home, dir, err := pf.open(a)
			if err != nil {
				return err
			}
			sessions := transcript.NewStore(home)
			rep, err := st.Prune(cmd.Context(), checkpoint.PruneOptions{SessionGone: func(id string) bool {
				_, err := os.Stat(sessions.Path(dir, id))
				return errors.Is(err, os.ErrNotExist)
			}})
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			fmt.Fprintf(a.stdout, "removed %d checkpoints, %d trees, %d file contents\n", rep.Checkpoints, rep.Manifests, rep.Objects)
			return nil
		},
	}
	pf.add(prune)
	cmd.AddCommand(list, prune)
	return cmd
}

// listCheckpoints returns the checkpoints `checkpoints list` shows: those
// of session, of every session (all), or by default of the session of the
// newest checkpoint; without the tool checkpoints whose call changed
// nothing (the next recorded state, or the tip for the last, has the same
// manifest: the call was denied or failed before writing).
func listCheckpoints(st *checkpoint.Store, session string, all bool) ([]checkpoint.Info, error) {
	every, lerr := st.List("")
	tip, err := st.TipManifest()
	if err != nil {
		lerr = errors.Join(lerr, err)
	}
	if session == "" && !all && len(every) > 0 {
		session = every[len(every)-1].Session
	}
	var out []checkpoint.Info
	for i, in := range every {
		if (all || in.Session == session) && !unchanging(every, i, tip) {
			out = append(out, in)
		}
	}
	return out, lerr
}

// unchanging reports a tool checkpoint the state after which — the next
// checkpoint of the project, or the tip — is the same tree: its call
// changed nothing.
func unchanging(list []checkpoint.Info, i int, tip string) bool {
	if list[i].Kind != checkpoint.KindTool {
		return false
	}
	next := tip
	if i+1 < len(list) {
		next = list[i+1].Manifest
	}
	return next != "" && next == list[i].Manifest
}

func printCheckpoints(w io.Writer, infos []checkpoint.Info) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "no checkpoints")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tCREATED\tFILES\tNOT COVERED\tLABEL")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", in.ID, in.Kind, in.Created.Local().Format("2006-01-02 15:04:05"),
			in.Files, in.NotCoveredCount, visible(in.Label, 60))
	}
	tw.Flush()
}

// visible shows s on one line of at most n runes, escapes visible.
func visible(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return interaction.OneLine(strings.Trim(fmt.Sprintf("%q", s), `"`), n)
}

type rewindFlags struct {
	checkpointFlags
	force        bool
	dryRun       bool
	conversation bool
}

func newRewindCmd(a *app) *cobra.Command {
	f := &rewindFlags{}
	cmd := &cobra.Command{
		Use:   "rewind [ID]",
		Short: "Restore the project's files to a checkpoint (default: before the latest prompt)",
		Long: `Restore the project's files to checkpoint ID (see gantry checkpoints list): files
created since are removed, changed and deleted ones written back, whatever changed
them (Write, Edit, a command run through Bash). Without ID, the state before the
latest prompt of the latest session that changed something (a follow-up prompt
that changed nothing is passed over). Files someone else changed since the agent last recorded the project
are not overwritten without --force. Paths the checkpoint does not cover (ignored,
too large) are left as they are. The state before the rewind is recorded: the
command prints the checkpoint that undoes it.

--conversation also forks the session so that it ends before that prompt; resume
the fork with gantry -p --resume ID.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return rewind(cmd.Context(), a, f, args)
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&f.force, "force", false, "overwrite files changed by someone else since the last recording")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "show what would change; change nothing")
	cmd.Flags().BoolVar(&f.conversation, "conversation", false, "also fork the session to end before that prompt (turn checkpoints)")
	return cmd
}

// rewindJSON is `gantry rewind --json`.
type rewindJSON struct {
	*checkpoint.Report
	Session string `json:"forked_session_id,omitempty"`
}

func rewind(ctx context.Context, a *app, f *rewindFlags, args []string) error {
	st, home, dir, err := f.open(a)
	if err != nil {
		return err
	}
	var info *checkpoint.Info
	skipped := 0
	if len(args) == 1 {
		info, err = st.Get(args[0])
	} else {
		info, skipped, err = lastChangingTurn(ctx, st, f.session, f.force)
	}
	if err != nil {
		var ce *checkpoint.ConflictError
		if errors.As(err, &ce) {
			return &exitError{code: 1, err: conflictText(ce)}
		}
		return &exitError{code: 1, err: err}
	}
	if f.conversation && info.Kind != checkpoint.KindTurn {
		return &exitError{code: 2, err: fmt.Errorf("--conversation needs a turn checkpoint; %s is a %s checkpoint", info.ID, info.Kind)}
	}
	rep, err := st.Rewind(ctx, info.ID, checkpoint.RewindOptions{Force: f.force, DryRun: f.dryRun, Session: info.Session})
	if err != nil {
		var ce *checkpoint.ConflictError
		if errors.As(err, &ce) {
			return &exitError{code: 1, err: conflictText(ce)}
		}
		return &exitError{code: 1, err: err}
	}
	out := rewindJSON{Report: rep}
	if f.conversation && !f.dryRun {
		fork, err := transcript.NewStore(home).ForkBefore(dir, info.Session, info.ID)
		if err != nil {
			return &exitError{code: 1, err: fmt.Errorf("the files were rewound, the conversation not: %w", err)}
		}
		fork.Close()
		out.Session = fork.ID
	}
	if f.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return nil
	}
	verb := "rewound to"
	if rep.DryRun {
		verb = "would rewind to"
	}
	switch {
	case skipped == 1:
		fmt.Fprintln(a.stdout, "the latest prompt changed nothing; going back to the last one that did")
	case skipped > 1:
		fmt.Fprintf(a.stdout, "the latest %d prompts changed nothing; going back to the last one that did\n", skipped)
	}
	fmt.Fprintf(a.stdout, "%s %s (%s, %s) %s\n", verb, info.ID, info.Kind, info.Created.Local().Format("2006-01-02 15:04:05"), visible(info.Label, 60))
	if !rep.Changed() {
		fmt.Fprintln(a.stdout, "nothing to change")
	}
	for _, p := range rep.Restored {
		fmt.Fprintln(a.stdout, "  restored", visible(p, 200))
	}
	for _, p := range rep.Removed {
		fmt.Fprintln(a.stdout, "  removed ", visible(p, 200))
	}
	for _, p := range rep.ModeChanged {
		fmt.Fprintln(a.stdout, "  mode    ", visible(p, 200))
	}
	for _, p := range rep.Overwritten {
		fmt.Fprintln(a.stdout, "  overwrote a change by someone else:", visible(p, 200))
	}
	if n := len(rep.NotCovered); n > 0 {
		var names []string
		for _, nc := range rep.NotCovered[:min(n, 5)] {
			names = append(names, visible(nc.Path, 60)+" ("+nc.Reason+")")
		}
		more := ""
		if n > 5 {
			more = fmt.Sprintf(", and %d more", n-5)
		}
		fmt.Fprintf(a.stdout, "not covered by the checkpoint, left as they are: %s%s\n", strings.Join(names, ", "), more)
	}
	if rep.Before != "" {
		fmt.Fprintf(a.stdout, "to undo: gantry rewind %s\n", rep.Before)
	}
	if out.Session != "" {
		fmt.Fprintf(a.stdout, "conversation forked before that prompt: gantry -p --resume %s\n", out.Session)
	}
	return nil
}

func conflictText(ce *checkpoint.ConflictError) error {
	return fmt.Errorf("not rewound: %d paths changed since the agent last recorded the project:\n  %s\n(rewind with --force to overwrite them)",
		len(ce.Paths), strings.Join(ce.Paths, "\n  "))
}

// lastChangingTurn is the checkpoint a plain `gantry rewind` restores: the
// newest turn checkpoint of session (default: the session of the newest
// turn) whose rewind changes something, so that a follow-up prompt that
// changed nothing ("thanks") does not make the rewind a no-op. skipped
// counts the newer turns passed over. When none changes anything, the
// newest is returned (the rewind then says so). A conflict (files changed
// by someone else) stops the search there: that rewind needs --force.
func lastChangingTurn(ctx context.Context, st *checkpoint.Store, session string, force bool) (_ *checkpoint.Info, skipped int, _ error) {
	latest, err := st.Latest(session, checkpoint.KindTurn)
	if err != nil {
		return nil, 0, err
	}
	list, _ := st.List(latest.Session)
	for i := len(list) - 1; i >= 0; i-- {
		in := &list[i]
		if in.Kind != checkpoint.KindTurn {
			continue
		}
		rep, err := st.Rewind(ctx, in.ID, checkpoint.RewindOptions{DryRun: true, Force: force})
		if err != nil {
			return nil, 0, err
		}
		if rep.Changed() {
			return in, skipped, nil
		}
		skipped++
	}
	return latest, 0, nil
}
