package streamjson_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/streamjson"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// peer is the other side of a Conn under test: it writes lines to the
// Conn's input and reads the Conn's output lines.
type peer struct {
	t     *testing.T
	inW   *io.PipeWriter
	lines chan map[string]any
}

// newPeer wires pipes: returns the Conn's input reader and output writer.
func newPeer(t *testing.T) (*peer, io.Reader, io.Writer) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &peer{t: t, inW: inW, lines: make(chan map[string]any, 1024)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("output line is not JSON: %q", sc.Text())
				continue
			}
			p.lines <- m
		}
	}()
	t.Cleanup(func() { outW.Close(); inW.Close() })
	return p, inR, outW
}

func (p *peer) send(v any) {
	p.t.Helper()
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			p.t.Fatal(err)
		}
	}
	if _, err := p.inW.Write(append(b, '\n')); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next output line that satisfies keep.
func (p *peer) next(keep func(map[string]any) bool) map[string]any {
	p.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatal("output ended")
			}
			if keep == nil || keep(m) {
				return m
			}
		case <-timeout:
			p.t.Fatal("timed out waiting for output")
		}
	}
}

func ofType(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

func TestConnRequests(t *testing.T) {
	p, in, out := newPeer(t)
	var mu sync.Mutex
	var warns []string
	c := streamjson.NewConn(in, out, streamjson.ConnOptions{
		Warn: func(s string) { mu.Lock(); warns = append(warns, s); mu.Unlock() },
		Handle: func(ctx context.Context, req *streamjson.ControlRequest) (any, error) {
			switch req.Subtype() {
			case "echo":
				return json.RawMessage(req.Request), nil
			case "block":
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return nil, errors.New("no such request")
		},
	})
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()

	// A request of ours answered with success, then with an error.
	type result struct {
		raw json.RawMessage
		err error
	}
	res := make(chan result, 1)
	go func() {
		raw, err := c.Request(context.Background(), map[string]string{"subtype": "can_use_tool"})
		res <- result{raw, err}
	}()
	req := p.next(ofType("control_request"))
	id := req["request_id"].(string)
	p.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id, "response": map[string]any{"behavior": "allow"}}})
	if r := <-res; r.err != nil || !strings.Contains(string(r.raw), "allow") {
		t.Fatalf("Request = %s, %v", r.raw, r.err)
	}
	go func() {
		raw, err := c.Request(context.Background(), map[string]string{"subtype": "hook_callback"})
		res <- result{raw, err}
	}()
	req = p.next(ofType("control_request"))
	p.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": req["request_id"], "error": "callback threw"}})
	var re *streamjson.RemoteError
	if r := <-res; !errors.As(r.err, &re) || re.Message != "callback threw" || re.Subtype != "hook_callback" {
		t.Fatalf("error response: %v", r.err)
	}

	// A cancelled request sends control_cancel_request.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := c.Request(ctx, map[string]string{"subtype": "can_use_tool"})
		res <- result{nil, err}
	}()
	req = p.next(ofType("control_request"))
	cancel()
	if r := <-res; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled request: %v", r.err)
	}
	if m := p.next(nil); m["type"] != "control_cancel_request" || m["request_id"] != req["request_id"] {
		t.Fatalf("after cancel: %v", m)
	}

	// Requests of the other side: answered, an unknown one gets an error,
	// a cancelled one ends.
	p.send(`{"type":"control_request","request_id":"r1","request":{"subtype":"echo","x":1}}`)
	m := p.next(ofType("control_response"))["response"].(map[string]any)
	if m["subtype"] != "success" || m["request_id"] != "r1" || m["response"].(map[string]any)["x"] != 1.0 {
		t.Fatalf("echo response: %v", m)
	}
	p.send(`{"type":"control_request","request_id":"r2","request":{"subtype":"frobnicate"}}`)
	m = p.next(ofType("control_response"))["response"].(map[string]any)
	if m["subtype"] != "error" || m["request_id"] != "r2" || m["error"] != "no such request" {
		t.Fatalf("unknown request: %v", m)
	}
	p.send(`{"type":"control_request","request_id":"r3","request":{"subtype":"block"}}`)
	p.send(`{"type":"control_cancel_request","request_id":"r3"}`)
	m = p.next(ofType("control_response"))["response"].(map[string]any)
	if m["subtype"] != "error" || m["request_id"] != "r3" {
		t.Fatalf("cancelled handler: %v", m)
	}

	// Bad input is skipped with a warning; keep_alive is fine.
	p.send(`not json`)
	p.send(`{"type":"keep_alive"}`)
	p.send(`{"type":"mystery"}`)
	p.send(`{"type":"control_response","response":{"subtype":"success","request_id":"nobody"}}`)

	// The end of the input fails what still waits.
	go func() {
		_, err := c.Request(context.Background(), map[string]string{"subtype": "can_use_tool"})
		res <- result{nil, err}
	}()
	p.next(ofType("control_request"))
	p.inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := <-res; !errors.Is(r.err, streamjson.ErrClosed) {
		t.Fatalf("request after EOF: %v", r.err)
	}
	if _, err := c.Request(context.Background(), map[string]string{"subtype": "x"}); !errors.Is(err, streamjson.ErrClosed) {
		t.Fatalf("request on a closed Conn: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warns) != 3 {
		t.Errorf("warnings = %q, want 3 (not JSON, unknown type, unknown response)", warns)
	}
}

