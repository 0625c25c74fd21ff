package executor

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/gantry-dev/gantry/tool"
)

func TestStreamSafeCallStartsBeforeStreamEnds(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	st := e.Stream(context.Background(), session())
	st.Add(call("g", "Gate", `{"id":"g"}`))
	// The model is still streaming (no Close/Wait yet), and the call runs.
	if id := <-k.gateIn; id != "g" {
		t.Fatalf("started %q", id)
	}
	st.Add(call("n", "Noop", `{}`)) // safe: starts beside the running Gate
	st.Add(call("w", "Store", `{"id":"w"}`))
	close(k.release)
	b := st.Wait()
	if len(b.Outcomes) != 3 || text(b.Outcomes[0]) != "released g" || text(b.Outcomes[1]) != "ok" || text(b.Outcomes[2]) != "wrote w in /w" {
		t.Fatalf("outcomes %+v", b.Outcomes)
	}
}

// TestStreamUnsafeWaitsForRunning runs in a synctest bubble: synctest.Wait
// lets every call that could start start, where a sleep could only guess.
func TestStreamUnsafeWaitsForRunning(t *testing.T) { synctest.Test(t, testStreamUnsafeWaitsForRunning) }

func testStreamUnsafeWaitsForRunning(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	st := e.Stream(context.Background(), session())
	st.Add(call("g", "Gate", `{"id":"g"}`))
	<-k.gateIn
	st.Add(call("w", "Store", `{"id":"w"}`))
	st.Add(call("s", "Sleep", `{"id":"s"}`)) // safe, but must not overtake w
	synctest.Wait()
	k.probe.mu.Lock()
	started := strings.Join(k.probe.started, ",")
	k.probe.mu.Unlock()
	if started != "g" {
		t.Errorf("started %s while g runs; want only g", started)
	}
	close(k.release)
	st.Wait()
	k.probe.mu.Lock()
	defer k.probe.mu.Unlock()
	if got := strings.Join(k.probe.started, ","); got != "g,w,s" {
		t.Errorf("start order %s", got)
	}
}

// TestStreamResultsInOrder runs in a synctest bubble: the timeouts and sleeps run on the
// fake clock.
func TestStreamResultsInOrder(t *testing.T) { synctest.Test(t, testStreamResultsInOrder) }

func testStreamResultsInOrder(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	st := e.Stream(context.Background(), session())
	st.Add(call("slow", "Sleep", `{"ms":30,"id":"slow"}`))
	st.Add(call("fast", "Sleep", `{"ms":0,"id":"fast"}`))
	st.Add(call("bad", "Nope", `{}`))
	st.Close()
	var ids []string
	for o := range st.Results() {
		ids = append(ids, o.ID)
	}
	if strings.Join(ids, ",") != "slow,fast,bad" {
		t.Errorf("order %v", ids)
	}
	st.Wait()
}

func TestStreamPartialWaitEvents(t *testing.T) {
	k := newKit(t)
	var log statusLog
	e := New(k.resolver(t), Options{Decider: allowAll(), Status: log.add})
	st := e.Stream(context.Background(), session())
	long := strings.Repeat("x", 600)
	st.Partial("p", "Echo", nil)                                  // the block starts: WAIT
	st.Partial("p", "Echo", []byte(`{"text":"hel`))               // small growth: no event
	st.Partial("p", "Echo", []byte(`{"text":"`+long+`","cou`))    // 512 bytes more: WAIT
	st.Partial("p", "Echo", []byte(`{"text":"`+long+`","count"`)) // small growth: no event
	st.Add(call("p", "Echo", `{"text":"hello","count":2}`))
	st.Wait()
	evs := log.all("p")
	if len(evs) < 4 {
		t.Fatalf("events %+v", evs)
	}
	if evs[0].Input != nil || evs[0].Phase != tool.PhaseWait || evs[0].Name != "Echo" {
		t.Errorf("first WAIT %+v", evs[0])
	}
	if string(evs[1].Input) != `{"text":"`+long+`"}` || evs[1].Phase != tool.PhaseWait {
		t.Errorf("second WAIT %s %s", evs[1].Phase, evs[1].Input)
	}
	if evs[2].Phase != tool.PhaseWait || string(evs[2].Input) != `{"text":"hello","count":2}` {
		t.Errorf("third event %s %s", evs[2].Phase, evs[2].Input)
	}
	if last := evs[len(evs)-1]; last.Phase != tool.PhaseSuccess {
		t.Errorf("last %+v", last)
	}
}

