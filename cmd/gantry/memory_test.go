package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestOneShot: only a headless run of one prompt gets the one-shot
// collector settings; stream-json input (many prompts), the terminal and
// subcommands keep GOGC=50.
func TestOneShot(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-p", "hi"}, true},
		{[]string{"--print", "--output-format", "json", "hi"}, true},
		{[]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}, false},
		{[]string{"hi"}, false},
		{[]string{"tools", "list"}, false},
		{[]string{"serve"}, false},
	} {
		a, _, _ := testApp(t)
		root := newRootCmd(a)
		cmd, rest, err := root.Find(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := oneShot(cmd); got != tc.want {
			t.Errorf("oneShot(%v) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestCollectLate: GOGC is the first value until the first collection
// (here forced), then the second.
func TestCollectLate(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	collectLate(400, 37)
	if p := debug.SetGCPercent(400); p != 400 {
		t.Fatalf("GC percent %d before the first collection, want 400", p)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		p := debug.SetGCPercent(400)
		if p == 37 {
			debug.SetGCPercent(37)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GC percent %d after collections, want 37", p)
		}
	}
}
