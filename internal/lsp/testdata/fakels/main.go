// Command fakels is a deliberately misbehaving language server for the
// lsp package's tests. It speaks the LSP base protocol on stdin/stdout and
// answers initialize and shutdown; FAKELS_MODE picks how it treats
// textDocument/hover:
//
//	hang     never answers (request timeouts)
//	error    answers with a JSON-RPC error
//	crash    exits with status 3 (the first time only, when
//	         FAKELS_ONCE names a file that does not exist yet)
//	garbage  writes a malformed frame
//	ok       answers "fake hover"
//
// Every request method it receives is appended to FAKELS_LOG, if set.
// FAKELS_START_DELAY (a Go duration) delays the answer to initialize (a
// server slow to start). Documents opened or changed get diagnostics
// published at once: one error "fake: broken" for each line containing
// BROKEN.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
)

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   any             `json:"error,omitempty"`
}

func send(m msg) {
	m.JSONRPC = "2.0"
	b, _ := json.Marshal(m)
	fmt.Fprintf(os.Stdout, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func logf(s string) {
	if p := os.Getenv("FAKELS_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, s)
			f.Close()
		}
	}
}

func main() {
	r := bufio.NewReader(os.Stdin)
	tp := textproto.NewReader(r)
	mode := os.Getenv("FAKELS_MODE")
	for {
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(h.Get("Content-Length"))
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m msg
		if json.Unmarshal(body, &m) != nil {
			return
		}
		logf(m.Method)
		switch m.Method {
		case "initialize":
			if d, err := time.ParseDuration(os.Getenv("FAKELS_START_DELAY")); err == nil {
				time.Sleep(d)
			}
			send(msg{ID: m.ID, Result: map[string]any{"capabilities": map[string]any{"hoverProvider": true}}})
		case "shutdown":
			send(msg{ID: m.ID, Result: nil})
		case "exit":
			os.Exit(0)
		case "textDocument/didOpen", "textDocument/didChange":
			publish(m.Params)
		case "textDocument/hover":
			switch mode {
			case "hang":
			case "error":
				send(msg{ID: m.ID, Error: map[string]any{"code": -32603, "message": "fake internal failure"}})
			case "crash":
				if once := os.Getenv("FAKELS_ONCE"); once != "" {
					if _, err := os.Stat(once); err != nil {
						os.WriteFile(once, []byte("crashed"), 0o600)
						os.Exit(3)
					}
				} else {
					os.Exit(3)
				}
				send(msg{ID: m.ID, Result: map[string]any{"contents": "fake hover after restart"}})
			case "garbage":
				fmt.Fprint(os.Stdout, "Content-Length: nope\r\n\r\n{}")
			default:
				send(msg{ID: m.ID, Result: map[string]any{"contents": map[string]string{"kind": "plaintext", "value": "fake hover"}}})
			}
		default:
			if len(m.ID) > 0 {
				send(msg{ID: m.ID, Result: nil})
			}
		}
	}
}

// publish sends the diagnostics of an opened or changed document.
func publish(params json.RawMessage) {
	var p struct {
		TextDocument struct {
			URI     string `json:"uri"`
			Version int    `json:"version"`
			Text    string `json:"text"`
		} `json:"textDocument"`
		ContentChanges []struct {
			Text string `json:"text"`
		} `json:"contentChanges"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	text := p.TextDocument.Text
	if n := len(p.ContentChanges); n > 0 {
		text = p.ContentChanges[n-1].Text
	}
	diags := []any{}
	for i, line := range strings.Split(text, "\n") {
		if c := strings.Index(line, "BROKEN"); c >= 0 {
			pos := map[string]int{"line": i, "character": c}
			diags = append(diags, map[string]any{"range": map[string]any{"start": pos, "end": pos}, "severity": 1, "source": "fake", "message": "fake: broken"})
		}
	}
	send(msg{Method: "textDocument/publishDiagnostics", Params: mustJSON(map[string]any{"uri": p.TextDocument.URI, "version": p.TextDocument.Version, "diagnostics": diags})})
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
