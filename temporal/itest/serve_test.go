package itest

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/temporal/durable"
)

// TestServeAPI drives gantry serve's HTTP API (through its Go client,
// itself a runqueue.Engine) backed by the Temporal engine: start, a
// duplicate key, an ask announced as a control_request and answered,
// the events as stream-json lines, the result, list, cancel.
func TestServeAPI(t *testing.T) {
	c := newCluster(t)
	c.worker()
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "serve.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Options{Store: st, Engine: durable.NewEngine(c.c, durable.EngineOptions{TaskQueue: c.queue, DataConverter: c.dc}), Listener: ln, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	api := &serveapi.Client{URL: "http://" + ln.Addr().String()}
	var e runqueue.Engine = api
	bg := context.Background()

	dir := t.TempDir()
	req := runqueue.Request{Prompt: "calls=1 cmd=echo ok >> api.txt", Dir: dir, Key: "job-1",
		Options: runqueue.Options{Allow: []string{"Read"}}}
	run, err := e.Start(bg, req)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := e.Start(bg, req); !errors.Is(err, runqueue.ErrDuplicate) || again.ID != run.ID {
		t.Errorf("second start with the key: %v, %s (want ErrDuplicate and %s)", err, again.ID, run.ID)
	}
	var types []string
	answered := false
	var result string
	for ev, err := range e.Events(bg, run.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "control_request":
			got, err := e.Get(bg, run.ID)
			if err != nil || len(got.Asks) != 1 || got.Asks[0].Kind != interaction.KindPermission {
				t.Fatalf("pending asks: %+v %v", got.Asks, err)
			}
			if err := e.Answer(bg, run.ID, "nope", &interaction.PermissionAnswer{Choice: interaction.AllowOnce}); !errors.Is(err, runqueue.ErrNotFound) {
				t.Errorf("answer to an unknown ask: %v", err)
			}
			if err := e.Answer(bg, run.ID, got.Asks[0].ID, &interaction.PermissionAnswer{Choice: interaction.AllowOnce}); err != nil {
				t.Fatal(err)
			}
			answered = true
		case "result":
			result = string(ev.Data)
		}
	}
	if !answered || !strings.Contains(result, `"subtype":"success"`) {
		t.Fatalf("events %v, result %s", types, result)
	}
	if got := strings.Join(lines(t, filepath.Join(dir, "api.txt")), ","); got != "ok" {
		t.Errorf("api.txt = %s", got)
	}
	got, err := e.Get(bg, run.ID)
	if err != nil || got.Status != runqueue.StatusSucceeded || got.Result == nil || got.Result.Text != "done after 1" {
		t.Errorf("run = %+v, %v", got, err)
	}
	if err := e.Cancel(bg, run.ID); !errors.Is(err, runqueue.ErrEnded) {
		t.Errorf("cancel of an ended run: %v", err)
	}
	// A run cancelled while it waits for an answer.
	run2, err := e.Start(bg, runqueue.Request{Prompt: "calls=1 cmd=echo x >> y.txt", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	waitAsk(t, c, run2.ID)
	if err := e.Cancel(bg, run2.ID); err != nil {
		t.Fatal(err)
	}
	if res := c.wait(run2.ID, time.Minute); res.Subtype != "interrupted" {
		t.Errorf("cancelled run: %+v", res)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		runs, err := e.List(bg, runqueue.Filter{})
		if err == nil && len(runs) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("list: %d runs, %v", len(runs), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got, _ := e.Get(bg, run2.ID); got.Status != runqueue.StatusCancelled {
		t.Errorf("cancelled run status = %s", got.Status)
	}
	if _, err := e.Get(bg, "no-such-run"); !errors.Is(err, runqueue.ErrNotFound) {
		t.Errorf("get of an unknown run: %v", err)
	}
	// A run started as `gantry-temporal run` starts it (durable.Start):
	// its record shows the request — prompt, directory, flags, origin.
	cliDir := t.TempDir()
	spec := testSpec(cliDir, "Bash", "Edit")
	spec.MaxTurns = 7
	id := c.start(spec, "calls=1 cmd=echo cli >> cli.txt")
	c.wait(id, time.Minute)
	got, err = e.Get(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	want := runqueue.Request{Prompt: "calls=1 cmd=echo cli >> cli.txt", Dir: cliDir,
		Options: runqueue.Options{Model: "claude-test", Allow: []string{"Bash", "Edit"}, MaxTurns: 7},
		Origin:  runqueue.Origin{Kind: runqueue.OriginCLI}}
	if !reflect.DeepEqual(got.Request, want) {
		t.Errorf("record of a CLI run: request = %+v, want %+v", got.Request, want)
	}
	for {
		runs, err := e.List(bg, runqueue.Filter{Origin: runqueue.OriginCLI})
		if err == nil && len(runs) == 1 {
			if runs[0].ID != id || runs[0].Request.Prompt != want.Prompt || runs[0].Request.Dir != cliDir {
				t.Errorf("listed CLI run = %+v", runs[0])
			}
			break
		}
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("list of CLI runs: %+v, %v", runs, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
