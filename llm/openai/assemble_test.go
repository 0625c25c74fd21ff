package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gantry-dev/gantry/llm"
)

type delta struct {
	index          int64
	id, name, args string
}

type done struct {
	id, name, input string
	bad             bool // InputErr set
}

// assembled is the outcome of one assembly.
type assembled struct {
	evs   []llm.Event
	calls []done
	early []string // ids of the calls completed before the finish reason
	late  int
}

// assemble feeds deltas to an assembler (early completion on unless
// atFinish) and finishes it.
func assemble(deltas []delta, atFinish bool) assembled {
	n := 0
	a := newAssembler(func() int { n++; return n - 1 })
	a.atFinish = atFinish
	var out assembled
	for _, d := range deltas {
		out.evs = a.add(out.evs, d.index, d.id, d.name, d.args)
	}
	for _, ev := range out.evs {
		if ev.Type == llm.EventToolUseEnd {
			out.early = append(out.early, ev.ID)
		}
	}
	out.evs = a.finish(out.evs)
	out.late = a.late
	// Calls in block order, the order of the assistant message.
	byBlock := map[int]done{}
	var blocks []int
	for _, ev := range out.evs {
		if ev.Type == llm.EventToolUseEnd {
			byBlock[ev.Index] = done{ev.ID, ev.Name, string(ev.Input), ev.InputErr != nil}
			blocks = append(blocks, ev.Index)
		}
	}
	slices.Sort(blocks)
	for _, b := range blocks {
		out.calls = append(out.calls, byBlock[b])
	}
	return out
}

