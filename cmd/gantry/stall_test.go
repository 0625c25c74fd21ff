package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStalledModelEnds: a model server that accepts and never answers,
// and one whose stream goes quiet after message_start, end `gantry -p`
// with a non-zero exit and an idle-timeout error after one retry (the
// timeout set by GANTRY_STREAM_IDLE_TIMEOUT, or by the user settings'
// streamIdleTimeoutMs, here 300 ms).
func TestStalledModelEnds(t *testing.T) {
	quiet := make(chan struct{})
	defer close(quiet)
	noHeaders := func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-quiet; c.Close() }()
		}
	}
	for _, tc := range []struct {
		name    string
		setting bool // the timeout from settings.json, not the variable
		serve   func(ln net.Listener)
	}{
		{"no headers", false, noHeaders},
		{"no headers, the setting", true, noHeaders},
		{"quiet after message_start", false, func(ln net.Listener) {
			http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n")
				w.(http.Flusher).Flush()
				select {
				case <-quiet:
				case <-r.Context().Done():
				}
			}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go tc.serve(ln)
			home := t.TempDir()
			env := map[string]string{"HOME": home, "GANTRY_HOME": filepath.Join(home, ".gantry"), "PATH": os.Getenv("PATH"),
				"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://" + ln.Addr().String(),
				streamIdleEnv: "300ms"}
			if tc.setting {
				delete(env, streamIdleEnv)
				if err := os.MkdirAll(env["GANTRY_HOME"], 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(env["GANTRY_HOME"], "settings.json"), []byte(`{"streamIdleTimeoutMs":300}`), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, errb := &syncBuffer{}, &syncBuffer{}
			a := &app{stdin: strings.NewReader(""), stdout: out, stderr: errb, getenv: func(k string) string { return env[k] }}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			t0 := time.Now()
			code := run(ctx, a, []string{"-p", "hi"})
			took := time.Since(t0)
			if code == 0 || ctx.Err() != nil {
				t.Fatalf("exit %d after %s: %s", code, took, errb)
			}
			if !strings.Contains(errb.String(), "sent nothing") || strings.Count(errb.String(), "retrying") != 1 {
				t.Fatalf("stderr: %s", errb)
			}
			t.Logf("exit %d after %s", code, took)
		})
	}
}