func TestStreamDiscard(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	s := NewSharedEnv(&tool.Env{WorkDir: "/w"})
	st := e.Stream(context.Background(), s)
	st.Add(call("g", "Gate", `{"id":"g"}`))
	<-k.gateIn
	st.Add(call("cd", "Cd", `{"id":"x"}`)) // queued behind g; never runs
	st.Discard()
	if b := st.Wait(); len(b.Outcomes) != 0 {
		t.Errorf("discarded stream returned %d outcomes", len(b.Outcomes))
	}
	st.Add(call("late", "Noop", `{}`)) // ignored
	if s.Env().WorkDir != "/w" {
		t.Errorf("modifier of a discarded call applied")
	}
	if k.probe.maxSeen() != 1 {
		t.Errorf("queued call ran")
	}
}

// A minimal recording tracer (the otel SDK is not a dependency).
type recTracer struct {
	embedded.Tracer
	mu    sync.Mutex
	spans []*recSpan
}

type recProvider struct {
	embedded.TracerProvider
	t *recTracer
}

func (p recProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return p.t }

type recSpan struct {
	noop.Span
	name   string
	attrs  map[attribute.Key]string
	status codes.Code
	ended  bool
}

func (t *recTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	s := &recSpan{name: name, attrs: map[attribute.Key]string{}}
	for _, a := range cfg.Attributes() {
		s.attrs[a.Key] = a.Value.Emit()
	}
	t.mu.Lock()
	t.spans = append(t.spans, s)
	t.mu.Unlock()
	return trace.ContextWithSpan(ctx, s), s
}

func (s *recSpan) SetAttributes(kv ...attribute.KeyValue) {
	for _, a := range kv {
		s.attrs[a.Key] = a.Value.Emit()
	}
}
func (s *recSpan) SetStatus(c codes.Code, _ string) { s.status = c }
func (s *recSpan) End(...trace.SpanEndOption)       { s.ended = true }

func TestSpans(t *testing.T) {
	k := newKit(t)
	tr := &recTracer{}
	e := New(k.resolver(t), Options{Decider: allowAll(), TracerProvider: recProvider{t: tr}})
	run(t, e, call("a", "Say", `{"text":"x"}`), call("b", "Boom", `{}`))
	if len(tr.spans) != 2 {
		t.Fatalf("%d spans", len(tr.spans))
	}
	ok, bad := tr.spans[0], tr.spans[1]
	if ok.name != "execute_tool Say" || !ok.ended || ok.status == codes.Error ||
		ok.attrs["gen_ai.operation.name"] != "execute_tool" || ok.attrs["gen_ai.tool.name"] != "Echo" ||
		ok.attrs["gen_ai.tool.call.id"] != "a" || ok.attrs["gen_ai.tool.type"] != "function" {
		t.Errorf("span %+v", ok)
	}
	if !bad.ended || bad.status != codes.Error || bad.attrs["error.type"] != "panic" {
		t.Errorf("error span %+v", bad)
	}
}

