package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
)

// TestServeCommand runs `gantry serve` in-process: it runs a durable job
// that is due, serves the API on the token it created, and stops on its
// context (SIGTERM in a real process) after draining.
func TestServeCommand(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithResponder(func(llmtest.Request) (llmtest.Reply, bool) { return llmtest.TextReply("hi from serve"), true }))
	home := t.TempDir()
	gh := filepath.Join(home, ".gantry")
	env := map[string]string{"HOME": home, "GANTRY_HOME": gh, "PATH": os.Getenv("PATH"),
		"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL()}
	out, errb := &syncBuffer{}, &syncBuffer{}
	a := &app{stdin: strings.NewReader(""), stdout: out, stderr: errb, getenv: func(k string) string { return env[k] }}

	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(gh, store.DefaultFile), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir := t.TempDir()
	j, err := cron.NewJob("", cron.Spec{Cron: "0 0 1 1 *", Prompt: "say hi", Dir: dir}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	j.NextAt = time.Now().Add(-time.Second)
	if _, err := st.CreateCronJob(ctx, j); err != nil {
		t.Fatal(err)
	}

	sctx, stop := context.WithCancel(ctx)
	done := make(chan int)
	go func() { done <- run(sctx, a, []string{"serve", "--http", "127.0.0.1:0"}) }()
	defer func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d: %s", code, errb)
		}
		if _, err := os.Stat(filepath.Join(gh, serveapi.StateFile)); !os.IsNotExist(err) {
			t.Error("serve left its state file")
		}
		if !strings.Contains(errb.String(), "serve: stopped") {
			t.Errorf("log: %s", errb)
		}
	}()

	// The due job runs.
	deadline := time.Now().Add(30 * time.Second)
	for {
		runs, _ := st.ListRuns(ctx, store.RunFilter{JobID: j.ID, Status: []string{"succeeded"}})
		if len(runs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not run: %s", errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The API is found through the state file, with the generated token.
	var c *serveapi.Client
	for c == nil {
		if c, err = serveapi.Discover(gh); err != nil {
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if fi, err := os.Stat(filepath.Join(gh, serveapi.TokenFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v", fi, err)
	}
	r, err := c.Start(ctx, runqueue.Request{Prompt: "hello", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var last json.RawMessage
	for ev, err := range c.Events(ctx, r.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev.Data
	}
	if !strings.Contains(string(last), `"result":"hi from serve"`) {
		t.Fatalf("last event %s", last)
	}
	// gantry runs sees both.
	lout := &syncBuffer{}
	la := &app{stdin: strings.NewReader(""), stdout: lout, stderr: errb, getenv: a.getenv}
	if code := run(ctx, la, []string{"runs", "list"}); code != 0 || strings.Count(lout.String(), "succeeded") != 2 {
		t.Fatalf("runs list (%d): %s", code, lout)
	}
}

// TestLoadTokenRules: a token file must hold at least 128 bits and be
// readable by its owner only; a missing one is made.
func TestLoadTokenRules(t *testing.T) {
	dir := t.TempDir()
	good := strings.Repeat("ab", 16)
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		want          string // "" = accepted
	}{
		{"good", good + "\n", 0o600, ""},
		{"one byte", "x", 0o600, "at least 32"},
		{"short", strings.Repeat("a", 31), 0o600, "at least 32"},
		{"world readable", good, 0o644, "chmod 600"},
		{"group readable", good, 0o640, "chmod 600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			if err := os.WriteFile(p, []byte(tc.content), tc.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, tc.mode)
			tok, err := loadToken(p)
			if tc.want == "" {
				if err != nil || tok != good {
					t.Fatalf("%q %v", tok, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error with %q, got %v", tc.want, err)
			}
		})
	}
	p := filepath.Join(dir, "new", "serve.token")
	tok, err := loadToken(p)
	fi, serr := os.Stat(p)
	if err != nil || len(tok) < 32 || serr != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("made %q %v %v", tok, err, fi)
	}
}
