package durable

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
)

func TestScheduleOptions(t *testing.T) {
	opts, _ := json.Marshal(runqueue.Options{Mode: "acceptEdits", Allow: []string{"Bash(go test *)"}, MaxTurns: 9})
	base := store.CronJob{ID: "1a2b3c4d", Cron: "*/10 * * * *", Prompt: "check the build", Recurring: true, Dir: "/src/app",
		Options: opts, ExpiresAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	with := func(f func(*store.CronJob)) store.CronJob {
		j := base
		f(&j)
		return j
	}
	tests := []struct {
		name       string
		job        store.CronJob
		zone       string
		catchup    time.Duration
		remaining  int
		jitter     time.Duration
		wantErr    error
		wantOrigin runqueue.Origin
	}{
		{name: "recurring, catchup once: one period", job: base, zone: "UTC", catchup: 10 * time.Minute, jitter: time.Minute,
			wantOrigin: runqueue.Origin{Kind: runqueue.OriginCron, JobID: "1a2b3c4d"}},
		{name: "catchup none: the grace", job: with(func(j *store.CronJob) { j.Catchup = cron.CatchupNone }), zone: "UTC",
			catchup: 2 * time.Minute, jitter: time.Minute, wantOrigin: runqueue.Origin{Kind: runqueue.OriginCron, JobID: "1a2b3c4d"}},
		// Every day, not "1-5": a weekday schedule's period depends on the
		// day the test runs (Thursday to Friday is a day, Friday to Monday three).
		{name: "a daily job: a day, jitter capped", job: with(func(j *store.CronJob) { j.Cron = "0 9 * * *" }), zone: "UTC",
			catchup: 24 * time.Hour, jitter: cron.MaxJitter, wantOrigin: runqueue.Origin{Kind: runqueue.OriginCron, JobID: "1a2b3c4d"}},
		{name: "one-shot: one action", job: with(func(j *store.CronJob) { j.Recurring = false; j.ExpiresAt = time.Time{} }), zone: "UTC",
			remaining: 1, jitter: cron.OneShotJitter, wantOrigin: runqueue.Origin{Kind: runqueue.OriginCron, JobID: "1a2b3c4d"}},
		{name: "a trigger's job, its own zone", job: with(func(j *store.CronJob) { j.TriggerID = "t1"; j.Location = "Europe/Paris"; j.Retry = true }),
			zone: "Europe/Paris", catchup: 10 * time.Minute, jitter: time.Minute,
			wantOrigin: runqueue.Origin{Kind: runqueue.OriginTrigger, JobID: "1a2b3c4d", TriggerID: "t1", Retry: true}},
		{name: "bad id", job: with(func(j *store.CronJob) { j.ID = "../x" }), wantErr: store.ErrInvalid},
		{name: "bad expression", job: with(func(j *store.CronJob) { j.Cron = "61 * * * *" }), wantErr: store.ErrInvalid},
		{name: "bad zone", job: with(func(j *store.CronJob) { j.Location = "Mars/Olympus" }), wantErr: store.ErrInvalid},
		{name: "relative dir", job: with(func(j *store.CronJob) { j.Dir = "app" }), wantErr: runqueue.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ScheduleOptions(tt.job, "q", RunOptions{HistoryEvents: 500}, cron.DefaultGrace, "UTC")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.ID != SchedulePrefix+tt.job.ID || o.Overlap != ScheduleOverlap || o.CatchupWindow != tt.catchup ||
				o.RemainingActions != tt.remaining || o.Spec.Jitter != tt.jitter || o.Spec.TimeZoneName != tt.zone ||
				len(o.Spec.CronExpressions) != 1 || o.Spec.CronExpressions[0] != tt.job.Cron || !o.Spec.EndAt.Equal(tt.job.ExpiresAt) {
				t.Errorf("options = %+v %+v", o, o.Spec)
			}
			act, ok := o.Action.(*client.ScheduleWorkflowAction)
			if !ok || act.Workflow != WorkflowName || act.TaskQueue != "q" || act.ID != o.ID || len(act.Args) != 1 {
				t.Fatalf("action = %+v", o.Action)
			}
			in := act.Args[0].(RunInput)
			if in.Prompt != "check the build" || in.Spec.WorkDir != "/src/app" || in.Spec.PermissionMode != "acceptEdits" ||
				in.Spec.MaxTurns != 9 || len(in.Spec.Allow) != 1 || in.Options.HistoryEvents != 500 {
				t.Errorf("run input = %+v", in)
			}
			var req runqueue.Request
			if err := json.Unmarshal([]byte(act.Memo[memoRequest].(string)), &req); err != nil {
				t.Fatal(err)
			}
			if req.Origin != tt.wantOrigin || req.Key != "" || req.Prompt != in.Prompt || req.Options.Mode != "acceptEdits" {
				t.Errorf("run memo = %+v", req)
			}
			var j store.CronJob
			if err := json.Unmarshal([]byte(o.Memo[memoJob].(string)), &j); err != nil || j.ID != tt.job.ID || j.Prompt != tt.job.Prompt {
				t.Errorf("schedule memo = %+v, %v", j, err)
			}
		})
	}
}

func TestWithFires(t *testing.T) {
	next := time.Date(2026, 11, 26, 9, 0, 42, 0, time.UTC) // 09:00 plus 42 s of jitter
	last := time.Date(2026, 11, 26, 8, 50, 0, 0, time.UTC)
	recent := []client.ScheduleActionResult{{ScheduleTime: last.Add(17 * time.Second),
		StartWorkflowResult: &client.ScheduleWorkflowExecution{WorkflowID: SchedulePrefix + "x-2026-11-26T08:50:00Z"}}}
	j := withFires(store.CronJob{ID: "x", Cron: "*/10 * * * *", NextAt: time.Unix(1, 0)}, []time.Time{next, next.Add(time.Hour)}, recent, "UTC")
	if !j.NextAt.Equal(next) || !j.NextScheduled.Equal(next.Truncate(time.Minute)) || !j.LastFiredAt.Equal(last) {
		t.Errorf("job = %+v", j)
	}
	// Without the workflow id, the action's time.
	recent[0].StartWorkflowResult = nil
	if j := withFires(store.CronJob{ID: "x", Cron: "*/10 * * * *"}, nil, recent, "UTC"); !j.NextAt.IsZero() || !j.LastFiredAt.Equal(recent[0].ScheduleTime) {
		t.Errorf("a job with no next fire: %+v", j)
	}
}
