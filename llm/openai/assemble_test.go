package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/llm"
)

type delta struct {
	index          int64
	id, name, args string
}

type done struct{ id, name, input string }

func runAssembler(deltas []delta) ([]llm.Event, []done) {
	n := 0
	a := newAssembler(func() int { n++; return n - 1 })
	var evs []llm.Event
	for _, d := range deltas {
		evs = a.add(evs, d.index, d.id, d.name, d.args)
	}
	evs = a.finish(evs)
	var out []done
	for _, ev := range evs {
		if ev.Type == llm.EventToolUseEnd {
			out = append(out, done{ev.ID, ev.Name, string(ev.Input)})
		}
	}
	return evs, out
}

func TestAssembler(t *testing.T) {
	tests := []struct {
		name   string
		deltas []delta
		want   []done
	}{
		{"openai parallel", []delta{
			{0, "c1", "Read", ""}, {0, "", "", `{"pa`}, {0, "", "", `th":"a"}`},
			{1, "c2", "Grep", ""}, {1, "", "", `{"pattern":"x"}`},
		}, []done{{"c1", "Read", `{"path":"a"}`}, {"c2", "Grep", `{"pattern":"x"}`}}},
		{"index zero reused", []delta{
			{0, "c1", "Read", `{"path":`}, {0, "", "", `"a"}`},
			{0, "c2", "Read", `{"path":"b"}`},
			{0, "c3", "Glob", ""}, {0, "", "", `{}`},
		}, []done{{"c1", "Read", `{"path":"a"}`}, {"c2", "Read", `{"path":"b"}`}, {"c3", "Glob", `{}`}}},
		{"id repeated on every chunk", []delta{
			{0, "c1", "Read", `{"pa`}, {0, "c1", "Read", `th":"a"}`},
		}, []done{{"c1", "Read", `{"path":"a"}`}}},
		{"arguments before id", []delta{
			{0, "", "", `{"path"`}, {0, "", "Read", `:"a"}`}, {0, "c1", "", ""},
		}, []done{{"c1", "Read", `{"path":"a"}`}}},
		{"id after name and args, then a second call", []delta{
			{0, "", "Read", `{}`}, {0, "c1", "", ""}, {0, "c2", "Grep", `{"pattern":"y"}`},
		}, []done{{"c1", "Read", `{}`}, {"c2", "Grep", `{"pattern":"y"}`}}},
		{"no id ever, new name starts a new call", []delta{
			{0, "", "Read", `{"path":"a"}`}, {0, "", "Glob", `{"pattern":"*"}`},
		}, []done{{"call_0", "Read", `{"path":"a"}`}, {"call_1", "Glob", `{"pattern":"*"}`}}},
		{"late delta routed by id", []delta{
			{0, "c1", "Read", `{"path":`}, {1, "c2", "Grep", `{"pattern":"z"}`}, {0, "c1", "", `"a"}`},
		}, []done{{"c1", "Read", `{"path":"a"}`}, {"c2", "Grep", `{"pattern":"z"}`}}},
		{"no arguments", []delta{{0, "c1", "Now", ""}}, []done{{"c1", "Now", `{}`}}},
		{"no name", []delta{{0, "c1", "", `{}`}}, []done{{"c1", "", `{}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, got := runAssembler(tt.deltas)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(done{})); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			checkEvents(t, evs)
		})
	}
}

// checkEvents verifies the event grammar: per block, one start, then
// deltas, then one end whose input is the deltas' concatenation (when it
// is valid JSON).
func checkEvents(t testing.TB, evs []llm.Event) {
	t.Helper()
	type st struct {
		started, ended bool
		args           string
	}
	blocks := map[int]*st{}
	for _, ev := range evs {
		b := blocks[ev.Index]
		if b == nil {
			b = &st{}
			blocks[ev.Index] = b
		}
		switch ev.Type {
		case llm.EventToolUseStart:
			if b.started {
				t.Fatalf("block %d started twice", ev.Index)
			}
			b.started = true
		case llm.EventToolUseDelta:
			if !b.started || b.ended {
				t.Fatalf("delta outside block %d", ev.Index)
			}
			b.args += ev.Text
		case llm.EventToolUseEnd:
			if !b.started || b.ended {
				t.Fatalf("bad end of block %d", ev.Index)
			}
			b.ended = true
			if ev.InputErr == nil && strings.TrimSpace(b.args) != "" {
				var x, y any
				if json.Unmarshal([]byte(b.args), &x) != nil || json.Unmarshal(ev.Input, &y) != nil || !cmp.Equal(x, y) {
					t.Fatalf("block %d: input %s from deltas %q", ev.Index, ev.Input, b.args)
				}
			}
			if !json.Valid(ev.Input) {
				t.Fatalf("block %d: invalid input %q", ev.Index, ev.Input)
			}
		}
	}
	for i, b := range blocks {
		if !b.ended {
			t.Fatalf("block %d never ended", i)
		}
	}
}

func FuzzAssembler(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0, 0, 1, 5}, `{"a":1}`)
	f.Add([]byte{0, 0, 0, 0, 9, 9, 9}, `{"path":"x"}`)
	f.Add([]byte{1, 2, 0, 1, 3}, ``)
	f.Fuzz(func(t *testing.T, ops []byte, args string) {
		ids := []string{"", "c1", "c2", "c3"}
		names := []string{"", "Read", "Grep"}
		var ds []delta
		for i, op := range ops {
			piece := ""
			if len(args) > 0 {
				lo := (i * 3) % len(args)
				piece = args[lo:min(lo+3, len(args))]
			}
			ds = append(ds, delta{int64(op % 3), ids[(op/3)%4], names[(op/12)%3], piece})
		}
		evs, _ := runAssembler(ds)
		checkEvents(t, evs)
	})
}
