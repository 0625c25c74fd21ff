package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/converter"

	"github.com/gantry-dev/gantry/temporal/claimcheck"
	"github.com/gantry-dev/gantry/transcript"
)

// blobFlags are the claim-check store's flags, on every command that talks
// to Temporal: workers, serve and clients must share the store.
type blobFlags struct {
	dir       string
	threshold string
}

func (b *blobFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&b.dir, "blob-dir", "", "claim-check store for large payloads, shared by the workers, serve and clients of the runs (default: $GANTRY_HOME/temporal-blobs; env GANTRY_BLOB_DIR)")
	fl.StringVar(&b.threshold, "blob-threshold", "", "payload size above which large strings go to the blob store: bytes, or with k/m (default 64k; -1 = never, only read)")
}

// store opens the blob store.
func (b *blobFlags) store(a *app) (*claimcheck.Dir, error) {
	dir := b.dir
	if dir == "" {
		dir = a.getenv("GANTRY_BLOB_DIR")
	}
	if dir == "" {
		home, err := transcript.DefaultHome(a.getenv)
		if err != nil {
			return nil, &exitError{code: 2, err: fmt.Errorf("--blob-dir: %w", err)}
		}
		dir = filepath.Join(home, "temporal-blobs")
	}
	d, err := claimcheck.OpenDir(dir)
	if err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("--blob-dir: %w", err)}
	}
	return d, nil
}

// dataConverter is Temporal's default converter with the claim-check codec.
func (b *blobFlags) dataConverter(a *app) (converter.DataConverter, error) {
	n, err := parseSize(b.threshold)
	if err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("--blob-threshold: %w", err)}
	}
	d, err := b.store(a)
	if err != nil {
		return nil, err
	}
	return claimcheck.DataConverter(d, claimcheck.Options{Threshold: n}), nil
}

// parseSize reads "", "-1", "65536", "64k", "1m" ("" = 0, the default).
func parseSize(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return 0, nil
	}
	mult := 1
	for suffix, m := range map[string]int{"kib": 1 << 10, "k": 1 << 10, "kb": 1 << 10, "mib": 1 << 20, "m": 1 << 20, "mb": 1 << 20} {
		if strings.HasSuffix(s, suffix) && mult == 1 {
			if rest := strings.TrimSuffix(s, suffix); rest != "" && rest[len(rest)-1] >= '0' && rest[len(rest)-1] <= '9' {
				s, mult = rest, m
			}
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || (n < 0 && n != -1) || n == 0 {
		return 0, fmt.Errorf("%q is not a size (bytes, 64k, 1m; -1 = never)", s)
	}
	if n == -1 {
		return -1, nil
	}
	return n * mult, nil
}

func newBlobsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "blobs",
		Short: "Manage the claim-check store of large payloads",
	}
	cmd.AddCommand(newPruneCmd(a))
	return cmd
}

func newPruneCmd(a *app) *cobra.Command {
	var c conn
	var grace time.Duration
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Delete the blobs no workflow Temporal keeps refers to any more",
		Long: `Delete the blobs of the store (--blob-dir) that no workflow of the namespace
refers to any more. It reads every workflow Temporal still keeps — open ones,
and closed ones within the namespace's retention — with their histories and
pending state, and the schedules, and deletes the blobs none of them refers
to, except those written or used within --grace (a payload is stored just
before the event that refers to it is written). A failure to read any of it
stops the prune before anything is deleted. Safe to run while workers run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			d, err := c.blobs.store(a)
			if err != nil {
				return err
			}
			cl, err := c.dial(a)
			if err != nil {
				return err
			}
			defer cl.Close()
			// Listed after the grace period started: a blob written
			// before is either referred to by now or old enough.
			live, err := claimcheck.LiveRefs(ctx, cl, c.namespace)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			st, err := claimcheck.Prune(ctx, d, live, claimcheck.PruneOptions{Grace: grace, DryRun: dryRun})
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if asJSON {
				return json.NewEncoder(a.stdout).Encode(st)
			}
			verb := "deleted"
			if dryRun {
				verb = "would delete"
			}
			fmt.Fprintf(a.stdout, "%s: %d blobs, %d referred to, %d recent; %s %d (%d bytes)\n", d.Path(), st.Blobs, st.Referenced, st.Recent, verb, st.Deleted, st.Bytes)
			if st.Temp > 0 {
				fmt.Fprintf(a.stdout, "removed %d temporary files of interrupted writes\n", st.Temp)
			}
			return nil
		},
	}
	c.add(cmd, a)
	fl := cmd.Flags()
	fl.DurationVar(&grace, "grace", claimcheck.DefaultGrace, "keep blobs written or used within this period")
	fl.BoolVar(&dryRun, "dry-run", false, "count what would be deleted, delete nothing")
	fl.BoolVar(&asJSON, "json", false, "print the figures as JSON")
	return cmd
}