func TestRepairJSONPrefix(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, ``},
		{`{`, `{}`},
		{`{"a`, `{}`},
		{`{"a"`, `{}`},
		{`{"a":`, `{}`},
		{`{"a":"x`, `{"a":"x"}`},
		{`{"a":"x\`, `{"a":"x"}`},
		{`{"a":"x\u00`, `{"a":"x"}`},
		{`{"a":"x\\`, `{"a":"x\\"}`},
		{`{"a":1`, `{"a":1}`},
		{`{"a":1.`, `{}`},
		{`{"a":-`, `{}`},
		{`{"a":tr`, `{}`},
		{`{"a":true`, `{"a":true}`},
		{`{"a":1,`, `{"a":1}`},
		{`{"a":1,"b`, `{"a":1}`},
		{`{"a":[1,2`, `{"a":[1,2]}`},
		{`{"a":[1,{"b":"c`, `{"a":[1,{"b":"c"}]}`},
		{`{"a":{"b":{}},"c":[`, `{"a":{"b":{}},"c":[]}`},
		{`{"a":"é`, `{"a":"é"}`},
		{"{\"a\":\"\xc3", `{"a":""}`},
		{`{"a":1}`, `{"a":1}`},
		{`nonsense`, ``},
		{`{"a":1}}`, `{"a":1}`},
	}
	for _, tc := range tests {
		got := RepairJSONPrefix([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("RepairJSONPrefix(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzRepairJSONPrefix(f *testing.F) {
	for _, s := range []string{`{"a":"b","c":[1,2,{"d":null}],"e":true}`, `{"x":"\u00e9\n\\","y":-1.5e3}`, `[{"a":[]}]`, `{"k":{"k":{"k":"v"}}}`} {
		f.Add(s, len(s)/2)
	}
	f.Fuzz(func(t *testing.T, s string, cut int) {
		got := RepairJSONPrefix([]byte(s))
		if got != nil && !json.Valid(got) {
			t.Fatalf("invalid output %q for %q", got, s)
		}
		if !json.Valid([]byte(s)) {
			return
		}
		// Every prefix of valid JSON repairs to valid JSON (or nothing).
		if cut < 0 {
			cut = -cut
		}
		p := []byte(s)[:cut%(len(s)+1)]
		if r := RepairJSONPrefix(p); r != nil && !json.Valid(r) {
			t.Fatalf("prefix %q repaired to invalid %q", p, r)
		}
		if b := strings.TrimSpace(s); len(b) > 0 && b[0] == '{' && string(RepairJSONPrefix([]byte(s))) == "" {
			t.Fatalf("complete object %q repaired to nothing", s)
		}
	})
}

func FuzzCoerce(f *testing.F) {
	k := newKit(f)
	e := New(k.resolver(f), Options{Decider: allowAll()})
	var echo tool.Tool
	for _, tl := range k.tools {
		if tl.Spec().Name == "Echo" {
			echo = tl
		}
	}
	for _, s := range []string{`{"text":"a","flag":"true"}`, `{"text":"1","count":"2"}`, `{"text":"a","opts":"{\"deep\":\"false\"}"}`,
		`{"text":"a","tags":"[1]"}`, `{"text":"a","limit":null}`, `"{\"text\":\"x\"}"`, `{"text":"a","meta":{"x":"1e2"}}`} {
		f.Add(s)
	}
	c := e.schemas.get(echo.Spec().InputSchema)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeInput(json.RawMessage(s))
		if err != nil {
			return
		}
		valid := c.schema.Validate(v) == nil
		before, _ := encodeInput(v)
		nv, changed := coerce(v, c.schema)
		if valid && changed {
			t.Fatalf("a valid input was coerced: %s", s)
		}
		after, _ := encodeInput(nv)
		if !changed && string(before) != string(after) {
			t.Fatalf("unchanged but different: %s vs %s", before, after)
		}
		out, coerced, err := e.validate(echo.Spec(), json.RawMessage(s))
		if valid && (err != nil || coerced || string(out) != s) {
			t.Fatalf("valid input %s changed to %s (%v)", s, out, err)
		}
	})
}

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"Read", "Raed", 2}, {"é", "e", 1}} {
		if got := levenshtein(tc.a, tc.b); got != tc.d {
			t.Errorf("levenshtein(%q,%q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}
