package trigger_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/trigger"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

func FuzzParseBody(f *testing.F) {
	for _, s := range []string{`{"name":"n","prompt":"p","cron":"0 3 * * *"}`, `{"permission_mode":"plan","allowed_tools":["Bash"]}`, `{"x":1}`, `null`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := trigger.ParseBody([]byte(s))
		if err != nil && !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("error %v is not ErrInvalid", err)
		}
		_ = b
	})
}

func TestBounds(t *testing.T) {
	tests := []struct {
		name    string
		session tool.Mode
		tpl     trigger.Template
		ok      bool
	}{
		{"same mode and dir", tool.ModeDefault, trigger.Template{Dir: "/w"}, true},
		{"subdirectory, narrower mode", tool.ModeAcceptEdits, trigger.Template{Dir: "/w/sub", Options: optsMode(tool.ModePlan)}, true},
		{"wider mode", tool.ModeDefault, trigger.Template{Dir: "/w", Options: optsMode(tool.ModeAcceptEdits)}, false},
		{"bypass from bypass", tool.ModeBypassPermissions, trigger.Template{Dir: "/w", Options: optsMode(tool.ModeBypassPermissions)}, false},
		{"outside", tool.ModeDefault, trigger.Template{Dir: "/other"}, false},
		{"sibling prefix", tool.ModeDefault, trigger.Template{Dir: "/w2"}, false},
		{"parent", tool.ModeDefault, trigger.Template{Dir: "/"}, false},
		{"allow rules", tool.ModeDefault, trigger.Template{Dir: "/w", Options: optsAllow("Bash")}, false},
		{"plan session, default trigger", tool.ModePlan, trigger.Template{Dir: "/w"}, false},
	}
	for _, tt := range tests {
		err := (trigger.Bounds{Mode: tt.session, Dirs: []string{"/w"}}).Check(tt.tpl)
		if (err == nil) != tt.ok {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestScheduledTriggerKeepsItsJob(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "g.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir := t.TempDir()
	name, prompt, cron := "daily", "report", "0 8 * * *"
	tr, err := trigger.Create(ctx, st, trigger.Body{Name: &name, Prompt: &prompt, Cron: &cron}, dir, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	j, err := st.GetCronJob(ctx, tr.JobID)
	if err != nil || j.TriggerID != tr.ID || !j.ExpiresAt.IsZero() {
		t.Fatalf("job %+v %v", j, err)
	}
	cron2 := "0 9 * * *"
	tr2, err := trigger.Update(ctx, st, "daily", trigger.Body{Cron: &cron2}, nil, time.Now())
	if err != nil || tr2.JobID == tr.JobID {
		t.Fatalf("update %+v %v", tr2, err)
	}
	if _, err := st.GetCronJob(ctx, tr.JobID); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("the old job is left")
	}
	if err := trigger.Delete(ctx, st, tr.ID); err != nil {
		t.Fatal(err)
	}
	if jobs, _ := st.ListCronJobs(ctx); len(jobs) != 0 {
		t.Fatalf("jobs left %v", jobs)
	}
	req := trigger.Request(tr2)
	if req.Origin.TriggerID != tr.ID || req.Dir != dir {
		t.Fatalf("request %+v", req)
	}
}

func optsMode(m tool.Mode) (o runqueue.Options) { o.Mode = m; return }
func optsAllow(r string) (o runqueue.Options)   { o.Allow = []string{r}; return }

// TestPauseTrigger: pausing a trigger pauses its schedule's job, through
// a change of the trigger too; a trigger without a schedule has none.
func TestPauseTrigger(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "g.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir, now := t.TempDir(), time.Now()
	name, prompt, cron := "nightly", "report", "0 3 * * *"
	tr, err := trigger.Create(ctx, st, trigger.Body{Name: &name, Prompt: &prompt, Cron: &cron}, dir, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	j, err := trigger.Pause(ctx, st, "nightly", true, now)
	if err != nil || j.ID != tr.JobID || !j.Paused || !j.NextAt.IsZero() {
		t.Fatalf("pause: %+v %v", j, err)
	}
	cron2 := "0 4 * * *"
	tr2, err := trigger.Update(ctx, st, tr.ID, trigger.Body{Cron: &cron2}, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if j, err := st.GetCronJob(ctx, tr2.JobID); err != nil || !j.Paused || j.Cron != cron2 {
		t.Fatalf("after the change: %+v %v", j, err)
	}
	j, err = trigger.Pause(ctx, st, tr.ID, false, now)
	if err != nil || j.Paused || j.NextAt.IsZero() || j.NextScheduled.Hour() != 4 {
		t.Fatalf("resume: %+v %v", j, err)
	}
	other, p2 := "adhoc", "p"
	if _, err := trigger.Create(ctx, st, trigger.Body{Name: &other, Prompt: &p2}, dir, nil, now); err != nil {
		t.Fatal(err)
	}
	if _, err := trigger.Pause(ctx, st, "adhoc", true, now); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("pausing an on-request trigger: %v", err)
	}
	if _, err := trigger.Pause(ctx, st, "missing", true, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pausing a missing trigger: %v", err)
	}
}
