package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gantry-dev/gantry/store"
)

func benchStores(b *testing.B, fn func(b *testing.B, s store.Store)) {
	b.Run("sqlite", func(b *testing.B) { fn(b, openSQLite(b)) })
	b.Run("memory", func(b *testing.B) { fn(b, new(store.Memory)) })
}

// BenchmarkTaskUpdate is one TaskUpdate round trip as the tool makes it:
// read the task, then update it under the version check. Target on SQLite:
// ≤ 200 µs.
func BenchmarkTaskUpdate(b *testing.B) {
	benchStores(b, func(b *testing.B, s store.Store) {
		ctx := context.Background()
		for range 20 {
			if _, err := s.CreateTask(ctx, "L", store.NewTask{Subject: "t", Description: "a task"}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			id := fmt.Sprint(i%20 + 1)
			cur, err := s.GetTask(ctx, "L", id)
			if err != nil {
				b.Fatal(err)
			}
			st := store.TaskInProgress
			if cur.Status == st {
				st = store.TaskPending
			}
			if _, err := s.UpdateTask(ctx, "L", id, store.TaskPatch{Status: &st, Metadata: map[string]any{"i": i}, IfVersion: cur.Version}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkMailbox1000 sends 1,000 messages to a mailbox and receives them
// (pending + ack in batches, as the delivery at turn boundaries does).
// Target on SQLite: ≤ 100 ms per 1,000.
func BenchmarkMailbox1000(b *testing.B) {
	benchStores(b, func(b *testing.B, s store.Store) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			for i := range 1000 {
				if _, err := s.Send(ctx, "lead", []string{"box"}, fmt.Sprint("message ", i)); err != nil {
					b.Fatal(err)
				}
			}
			got := 0
			for got < 1000 {
				p, err := s.Pending(ctx, "box", 100)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Ack(ctx, "box", p[len(p)-1].Seq); err != nil {
					b.Fatal(err)
				}
				got += len(p)
			}
		}
	})
}
