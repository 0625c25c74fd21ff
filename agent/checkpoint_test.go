package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/checkpoint"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// hashTree maps every path under dir to its type, mode and content hash
// (or link target).
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		fi, _ := os.Lstat(p)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = fmt.Sprint("dir ", fi.Mode().Perm())
		default:
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			out[rel] = fmt.Sprint("file ", fi.Mode().Perm(), " ", hex.EncodeToString(sum[:8]))
		}
		return nil
	})
	return out
}

// TestCheckpointsRewindEveryChange: a session writes with Write, edits
// with Edit, runs sed -i and a generator through Bash, deletes a file and
// creates a symlink; each user turn has a checkpoint (its id on the prompt
// message), each writing call one (its tool use id), read-only calls none;
// rewinding to each restores the exact tree. A person's edit after the
// session is not overwritten without Force.
func TestCheckpointsRewindEveryChange(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		dir := f.dir
		os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello world\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "del.txt"), []byte("delete me\n"), 0o644)
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n"), 0o644)
		st, err := checkpoint.Open(checkpoint.Options{Dir: dir, StoreDir: filepath.Join(t.TempDir(), "cp")})
		if err != nil {
			t.Fatal(err)
		}
		call := func(id, name, input string) llmtest.Reply {
			return llmtest.ToolReply(llmtest.ToolCall{ID: id, Name: name, Input: input})
		}
		a := f.agentWS(t, func(o *workspace.Options) { o.Checkpoints = st }, func(o *testOpts) {
			o.Pool = toolset.Options{Tools: append(file.Tools(file.Options{}), shell.NewBash(shell.Options{}))}
			o.Decider = permission.DeciderFunc(func(context.Context, *permission.Request) (permission.Decision, error) {
				return permission.Decision{Behavior: tool.Allow}, nil
			})
		})
		turns := []struct {
			prompt string
			script []llmtest.Reply
		}{
			{"write and edit", []llmtest.Reply{
				call("w1", "Write", fmt.Sprintf(`{"file_path":%q,"content":"new file\n"}`, filepath.Join(dir, "new.txt"))),
				call("r1", "Read", fmt.Sprintf(`{"file_path":%q}`, filepath.Join(dir, "a.txt"))),
				call("e1", "Edit", fmt.Sprintf(`{"file_path":%q,"old_string":"hello","new_string":"goodbye"}`, filepath.Join(dir, "a.txt"))),
				llmtest.TextReply("done"),
			}},
			{"sed and generate", []llmtest.Reply{
				call("b1", "Bash", `{"command":"sed -i 's/world/there/' a.txt"}`),
				call("b2", "Bash", `{"command":"mkdir -p gen && for i in 1 2 3; do echo \"v$i\" > gen/f$i.txt; done && echo log > run.log"}`),
				call("b3", "Bash", `{"command":"cat a.txt"}`), // read-only: no checkpoint
				llmtest.TextReply("done"),
			}},
			{"delete and link", []llmtest.Reply{
				call("b4", "Bash", `{"command":"rm del.txt && ln -s a.txt link.txt && chmod 700 gen/f1.txt"}`),
				llmtest.TextReply("done"),
			}},
		}
		var ids []string
		var states []map[string]string
		for _, turn := range turns {
			states = append(states, hashTree(t, dir))
			f.srv.Script(turn.script...)
			evs, res, err := collect(t, context.Background(), a, turn.prompt)
			if err != nil || res.IsError {
				t.Fatalf("%s: %+v %v", turn.prompt, res, err)
			}
			var cp string
			for _, ev := range evs {
				if m, ok := ev.(*MessageEvent); ok && m.Checkpoint != "" {
					if m.UUID != m.Checkpoint {
						t.Fatalf("checkpoint %s is not the message's uuid %s", m.Checkpoint, m.UUID)
					}
					cp = m.Checkpoint
				}
			}
			if cp == "" {
				t.Fatalf("%s: no checkpoint on the prompt message", turn.prompt)
			}
			ids = append(ids, cp)
		}
		final := hashTree(t, dir)
		if _, ok := final["link.txt"]; !ok || final["gen/f2.txt"] == "" {
			t.Fatalf("the session did not run as scripted: %v", slices.Sorted(maps.Keys(final)))
		}
		list, err := a.Checkpoints()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range list {
			got = append(got, string(c.Kind)+":"+cmpOr(c.ToolUseID, c.ID))
		}
		want := []string{"turn:" + ids[0], "tool:w1", "tool:e1", "turn:" + ids[1], "tool:b1", "tool:b2", "turn:" + ids[2], "tool:b4"}
		if !slices.Equal(got, want) {
			t.Fatalf("checkpoints %v, want %v", got, want)
		}

		for _, i := range []int{2, 0, 1, 2} {
			rep, err := a.RewindFiles(context.Background(), ids[i], checkpoint.RewindOptions{})
			if err != nil {
				t.Fatalf("rewind to turn %d: %v", i, err)
			}
			if now := hashTree(t, dir); !maps.Equal(now, withLog(states[i], now)) {
				t.Fatalf("rewind to turn %d:\nwant %v\ngot  %v", i, states[i], now)
			}
			_ = rep
		}
		// Before the generator: sed ran, nothing generated.
		if _, err := a.RewindFiles(context.Background(), "b2", checkpoint.RewindOptions{}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "goodbye there\n" {
			t.Fatalf("a.txt %q", b)
		}
		if _, err := os.Stat(filepath.Join(dir, "gen")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("gen survived: %v", err)
		}
		// A person edits a file after the last recording.
		os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a person's text\n"), 0o644)
		_, err = a.RewindFiles(context.Background(), ids[0], checkpoint.RewindOptions{})
		if !errors.Is(err, checkpoint.ErrConflict) {
			t.Fatalf("err %v, want a conflict", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a person's text\n" {
			t.Fatal("the person's edit was overwritten")
		}
		rep, err := a.RewindFiles(context.Background(), ids[0], checkpoint.RewindOptions{Force: true})
		if err != nil || !slices.Contains(rep.Overwritten, "a.txt") {
			t.Fatalf("%+v %v", rep, err)
		}
		if now := hashTree(t, dir); !maps.Equal(now, withLog(states[0], now)) {
			t.Fatalf("forced rewind:\nwant %v\ngot  %v", states[0], now)
		}
	})
}

