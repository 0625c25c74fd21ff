package offstack

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
)

func TestCall(t *testing.T) {
	boom := errors.New("boom")
	v, err := Call(context.Background(), func() (int, error) { return 7, boom })
	if v != 7 || err != boom {
		t.Fatalf("Call = %v, %v", v, err)
	}
	ran := false
	Do(context.Background(), func() { ran = true })
	if !ran {
		t.Fatal("Do did not run f")
	}
}

func TestPanicReachesCaller(t *testing.T) {
	defer func() {
		if r := recover(); r != "deep" {
			t.Fatalf("recovered %v, want the panic of f", r)
		}
	}()
	Do(context.Background(), func() { panic("deep") })
	t.Fatal("Do returned after a panic")
}

// deep recurses n levels with a frame of ~1 KB each.
func deep(n int) int {
	var pad [1024]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[n%len(pad)])
}

// BenchmarkCall is the cost of moving a call off the stack: a goroutine
// start, a switch, and the helper's stack growth for a 16 KB deep call.
func BenchmarkCall(b *testing.B) {
	b.Run("shallow", func(b *testing.B) {
		for b.Loop() {
			Do(context.Background(), func() {})
		}
	})
	b.Run("16KB-deep", func(b *testing.B) {
		for b.Loop() {
			_, _ = Call(context.Background(), func() (int, error) { return deep(16), nil })
		}
	})
	b.Run("16KB-deep-inline", func(b *testing.B) {
		for b.Loop() {
			_ = deep(16)
		}
	})
}

// TestInline: inline, f runs on the caller's goroutine (its caller's
// frame is on f's stack); not inline, on a goroutine of its own.
func TestInline(t *testing.T) {
	onCallersStack := func() bool {
		pcs := make([]uintptr, 64)
		frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
		for {
			fr, more := frames.Next()
			if strings.HasSuffix(fr.Function, ".TestInline") {
				return true
			}
			if !more {
				return false
			}
		}
	}
	for _, on := range []bool{true, false} {
		ctx := context.Background()
		if on {
			ctx = Inline(ctx)
		}
		got, _ := Call(ctx, func() (bool, error) { return onCallersStack(), nil })
		if got != on {
			t.Errorf("inline %v: f ran on the caller's stack = %v", on, got)
		}
	}
}