func FuzzConnInput(f *testing.F) {
	for _, s := range []string{
		`{"type":"user","message":{"role":"user","content":"hi"}}`,
		`{"type":"control_request","request_id":"1","request":{"subtype":"x"}}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"gantry_req_1"}}`,
		`{"type":"control_cancel_request","request_id":"1"}`,
		`{]`, ``, "\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		var users int
		c := streamjson.NewConn(strings.NewReader(input), io.Discard, streamjson.ConnOptions{
			User: func(*streamjson.UserInput) { users++ },
			Handle: func(ctx context.Context, req *streamjson.ControlRequest) (any, error) {
				return nil, nil
			},
		})
		if err := c.Run(context.Background()); err != nil && !strings.Contains(err.Error(), "input line") {
			t.Fatal(err)
		}
	})
}

func FuzzPromptBlocks(f *testing.F) {
	for _, s := range []string{`"hi"`, `[{"type":"text","text":"a"}]`, `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AQID"}}]`,
		`[{"type":"document"}]`, `null`, `{}`, `[`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		blocks, err := streamjson.PromptBlocks(json.RawMessage(content))
		if err != nil {
			if !errors.Is(err, streamjson.ErrContent) {
				t.Fatalf("error %v does not wrap ErrContent", err)
			}
			return
		}
		if len(blocks) == 0 {
			t.Fatal("no blocks and no error")
		}
	})
}

func TestPromptBlocks(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{`"hello"`, `text:hello`, ""},
		{`[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AQID"}}]`, `text:a image:image/png:3`, ""},
		{`[{"type":"image","source":{"type":"url","url":"https://x"}}]`, "", "only base64 images"},
		{`[{"type":"document","source":{}}]`, "", `type "document"`},
		{`[]`, "", "no text or image"},
		{`42`, "", "neither a string nor an array"},
		{``, "", "no content"},
	} {
		blocks, err := streamjson.PromptBlocks(json.RawMessage(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("PromptBlocks(%s) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("PromptBlocks(%s): %v", tc.in, err)
			continue
		}
		var got []string
		for _, b := range blocks {
			if b.Type == "image" {
				got = append(got, "image:"+b.MIMEType+":"+string(rune('0'+len(b.Data))))
				continue
			}
			got = append(got, string(b.Type)+":"+b.Text)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("PromptBlocks(%s) = %v, want %s", tc.in, got, tc.want)
		}
	}
}
