package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/checkpoint"
)

// Record the project, let something change it (here plain file
// operations, as a shell command would), and rewind.
func ExampleStore_Rewind() {
	dir, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(dir)
	home, _ := os.MkdirTemp("", "gantry-home")
	defer os.RemoveAll(home)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)

	st, err := checkpoint.Open(checkpoint.Options{Dir: dir, Home: home})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	cp, _ := st.Create(ctx, checkpoint.Meta{Kind: checkpoint.KindTurn, Label: "add a feature"})

	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main // changed\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "gen.go"), []byte("package main // generated\n"), 0o644)
	st.Record(ctx) // the agent's run ended

	rep, err := st.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(filepath.Join(dir, "main.go"))
	fmt.Printf("restored %v, removed %v: %q\n", rep.Restored, rep.Removed, b)
	// Output: restored [main.go], removed [gen.go]: "package main\n"
}
