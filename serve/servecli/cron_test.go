package servecli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
)

type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }

// cli runs the cron command of opts over a real SQLite store in dir.
func cli(t *testing.T, opts CronOptions, dbPath string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	opts.Stdout = &out
	opts.Exit = func(code int, err error) error { return &exitErr{code, err} }
	opts.Now = func() time.Time { return time.Date(2026, 1, 5, 8, 0, 0, 0, time.Local) }
	opts.Open = func(cmd *cobra.Command) (Jobs, func() error, error) {
		st, err := store.OpenSQLite(cmd.Context(), dbPath, store.SQLiteOptions{})
		if err != nil {
			return nil, nil, err
		}
		return st, st.Close, nil
	}
	cmd := CronCommand(opts)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestCronCommand(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      CronOptions
		listHead  string
		addedLine string
	}{
		{"local serve", CronOptions{LocalDelivery: true, CheckDir: true}, "ID  CRON  KIND  NEXT  DIR  PROMPT", "Added job "},
		{"temporal", CronOptions{ShowLastFired: true, Added: func(j store.CronJob) string { return "scheduled " + j.ID }},
			"ID  CRON  KIND  NEXT  LAST  DIR  PROMPT", "scheduled "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "gantry.db")
			dir := t.TempDir()
			out, err := cli(t, tc.opts, db, "list")
			if err != nil || out != "No cron jobs.\n" {
				t.Fatalf("empty list = %q, %v", out, err)
			}
			out, err = cli(t, tc.opts, db, "add", "--cwd", dir, "--allowedTools", "Read,Bash(git log --format=%h,%s)",
				"--disallowedTools", "Bash(rm a, b)", "0 9 * * 1", "weekly\nsummary of  the commits")
			if err != nil || !strings.HasPrefix(out, tc.addedLine) {
				t.Fatalf("add = %q, %v", out, err)
			}
			out, err = cli(t, tc.opts, db, "list", "--json")
			if err != nil {
				t.Fatal(err)
			}
			var jl serveapi.JobList
			if err := json.Unmarshal([]byte(out), &jl); err != nil || len(jl.Jobs) != 1 {
				t.Fatalf("list --json = %q, %v", out, err)
			}
			j := jl.Jobs[0]
			var o runqueue.Options
			if err := json.Unmarshal(j.Options, &o); err != nil {
				t.Fatal(err)
			}
			if want := []string{"Read", "Bash(git log --format=%h,%s)"}; !slices.Equal(o.Allow, want) {
				t.Errorf("allow = %q, want %q", o.Allow, want)
			}
			if want := []string{"Bash(rm a, b)"}; !slices.Equal(o.Deny, want) {
				t.Errorf("deny = %q, want %q", o.Deny, want)
			}
			if j.Dir != dir || !j.Recurring || j.Cron != "0 9 * * 1" {
				t.Errorf("job = %+v", j)
			}
			out, err = cli(t, tc.opts, db, "list")
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), "  ") != tc.listHead ||
				!strings.Contains(lines[1], "weekly summary of the commits") || !strings.Contains(lines[1], "recurring") {
				t.Errorf("list =\n%s", out)
			}
			out, err = cli(t, tc.opts, db, "rm", j.ID)
			if err != nil || out != "Removed job "+j.ID+"\n" {
				t.Errorf("rm = %q, %v", out, err)
			}
			_, err = cli(t, tc.opts, db, "rm", j.ID)
			var ee *exitErr
			if !errors.As(err, &ee) || ee.code != 1 {
				t.Errorf("rm of a removed job: %v, want exit 1", err)
			}
		})
	}
}

func TestCronAddUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gantry.db")
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		name string
		opts CronOptions
		args []string
		code int
	}{
		{"bad expression", CronOptions{}, []string{"add", "61 * * * *", "p"}, 2},
		{"unknown zone", CronOptions{}, []string{"add", "--timezone", "Mars/Olympus", "0 9 * * *", "p"}, 2},
		{"missing dir, checked", CronOptions{CheckDir: true}, []string{"add", "--cwd", missing, "0 9 * * *", "p"}, 2},
	} {
		_, err := cli(t, tc.opts, db, tc.args...)
		var ee *exitErr
		if !errors.As(err, &ee) || ee.code != tc.code {
			t.Errorf("%s: %v, want exit %d", tc.name, err, tc.code)
		}
	}
	// Unchecked, a directory that does not exist here is kept (workers elsewhere).
	if _, err := cli(t, CronOptions{}, db, "add", "--cwd", missing, "0 9 * * *", "p"); err != nil {
		t.Errorf("unchecked missing dir: %v", err)
	}
	// The delivery flags exist only with LocalDelivery.
	if _, err := cli(t, CronOptions{}, db, "add", "--retry", "0 9 * * *", "p"); err == nil {
		t.Error("--retry accepted without LocalDelivery")
	}
}
