package main

import (
	"math"
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

// TestCollectFromLimit: no collection by the GC percentage until the
// first one (here forced); then the percentage is set and the limit
// lifted.
func TestCollectFromLimit(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
	collectFromLimit(256<<20, 37)
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GC percent %d before the first collection, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 256<<20 {
		t.Fatalf("memory limit %d before the first collection, want %d", l, 256<<20)
	}
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) != math.MaxInt64 {
		if time.Now().After(deadline) {
			t.Fatal("the limit was not lifted after a collection")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if p := debug.SetGCPercent(37); p != 37 {
		t.Fatalf("GC percent %d after the first collection, want 37", p)
	}
}