func TestAssembler(t *testing.T) {
	tests := []struct {
		name   string
		deltas []delta
		want   []done
		early  []string // calls completed before the finish reason
		late   int      // deltas dropped for early-completed calls
		// differs: assembling at the finish gives other calls (only with
		// late > 0, where it gives an InputErr instead).
		differs bool
	}{
		{name: "openai parallel", deltas: []delta{
			{0, "c1", "Read", ""}, {0, "", "", `{"pa`}, {0, "", "", `th":"a"}`},
			{1, "c2", "Grep", ""}, {1, "", "", `{"pattern":"x"}`},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Grep", `{"pattern":"x"}`, false}},
			early: []string{"c1"}},
		{name: "three calls, each completed when the next starts", deltas: []delta{
			{0, "c1", "Read", `{"path":"a"}`}, {1, "c2", "Read", ""}, {1, "", "", `{"path":"b"}`},
			{2, "c3", "Glob", `{"pattern":"*"}`},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Read", `{"path":"b"}`, false}, {"c3", "Glob", `{"pattern":"*"}`, false}},
			early: []string{"c1", "c2"}},
		{name: "index zero reused", deltas: []delta{
			{0, "c1", "Read", `{"path":`}, {0, "", "", `"a"}`},
			{0, "c2", "Read", `{"path":"b"}`},
			{0, "c3", "Glob", ""}, {0, "", "", `{}`},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Read", `{"path":"b"}`, false}, {"c3", "Glob", `{}`, false}},
			early: []string{"c1", "c2"}},
		{name: "id repeated on every chunk", deltas: []delta{
			{0, "c1", "Read", `{"pa`}, {0, "c1", "Read", `th":"a"}`},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}}},
		{name: "arguments before id", deltas: []delta{
			{0, "", "", `{"path"`}, {0, "", "Read", `:"a"}`}, {0, "c1", "", ""},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}}},
		{name: "id after name and args, then a second call", deltas: []delta{
			{0, "", "Read", `{}`}, {0, "c1", "", ""}, {0, "c2", "Grep", `{"pattern":"y"}`},
		}, want: []done{{"c1", "Read", `{}`, false}, {"c2", "Grep", `{"pattern":"y"}`, false}},
			early: []string{"c1"}},
		{name: "no id ever, new name starts a new call", deltas: []delta{
			{0, "", "Read", `{"path":"a"}`}, {0, "", "Glob", `{"pattern":"*"}`},
		}, want: []done{{"call_0", "Read", `{"path":"a"}`, false}, {"call_1", "Glob", `{"pattern":"*"}`, false}},
			early: []string{"call_0"}},
		{name: "no id at distinct indexes waits for the finish", deltas: []delta{
			{0, "", "Read", `{"path":"a"}`}, {1, "", "Glob", `{"pattern":"*"}`},
		}, want: []done{{"call_0", "Read", `{"path":"a"}`, false}, {"call_1", "Glob", `{"pattern":"*"}`, false}}},
		{name: "id that comes after the next call started", deltas: []delta{
			{0, "", "Read", `{"path":"a"}`}, {1, "c2", "Glob", `{}`}, {0, "c1", "", ""},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Glob", `{}`, false}}},
		{name: "name that comes after the next call started", deltas: []delta{
			{0, "c1", "", `{"path":"a"}`}, {1, "c2", "Glob", `{}`}, {0, "", "Read", ""},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Glob", `{}`, false}}},
		{name: "late delta routed by id", deltas: []delta{
			{0, "c1", "Read", `{"path":`}, {1, "c2", "Grep", `{"pattern":"z"}`}, {0, "c1", "", `"a"}`},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Grep", `{"pattern":"z"}`, false}}},
		{name: "interleaved: arguments of the first call after the second started", deltas: []delta{
			{0, "c1", "Read", ""}, {1, "c2", "Grep", ""}, {0, "", "", `{"path":"a"}`}, {1, "", "", `{"pattern":"z"}`},
			{2, "c3", "Glob", `{}`},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Grep", `{"pattern":"z"}`, false}, {"c3", "Glob", `{}`, false}},
			early: []string{"c1", "c2"}},
		{name: "empty arguments wait for the finish", deltas: []delta{
			{0, "c1", "Now", ""}, {1, "c2", "Now", ""},
		}, want: []done{{"c1", "Now", `{}`, false}, {"c2", "Now", `{}`, false}}},
		{name: "whitespace after a completed call is harmless", deltas: []delta{
			{0, "c1", "Read", `{"path":"a"}`}, {1, "c2", "Grep", `{"pattern":"z"}`}, {0, "", "", " \n"},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Grep", `{"pattern":"z"}`, false}},
			early: []string{"c1"}},
		{name: "text after a completed call is dropped", deltas: []delta{
			{0, "c1", "Read", `{"path":"a"}`}, {1, "c2", "Grep", `{"pattern":"z"}`}, {0, "", "", `,"limit":3}`},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Grep", `{"pattern":"z"}`, false}},
			early: []string{"c1"}, late: 1, differs: true},
		{name: "arguments repeated whole at the end", deltas: []delta{
			{0, "c1", "Read", `{"path":"a"}`}, {1, "c2", "Grep", `{"pattern":"z"}`}, {0, "c1", "", `{"path":"a"}`},
		}, want: []done{{"c1", "Read", `{"path":"a"}`, false}, {"c2", "Grep", `{"pattern":"z"}`, false}},
			early: []string{"c1"}, late: 1, differs: true},
		{name: "braces inside strings", deltas: []delta{
			{0, "c1", "Grep", `{"pattern":"}{"`}, {1, "c2", "Grep", `{}`}, {0, "", "", `,"x":"\"}"}`},
		}, want: []done{{"c1", "Grep", `{"pattern":"}{","x":"\"}"}`, false}, {"c2", "Grep", `{}`, false}}},
		{name: "invalid JSON waits and reports InputErr", deltas: []delta{
			{0, "c1", "Read", `{"path":}`}, {1, "c2", "Grep", `{}`},
		}, want: []done{{"c1", "Read", `{}`, true}, {"c2", "Grep", `{}`, false}}},
		{name: "an array is not an object", deltas: []delta{
			{0, "c1", "Read", `[1,2]`}, {1, "c2", "Grep", `{}`},
		}, want: []done{{"c1", "Read", `{}`, true}, {"c2", "Grep", `{}`, false}}},
		{name: "invalid JSON displaced at index zero", deltas: []delta{
			{0, "c1", "Read", `{"path":`}, {0, "c2", "Grep", `{}`},
		}, want: []done{{"c1", "Read", `{}`, true}, {"c2", "Grep", `{}`, false}}, early: []string{"c1"}},
		{name: "no arguments", deltas: []delta{{0, "c1", "Now", ""}}, want: []done{{"c1", "Now", `{}`, false}}},
		{name: "no name", deltas: []delta{{0, "c1", "", `{}`}}, want: []done{{"c1", "", `{}`, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assemble(tt.deltas, false)
			if diff := cmp.Diff(tt.want, got.calls, cmp.AllowUnexported(done{})); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.early, got.early, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("completed before the finish (-want +got):\n%s", diff)
			}
			if got.late != tt.late {
				t.Errorf("late deltas = %d, want %d", got.late, tt.late)
			}
			checkEvents(t, got.evs)
			ref := assemble(tt.deltas, true)
			if d := cmp.Diff(ref.calls, got.calls, cmp.AllowUnexported(done{})); (d != "") != tt.differs {
				t.Errorf("differs from assembling at the finish = %v, want %v:\n%s", d != "", tt.differs, d)
			}
			checkNeverWorse(t, ref, got)
		})
	}
}

// checkNeverWorse checks that early completion gives the same calls as
// completing at the finish, except that a call completed early may keep a
// valid input where the reference has an InputErr (text after a whole
// object, a protocol violation).
func checkNeverWorse(t testing.TB, ref, got assembled) {
	t.Helper()
	if len(ref.calls) != len(got.calls) {
		t.Fatalf("%d calls, %d when assembling at the finish", len(got.calls), len(ref.calls))
	}
	for i, r := range ref.calls {
		g := got.calls[i]
		if g == r {
			continue
		}
		if g.id != r.id || g.name != r.name || !r.bad || g.bad || got.late == 0 {
			t.Fatalf("call %d = %+v, %+v when assembling at the finish (late deltas %d)", i, g, r, got.late)
		}
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
		got := assemble(ds, false)
		checkEvents(t, got.evs)
		checkNeverWorse(t, assemble(ds, true), got)
	})
}

// wellFormed builds a stream of n well-formed calls from the fuzzer's
// bytes: each call's arguments are a whole JSON object (or empty), and its
// deltas identify it, in one of the shapes servers use (distinct indexes or
// index 0 reused; id and name first, repeated on every chunk, or the id
// after some arguments; calls without id; interleaved deltas). It returns
// the deltas and, for streams that are not interleaved, the ids of the calls
// that must complete before the finish reason.
func wellFormed(ops []byte, text string) ([]delta, []string) {
	pos := 0
	next := func() int {
		if pos >= len(ops) {
			return 0
		}
		pos++
		return int(ops[pos-1])
	}
	style := next()
	indexZero := style&1 != 0
	repeatID := style&2 != 0
	repeatName := style&4 != 0
	interleave := style&8 != 0 && (!indexZero || repeatID)
	quoted, _ := json.Marshal(text)
	pool := []string{
		``, `{}`, `{"path":"a.go"}`, ` {"path" : "b.go", "limit": 10 }` + "\n",
		`{"pattern":"}{\"[","nested":{"a":[1,{"b":null}],"c":"{"}}`,
		`{"s":` + string(quoted) + `}`,
	}
	names := []string{"Read", "Grep", "Glob"}
	n := 1 + next()%4
	queues := make([][]delta, n)
	var early []string
	for k := range n {
		id := fmt.Sprintf("call%d", k)
		idMode := next() % 5 // 0: no id, 1: id after the first delta, else first
		if indexZero || (interleave && repeatID) {
			idMode = 2
		}
		name := names[next()%len(names)]
		args := pool[next()%len(pool)]
		idx := int64(k)
		if indexZero {
			idx = 0
		}
		var pieces []string
		for rest := args; rest != ""; {
			m := min(1+next()%7, len(rest))
			pieces = append(pieces, rest[:m])
			rest = rest[m:]
		}
		if len(pieces) == 0 {
			pieces = []string{""}
		}
		if idMode == 1 && len(pieces) == 1 {
			pieces = append(pieces, "")
		}
		for j, p := range pieces {
			d := delta{index: idx, args: p}
			if j == 0 || repeatName {
				d.name = name
			}
			switch {
			case idMode == 0:
			case idMode == 1 && j == 1:
				d.id = id
			case idMode >= 2 && (j == 0 || repeatID):
				d.id = id
			}
			queues[k] = append(queues[k], d)
		}
		if idMode != 0 && strings.TrimSpace(args) != "" && k < n-1 && !interleave {
			early = append(early, id)
		}
	}
	var ds []delta
	for {
		var live []int
		for k := range queues {
			if len(queues[k]) > 0 {
				live = append(live, k)
			}
		}
		if len(live) == 0 {
			break
		}
		q := live[0]
		if interleave {
			q = live[next()%len(live)]
		}
		ds = append(ds, queues[q][0])
		queues[q] = queues[q][1:]
	}
	return ds, early
}

// FuzzAssemblerChunking checks that completing calls early gives the same
// calls as completing them at the finish reason, whatever the chunking and
// the server's shape, and that a stream that is not interleaved completes
// every call with an id and arguments before the finish except the last.
func FuzzAssemblerChunking(f *testing.F) {
	f.Add([]byte{0, 2, 2, 1, 2, 3, 4, 1, 2, 3, 2, 2, 0}, `x`)
	f.Add([]byte{1, 3, 2, 0, 4, 1, 1, 1, 2, 2, 5, 6}, `"}{`)
	f.Add([]byte{8, 3, 0, 0, 2, 1, 1, 3, 2, 1, 4, 9, 9, 9, 1, 0, 2}, `a\b`)
	f.Add([]byte{11, 2, 2, 2, 4, 2, 2, 5, 1, 7, 3, 0, 1, 1}, "\u00e9\n")
	f.Add([]byte{6, 3, 1, 1, 3, 1, 2, 4, 0, 0, 5, 6, 6, 6}, ``)
	f.Fuzz(func(t *testing.T, ops []byte, text string) {
		ds, early := wellFormed(ops, text)
		got := assemble(ds, false)
		checkEvents(t, got.evs)
		ref := assemble(ds, true)
		if diff := cmp.Diff(ref.calls, got.calls, cmp.AllowUnexported(done{})); diff != "" {
			t.Fatalf("calls differ from assembling at the finish (-ref +got):\n%s\ndeltas %+v", diff, ds)
		}
		if got.late != 0 {
			t.Fatalf("%d late deltas in a well-formed stream %+v", got.late, ds)
		}
		for _, id := range early {
			if !slices.Contains(got.early, id) {
				t.Fatalf("%s not completed before the finish (completed early: %v); deltas %+v", id, got.early, ds)
			}
		}
	})
}
