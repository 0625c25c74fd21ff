package main

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/tool"
)

func TestRunFlagsSpec(t *testing.T) {
	dir := t.TempDir()
	f := &runFlags{cwd: dir, mode: "acceptEdits", model: "m", allowed: []string{"Read,Bash(git diff *)"}, disallowed: []string{"WebFetch"},
		maxTurns: 7, maxBudgetUSD: 1.5, systemPrompt: "s", appendSystem: "a", noSettings: true, trust: true, noSession: true}
	got, err := f.spec()
	if err != nil {
		t.Fatal(err)
	}
	want := durable.Spec{WorkDir: dir, Model: "m", PermissionMode: tool.ModeAcceptEdits, Allow: []string{"Read", "Bash(git diff *)"},
		Deny: []string{"WebFetch"}, NoSettings: true, Trusted: true, MaxTurns: 7, MaxBudgetUSD: 1.5, SystemPrompt: "s",
		AppendSystemPrompt: "a", NoTranscript: true}
	if g, w := strings.Join(got.Allow, "|"), strings.Join(want.Allow, "|"); g != w {
		t.Errorf("allow = %s, want %s", g, w)
	}
	got.Allow, want.Allow, got.Deny, want.Deny = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spec = %+v\nwant %+v", got, want)
	}
	if _, err := (&runFlags{mode: "yolo"}).spec(); err == nil {
		t.Error("an unknown permission mode was accepted")
	}
}

// TestBadInvocations: mistakes are refused with exit code 2 before any
// connection is made.
func TestBadInvocations(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--output-format", "xml", "-p", "hi"},
		{"run", "--permission-mode", "yolo", "-p", "hi"},
		{"run", "--tls-ca", "/nonexistent", "-p", "hi"},
		{"serve", "--listen", "0.0.0.0:0"}, // off loopback without a token
		{"serve", "--token-file", "/nonexistent"},
		{"worker", "--live", "ftp://example.com"},
		{"cron", "add", "61 * * * *", "a bad expression"},
		{"cron", "add", "--timezone", "Mars/Olympus", "0 9 * * *", "an unknown zone"},
		{"cron", "add", "--catchup", "twice", "0 9 * * *", "an unknown catch-up"},
		{"worker", "--live", "http://127.0.0.1:8484", "--live-token-file", "/nonexistent"},
	} {
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		root := newRoot(a)
		root.SetArgs(args)
		err := root.Execute()
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("%v: err = %v, want exit code 2", args, err)
		}
	}
}

func TestNoProvider(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: new(bytes.Buffer), stderr: new(bytes.Buffer), getenv: func(string) string { return "" }}
	root := newRoot(a)
	root.SetArgs([]string{"worker"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "no model provider") {
		t.Errorf("worker without a provider: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"": 0, "-1": -1, "65536": 65536, "64k": 64 << 10, "64KiB": 64 << 10, "1m": 1 << 20, "2MB": 2 << 20} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-2", "k", "1x", "1.5m"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) was accepted", in)
		}
	}
}
