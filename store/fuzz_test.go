package store_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/gantry-dev/gantry/store"
)

// FuzzDependencies applies a sequence of dependency edges (two bytes each:
// from, to among 8 tasks) and checks after each that the graph has no
// cycle, that a refused edge was refused for a cycle (or a self edge), and
// that blocks and blockedBy mirror each other.
func FuzzDependencies(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 2, 0})
	f.Add([]byte{3, 3, 1, 0, 0, 1})
	f.Add([]byte{0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 5, 6, 6, 7, 7, 5})
	f.Fuzz(func(t *testing.T, ops []byte) {
		ctx := context.Background()
		s := new(store.Memory)
		const n = 8
		for range n {
			if _, err := s.CreateTask(ctx, "L", store.NewTask{Subject: "t"}); err != nil {
				t.Fatal(err)
			}
		}
		id := func(b byte) string { return strconv.Itoa(int(b)%n + 1) }
		for i := 0; i+1 < len(ops) && i < 200; i += 2 {
			from, to := id(ops[i]), id(ops[i+1])
			_, err := s.UpdateTask(ctx, "L", from, store.TaskPatch{AddBlocks: []string{to}})
			if err != nil && !errors.Is(err, store.ErrCycle) {
				t.Fatalf("%s blocks %s: %v", from, to, err)
			}
			if err != nil && from != to && !reaches(t, s, to, from) {
				t.Fatalf("%s blocks %s refused as a cycle, but %s does not reach %s", from, to, to, from)
			}
		}
		all, err := s.ListTasks(ctx, "L")
		if err != nil {
			t.Fatal(err)
		}
		blockedBy := map[[2]string]bool{}
		for _, tk := range all {
			for _, b := range tk.BlockedBy {
				blockedBy[[2]string{b, tk.ID}] = true
			}
		}
		edges := 0
		for _, tk := range all {
			for _, b := range tk.Blocks {
				edges++
				if !blockedBy[[2]string{tk.ID, b}] {
					t.Fatalf("%s blocks %s without the mirror edge", tk.ID, b)
				}
			}
			if reaches(t, s, tk.ID, tk.ID) {
				t.Fatalf("task %s is in a cycle", tk.ID)
			}
		}
		if edges != len(blockedBy) {
			t.Fatalf("%d blocks edges, %d blockedBy edges", edges, len(blockedBy))
		}
	})
}

// reaches reports whether a path of one or more blocks edges leads from a
// to b.
func reaches(t *testing.T, s store.Store, a, b string) bool {
	seen := map[string]bool{}
	stack := []string{a}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		tk, err := s.GetTask(context.Background(), "L", x)
		if err != nil {
			t.Fatal(err)
		}
		for _, y := range tk.Blocks {
			if y == b {
				return true
			}
			if !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return false
}
