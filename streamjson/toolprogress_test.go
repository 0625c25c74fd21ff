package streamjson_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/streamjson"
	"github.com/gantry-dev/gantry/tool"
)

// TestToolProgress: with ToolProgress each status of a call is a
// tool_progress message — WAIT with the partial input, DOING with its
// progress, SUCCESS/ERROR with the elapsed time — also a subagent's, with
// its parent; the SDK's fields are all there and Gantry's are gantry_.
func TestToolProgress(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	events := []agent.Event{
		&agent.ToolStatus{Status: tool.Status{ToolUseID: "t1", Name: "Bash", Phase: tool.PhaseWait, Input: json.RawMessage(`{"command":"go te"}`)}},
		&agent.ToolStatus{Status: tool.Status{ToolUseID: "t1", Name: "Bash", Phase: tool.PhaseDoing, Start: start, Description: "go test", Progress: &tool.Progress{Message: "ok pkg"}}},
		&agent.ToolStatus{Status: tool.Status{ToolUseID: "t1", Name: "Bash", Phase: tool.PhaseSuccess, Start: start, Duration: 1500 * time.Millisecond}},
		&agent.SubagentEvent{ParentToolUseID: "a1", Event: &agent.ToolStatus{Status: tool.Status{ToolUseID: "t2", Name: "Read", Phase: tool.PhaseError, Duration: time.Second}}},
		&agent.ToolStatus{}, // no call: nothing
	}
	now := func() time.Time { return start.Add(2 * time.Second) }
	var got []map[string]any
	for _, m := range record(t, streamjson.WriterOptions{ToolProgress: true, Now: now}, events, &agent.ResultEvent{Subtype: "success"}, nil) {
		if m["type"] == "tool_progress" {
			got = append(got, m)
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d tool_progress messages: %v", len(got), got)
	}
	want := []struct {
		status, input, progress string
		elapsed                 float64
		parent                  any
	}{
		{"WAIT", `{"command":"go te"}`, "", 0, nil},
		{"DOING", "", "ok pkg", 2, nil},
		{"SUCCESS", "", "", 1.5, nil},
		{"ERROR", "", "", 1, "a1"},
	}
	for i, w := range want {
		m := got[i]
		for _, k := range []string{"type", "tool_use_id", "tool_name", "parent_tool_use_id", "elapsed_time_seconds", "uuid", "session_id"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%d lacks %s: %v", i, k, m)
			}
		}
		in, _ := json.Marshal(m["gantry_input"])
		if m["gantry_status"] != w.status || (w.input != "" && string(in) != w.input) || (w.progress != "" && m["gantry_progress"] != w.progress) ||
			m["elapsed_time_seconds"] != w.elapsed || m["parent_tool_use_id"] != w.parent {
			t.Errorf("%d: %v, want %+v", i, m, w)
		}
	}
	// Off by default.
	for _, m := range record(t, streamjson.WriterOptions{}, events, &agent.ResultEvent{Subtype: "success"}, nil) {
		if m["type"] == "tool_progress" {
			t.Fatalf("tool_progress without the option: %v", m)
		}
	}
}

// TestNotifyStream: a notification is a system/notification line of the
// stream, answered at once; other requests go to the wrapped channel.
func TestNotifyStream(t *testing.T) {
	var out strings.Builder
	conn := streamjson.NewConn(strings.NewReader(""), &out, streamjson.ConnOptions{})
	trusted := false
	ch := streamjson.NotifyStream(conn, interaction.Funcs{Trust: func(context.Context, *interaction.TrustRequest) (*interaction.TrustAnswer, error) {
		trusted = true
		return &interaction.TrustAnswer{Trust: true}, nil
	}})
	a, err := interaction.Notify(context.Background(), ch, &interaction.NotificationRequest{Title: "Done", Message: "green",
		ToolUseID: "t9", Who: interaction.Who{SessionID: "s1", Agent: "rev", ParentToolUseID: "a1"}})
	if err != nil || len(a.Delivered) != 1 || a.Delivered[0] != "stream" {
		t.Fatalf("%+v %v", a, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out.String()), &m); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	if m["type"] != "system" || m["subtype"] != "notification" || m["message"] != "green" || m["title"] != "Done" ||
		m["tool_use_id"] != "t9" || m["session_id"] != "s1" || m["agent"] != "rev" || m["parent_tool_use_id"] != "a1" || m["uuid"] == "" {
		t.Errorf("line %v", m)
	}
	if _, err := interaction.AskTrust(context.Background(), ch, &interaction.TrustRequest{}); err != nil || !trusted {
		t.Errorf("trust passed on: %v %v", trusted, err)
	}
	if _, err := interaction.AskTrust(context.Background(), streamjson.NotifyStream(conn, nil), &interaction.TrustRequest{}); !errors.Is(err, interaction.ErrNobody) {
		t.Errorf("nil channel: %v", err)
	}
}