// withLog adds to want the ignored run.log as it is in now: ignored files
// are not covered, so a rewind leaves them.
func withLog(want, now map[string]string) map[string]string {
	w := maps.Clone(want)
	if v, ok := now["run.log"]; ok {
		w["run.log"] = v
	}
	return w
}

// TestCheckpointsOff: RewindFiles without a store says so.
func TestCheckpointsOff(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, nil)
	if _, err := a.RewindFiles(context.Background(), "x", checkpoint.RewindOptions{}); !errors.Is(err, ErrNoCheckpoints) {
		t.Fatal(err)
	}
	if _, err := a.Checkpoints(); !errors.Is(err, ErrNoCheckpoints) {
		t.Fatal(err)
	}
	_ = strings.TrimSpace
}

// TestCheckpointsReadOnlyRun: a run of read-only calls (Read, a read-only
// Bash) scans nothing — its turn checkpoint is written deferred — and a
// Bash change between two read-only calls of the next run is undone by a
// rewind to either turn.
func TestCheckpointsReadOnlyRun(t *testing.T) {
	f := newFixture(t)
	dir := f.dir
	a1 := filepath.Join(dir, "a.txt")
	os.WriteFile(a1, []byte("original\n"), 0o644)
	storeDir := filepath.Join(t.TempDir(), "cp")
	st, err := checkpoint.Open(checkpoint.Options{Dir: dir, StoreDir: storeDir})
	if err != nil {
		t.Fatal(err)
	}
	call := func(id, name, input string) llmtest.Reply {
		return llmtest.ToolReply(llmtest.ToolCall{ID: id, Name: name, Input: input})
	}
	a := f.agentWS(t, func(o *workspace.Options) { o.Checkpoints = st }, func(o *testOpts) {
		o.Pool = toolset.Options{Tools: append(file.Tools(file.Options{}), shell.NewBash(shell.Options{}))}
		o.Decider = permission.DeciderFunc(func(context.Context, *permission.Request) (permission.Decision, error) {
			return permission.Decision{Behavior: tool.Allow}, nil
		})
	})
	read := fmt.Sprintf(`{"file_path":%q}`, a1)
	f.srv.Script(call("r1", "Read", read), call("b1", "Bash", `{"command":"cat a.txt | wc -l"}`), call("r2", "Read", read), llmtest.TextReply("done"))
	if _, res, err := collect(t, context.Background(), a, "look"); err != nil || res.IsError {
		t.Fatal(err, res)
	}
	if _, err := os.Stat(filepath.Join(storeDir, "manifests")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a read-only run recorded a tree: %v", err)
	}
	// Nor in the store's journal (a record "m <hash> <length>").
	filepath.WalkDir(storeDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); regexp.MustCompile(`(?m)^m [0-9a-f]{64} `).Match(b) {
				t.Fatalf("a read-only run recorded a tree in %s", p)
			}
		}
		return nil
	})
	list, err := a.Checkpoints()
	if err != nil || len(list) != 1 || !list[0].Deferred || list[0].Kind != checkpoint.KindTurn {
		t.Fatalf("checkpoints after a read-only run: %+v %v", list, err)
	}
	turn1 := list[0].ID

	f.srv.Script(call("r3", "Read", read), call("b2", "Bash", `{"command":"echo changed > a.txt"}`), call("r4", "Read", read), llmtest.TextReply("done"))
	if _, res, err := collect(t, context.Background(), a, "change"); err != nil || res.IsError {
		t.Fatal(err, res)
	}
	if b, _ := os.ReadFile(a1); string(b) != "changed\n" {
		t.Fatalf("the run did not change a.txt: %q", b)
	}
	list, _ = a.Checkpoints()
	var got []string
	for _, c := range list {
		got = append(got, fmt.Sprintf("%s:%s:%v", c.Kind, cmpOr(c.ToolUseID, "-"), c.Deferred))
	}
	if want := []string{"turn:-:true", "turn:-:false", "tool:b2:false"}; !slices.Equal(got, want) {
		t.Fatalf("checkpoints %v, want %v", got, want)
	}
	turn2 := list[1].ID
	for _, id := range []string{turn1, turn2} {
		os.WriteFile(a1, []byte("changed\n"), 0o644)
		if _, err := a.RewindFiles(context.Background(), id, checkpoint.RewindOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(a1); string(b) != "original\n" {
			t.Fatalf("rewind to %s: a.txt %q", id, b)
		}
	}
}
