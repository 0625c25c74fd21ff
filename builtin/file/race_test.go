package file_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

// TestSymlinkSwapRace runs Writes, Edits and Reads through the real
// pipeline (permission engine in acceptEdits mode, executor, file tools)
// while other goroutines swap a symbolic link in the path between a
// directory inside the working directory and one outside. A call whose path
// resolves outside is asked about (and denied: nobody can answer); one that
// was checked inside must write inside, whatever the link points to when
// the write happens. Nothing may land outside, and the outside file must
// never be read.
func TestSymlinkSwapRace(t *testing.T) {
	work := realDir(t)
	outside := realDir(t)
	in := filepath.Join(work, "in")
	os.Mkdir(in, 0o755)
	const secret = "outside secret\n"
	os.WriteFile(filepath.Join(outside, "e.txt"), []byte(secret), 0o644)
	os.WriteFile(filepath.Join(in, "e.txt"), []byte("inside\n"), 0o644)
	link := filepath.Join(work, "l")
	if err := os.Symlink("in", link); err != nil {
		t.Fatal(err)
	}

	eng, err := permission.NewEngine(permission.Options{Mode: tool.ModeAcceptEdits, WorkDir: work, Home: realDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := executor.NewMapResolver(file.Tools(file.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	ex := executor.New(res, executor.Options{Decider: eng})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var swaps atomic.Int64
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tmp := filepath.Join(work, fmt.Sprintf(".swap%d", g))
			for i := 0; ctx.Err() == nil; i++ {
				target := "in"
				if i%2 == 1 {
					target = outside
				}
				os.Remove(tmp)
				if os.Symlink(target, tmp) == nil && os.Rename(tmp, link) == nil {
					swaps.Add(1)
				}
			}
		}()
	}
	var ok, refused atomic.Int64
	run := func(sess *executor.SharedEnv, name string, in any) *executor.Outcome {
		raw, _ := json.Marshal(in)
		o, err := ex.RunOne(context.Background(), sess, executor.Call{ID: "c", Name: name, Input: raw})
		if err != nil {
			t.Error(err)
			return nil
		}
		if o.Result.IsError {
			refused.Add(1)
		} else {
			ok.Add(1)
		}
		return o
	}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := executor.NewSharedEnv(&tool.Env{WorkDir: work, Mode: tool.ModeAcceptEdits, Files: tool.NewFileCache(0)})
			for i := 0; ctx.Err() == nil; i++ {
				run(sess, "Write", file.WriteInput{FilePath: fmt.Sprintf("l/w%d-%d.txt", w, i%20), Content: "x\n"})
				run(sess, "Write", file.WriteInput{FilePath: fmt.Sprintf("l/sub%d/n.txt", w), Content: "x\n"})
				if o := run(sess, "Read", file.ReadInput{FilePath: "l/e.txt"}); o != nil && !o.Result.IsError {
					if txt := o.Result.TextContent(); strings.Contains(txt, "outside secret") {
						t.Errorf("Read returned the outside file: %s", txt)
					}
				}
				run(sess, "Edit", file.EditInput{FilePath: "l/e.txt", OldString: "inside", NewString: "inside" + fmt.Sprint(w)})
				run(sess, "Edit", file.EditInput{FilePath: "l/e.txt", OldString: "inside" + fmt.Sprint(w), NewString: "inside"})
			}
		}()
	}
	wg.Wait()
	t.Logf("%d link swaps, %d calls succeeded, %d refused", swaps.Load(), ok.Load(), refused.Load())
	if ok.Load() == 0 || refused.Load() == 0 || swaps.Load() < 10 {
		t.Fatal("the race was not exercised (no call succeeded, none refused, or too few swaps)")
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("files landed outside the working directory: %v", names)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "e.txt")); string(b) != secret {
		t.Fatalf("the outside file was changed: %q", b)
	}
}

func realDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
