package lsp

import (
	"bytes"
	"encoding/json"
	"testing"
)

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

// FuzzFrames feeds arbitrary bytes to the message reader: it must end
// (never hang or panic) and answer no request it cannot parse.
func FuzzFrames(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 44\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":1}}"))
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n"))
	f.Add([]byte("Content-Length: -1\r\n\r\n"))
	f.Add([]byte("Content-Length: 60\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"workspace/configuration\"}"))
	f.Add([]byte("Content-Type: x\r\nContent-Length: 3\r\n\r\nnul"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newConn(bytes.NewReader(data), discard{}, func(string, json.RawMessage, bool) (any, error) { return nil, nil })
		<-c.Done()
		if c.err == nil {
			t.Fatal("connection ended without a reason")
		}
	})
}

// FuzzDecode feeds arbitrary JSON to the decoders of the polymorphic
// answers.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`null`))
	f.Add([]byte(`{"uri":"file:///a","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`))
	f.Add([]byte(`[{"targetUri":"file:///b","targetRange":{},"targetSelectionRange":{}}]`))
	f.Add([]byte(`[{"name":"x","kind":12,"location":{"uri":"file:///c"}}]`))
	f.Add([]byte(`[{"name":"x","kind":12,"range":{},"selectionRange":{},"children":[{"name":"y"}]}]`))
	f.Add([]byte(`[{"language":"go","value":"func x()"},"doc"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l rawLocations
		_ = json.Unmarshal(data, &l)
		var s rawSymbols
		_ = json.Unmarshal(data, &s)
		_ = hoverText(data)
		for _, loc := range l.list {
			_, _ = uriToPath(loc.URI)
		}
	})
}
