package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// treeState is an independent record of a tree: every path under dir
// (except .git) with its type, mode and content hash or link target.
func treeState(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link -> " + target
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %v", fi.Mode().Perm())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = fmt.Sprintf("file %v %s", fi.Mode().Perm(), hex.EncodeToString(sum[:8]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func diffStates(a, b map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s: %q vs %q", k, a[k], b[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s: missing vs %q", k, b[k]))
		}
	}
	return strings.Join(out, "\n")
}

func open(t testing.TB, dir string, mod func(*Options)) *Store {
	t.Helper()
	o := Options{Dir: dir, StoreDir: filepath.Join(t.TempDir(), "store")}
	if mod != nil {
		mod(&o)
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRewindEveryChange records checkpoints between changes of every kind
// — files written, edited, deleted, made executable, replaced by a
// directory, a directory replaced by a link, links created and retargeted
// — and rewinds to each, comparing the whole tree; then undoes a rewind.
func TestRewindEveryChange(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "main.go", "package main\n")
	write(t, dir, "lib/a.go", "package lib // a\n")
	write(t, dir, "lib/b.go", "package lib // b\n")
	write(t, dir, "docs/readme.md", "# docs\n")
	write(t, dir, "gone.txt", "to be deleted\n")
	os.Symlink("main.go", filepath.Join(dir, "link-to-main"))
	s := open(t, dir, nil)
	ctx := context.Background()

	var ids []string
	var states []map[string]string
	record := func(id string) {
		t.Helper()
		if _, err := s.Create(ctx, Meta{ID: id, Session: "s1", Kind: KindTurn}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		states = append(states, treeState(t, dir))
	}
	record("c0")
	write(t, dir, "main.go", "package main\n\nfunc main() {}\n") // edited
	write(t, dir, "new/deep/file.txt", "created\n")              // created with directories
	os.Remove(filepath.Join(dir, "gone.txt"))                    // deleted
	os.Chmod(filepath.Join(dir, "lib/a.go"), 0o755)              // mode only
	record("c1")
	os.RemoveAll(filepath.Join(dir, "docs"))
	os.Symlink("lib", filepath.Join(dir, "docs"))            // a directory replaced by a link
	os.Remove(filepath.Join(dir, "lib/b.go"))                // a file replaced by a directory
	write(t, dir, "lib/b.go/inner.txt", "now a directory\n") //
	os.Remove(filepath.Join(dir, "link-to-main"))            // a link retargeted
	os.Symlink("/etc/passwd", filepath.Join(dir, "link-to-main"))
	os.Chmod(filepath.Join(dir, "new/deep"), 0o700)
	record("c2")
	final := treeState(t, dir)

	for _, i := range []int{0, 2, 1, 0} {
		rep, err := s.Rewind(ctx, ids[i], RewindOptions{})
		if err != nil {
			t.Fatalf("rewind to %s: %v", ids[i], err)
		}
		if d := diffStates(states[i], treeState(t, dir)); d != "" {
			t.Fatalf("after rewind to %s the tree differs:\n%s", ids[i], d)
		}
		if rep.Before == "" || !rep.Changed() {
			t.Fatalf("report %+v", rep)
		}
	}
	// Back to c2 then undo that rewind with its Before checkpoint.
	rep, err := s.Rewind(ctx, "c2", RewindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffStates(final, treeState(t, dir)); d != "" {
		t.Fatalf("c2:\n%s", d)
	}
	if _, err := s.Rewind(ctx, rep.Before, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(states[0], treeState(t, dir)); d != "" {
		t.Fatalf("undo:\n%s", d)
	}
	// A second rewind to where we are changes nothing.
	rep, err = s.Rewind(ctx, "c0", RewindOptions{})
	if err != nil || rep.Changed() {
		t.Fatalf("%+v %v", rep, err)
	}
}

// TestRewindConflicts: a person's edit after the last recording is not
// overwritten without Force — an edited file, a new file, a deleted file —
// and Force reports what it overwrote. A dry run changes nothing.
func TestRewindConflicts(t *testing.T) {
	cases := []struct {
		name   string
		change func(dir string)
		path   string
	}{
		{"edited", func(dir string) { write(t, dir, "a.txt", "a person's edit\n") }, "a.txt"},
		{"created", func(dir string) { write(t, dir, "mine.txt", "a person's file\n") }, "mine.txt"},
		{"deleted", func(dir string) { os.Remove(filepath.Join(dir, "b.txt")) }, "b.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.txt", "one\n")
			write(t, dir, "b.txt", "bee\n")
			s := open(t, dir, nil)
			ctx := context.Background()
			if _, err := s.Create(ctx, Meta{ID: "t1"}); err != nil {
				t.Fatal(err)
			}
			want := treeState(t, dir)
			write(t, dir, "a.txt", "the agent's edit\n")
			write(t, dir, "agent.txt", "the agent's file\n")
			os.Remove(filepath.Join(dir, "b.txt"))
			write(t, dir, "b.txt", "the agent rewrote b\n")
			if err := s.Record(ctx); err != nil { // the run ended
				t.Fatal(err)
			}
			c.change(dir)
			changed := treeState(t, dir)
			_, err := s.Rewind(ctx, "t1", RewindOptions{})
			var ce *ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) || !slices.Contains(ce.Paths, c.path) || len(ce.Paths) != 1 {
				t.Fatalf("err %v, want a conflict on %s", err, c.path)
			}
			if d := diffStates(changed, treeState(t, dir)); d != "" {
				t.Fatalf("a refused rewind changed the tree:\n%s", d)
			}
			rep, err := s.Rewind(ctx, "t1", RewindOptions{Force: true, DryRun: true})
			if err != nil || !rep.DryRun || len(rep.Overwritten) != 1 {
				t.Fatalf("%+v %v", rep, err)
			}
			if d := diffStates(changed, treeState(t, dir)); d != "" {
				t.Fatalf("a dry run changed the tree:\n%s", d)
			}
			rep, err = s.Rewind(ctx, "t1", RewindOptions{Force: true})
			if err != nil || !slices.Equal(rep.Overwritten, []string{c.path}) {
				t.Fatalf("%+v %v", rep, err)
			}
			if d := diffStates(want, treeState(t, dir)); d != "" {
				t.Fatalf("forced rewind:\n%s", d)
			}
		})
	}
}

// TestNotCovered: ignored paths, oversized files and what is over the
// caps are listed as not covered, and a rewind leaves them alone.
func TestNotCovered(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".gitignore", "build/\n*.log\n")
	write(t, dir, "sub/.gitignore", "secret.txt\n")
	write(t, dir, "build/out.bin", "binary")
	write(t, dir, "run.log", "log 1")
	write(t, dir, "sub/secret.txt", "s")
	write(t, dir, "sub/kept.txt", "k")
	write(t, dir, "big.dat", strings.Repeat("x", 2000))
	write(t, dir, ".git/HEAD", "ref: refs/heads/main\n")
	s := open(t, dir, func(o *Options) { o.MaxFileSize = 1000 })
	ctx := context.Background()
	info, err := s.Create(ctx, Meta{ID: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range info.NotCovered {
		got[n.Path] = n.Reason
	}
	want := map[string]string{"build": ReasonIgnored, "run.log": ReasonIgnored, "sub/secret.txt": ReasonIgnored, "big.dat": ReasonTooLarge + " (2000 bytes)"}
	if !maps.Equal(got, want) || info.NotCoveredCount != 4 {
		t.Fatalf("not covered %v, want %v", got, want)
	}
	if info.Files != 4 { // .gitignore, sub, sub/.gitignore, sub/kept.txt
		t.Fatalf("files %d", info.Files)
	}
	write(t, dir, "run.log", "log 2")
	write(t, dir, "build/more.bin", "more")
	write(t, dir, "big.dat", strings.Repeat("y", 3000))
	write(t, dir, "sub/kept.txt", "changed")
	if err := s.Record(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Rewind(ctx, "n1", RewindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Restored, []string{"sub/kept.txt"}) || len(rep.Removed) != 0 || len(rep.NotCovered) != 4 {
		t.Fatalf("report %+v", rep)
	}
	for p, c := range map[string]string{"run.log": "log 2", "build/more.bin": "more", "sub/kept.txt": "k"} {
		if b, _ := os.ReadFile(filepath.Join(dir, p)); string(b) != c {
			t.Fatalf("%s = %q, want %q", p, b, c)
		}
	}

	// The caps.
	for _, c := range []struct {
		mod    func(*Options)
		reason string
		files  int
	}{
		{func(o *Options) { o.MaxFiles = 2 }, ReasonFileCap, 2},
		{func(o *Options) { o.MaxTotalSize = 8 }, ReasonTotalCap, 2}, // sub and sub/kept.txt; the .gitignore files are over
	} {
		info, err = open(t, dir, c.mod).Create(ctx, Meta{ID: "caps"})
		if err != nil {
			t.Fatal(err)
		}
		var reasons []string
		for _, n := range info.NotCovered {
			reasons = append(reasons, n.Reason)
		}
		if !slices.Contains(reasons, c.reason) || info.Files != c.files {
			t.Fatalf("caps: %d files, %v", info.Files, info.NotCovered)
		}
	}
}

// TestCorruptStore: a damaged object, manifest or record is detected and
// reported, and nothing is written to the project.
func TestCorruptStore(t *testing.T) {
	damage := map[string]func(t *testing.T, s *Store, info *Info){
		"object": func(t *testing.T, s *Store, info *Info) {
			m, err := s.getManifest(info.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range m.entries {
				if e.Path == "b.txt" {
					damageJournal(t, s, 'o', e.Hash, false)
				}
			}
		},
		"missing object": func(t *testing.T, s *Store, info *Info) {
			m, _ := s.getManifest(info.Manifest)
			for _, e := range m.entries {
				if e.Path == "b.txt" {
					damageJournal(t, s, 'o', e.Hash, true)
				}
			}
		},
		"manifest": func(t *testing.T, s *Store, info *Info) {
			damageJournal(t, s, 'm', info.Manifest, false)
		},
		"record": func(t *testing.T, s *Store, info *Info) {
			damageJournal(t, s, 'r', info.ID, false)
		},
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.txt", "a")
			write(t, dir, "b.txt", "b")
			s := open(t, dir, nil)
			ctx := context.Background()
			info, err := s.Create(ctx, Meta{ID: "k1"})
			if err != nil {
				t.Fatal(err)
			}
			write(t, dir, "a.txt", "a2")
			write(t, dir, "b.txt", "b2")
			write(t, dir, "c.txt", "c")
			s.Record(ctx)
			before := treeState(t, dir)
			f(t, s, info)
			_, err = s.Rewind(ctx, "k1", RewindOptions{Force: true})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err %v, want ErrCorrupt", err)
			}
			if d := diffStates(before, treeState(t, dir)); d != "" {
				t.Fatalf("a corrupt checkpoint was applied in part:\n%s", d)
			}
		})
	}
}

// TestSymlinksNeverFollowed: a directory the agent replaced by a link to
// a place outside the project is restored as a directory; nothing is
// written through the link; a recorded link is restored as a link.
func TestSymlinksNeverFollowed(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write(t, outside, "victim.txt", "outside\n")
	write(t, dir, "d/f.txt", "inside\n")
	os.Symlink(filepath.Join(outside, "victim.txt"), filepath.Join(dir, "ext-link"))
	s := open(t, dir, nil)
	ctx := context.Background()
	if _, err := s.Create(ctx, Meta{ID: "l1"}); err != nil {
		t.Fatal(err)
	}
	want := treeState(t, dir)
	os.RemoveAll(filepath.Join(dir, "d"))
	os.Symlink(outside, filepath.Join(dir, "d"))
	os.Remove(filepath.Join(dir, "ext-link"))
	write(t, dir, "ext-link", "now a file\n")
	s.Record(ctx)
	if _, err := s.Rewind(ctx, "l1", RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, treeState(t, dir)); d != "" {
		t.Fatalf("tree:\n%s", d)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("something was written outside the project: %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim.txt")); string(b) != "outside\n" {
		t.Fatalf("the link's target changed: %q", b)
	}
}

// TestIncremental: an unchanged tree is not read again (the manifest is
// identical), a changed file is, even within the same second.
func TestIncremental(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.txt", "a")
	write(t, dir, "b.txt", "b")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, "a.txt"), old, old)
	os.Chtimes(filepath.Join(dir, "b.txt"), old, old)
	s := open(t, dir, nil)
	ctx := context.Background()
	i1, _ := s.Create(ctx, Meta{ID: "i1"})
	i2, _ := s.Create(ctx, Meta{ID: "i2"})
	if i1.Manifest != i2.Manifest {
		t.Fatal("an unchanged tree gave a new manifest")
	}
	// Same size, mtime set back: the change time still tells.
	write(t, dir, "a.txt", "A")
	os.Chtimes(filepath.Join(dir, "a.txt"), old, old)
	i3, _ := s.Create(ctx, Meta{ID: "i3"})
	if i3.Manifest == i2.Manifest {
		t.Fatal("a changed file was not seen")
	}
	// A new Store (another process) reads the tip as its cache.
	s2 := open(t, dir, func(o *Options) { o.StoreDir = s.StoreDir() })
	i4, err := s2.Create(ctx, Meta{ID: "i4", Session: "other"})
	if err != nil || i4.Manifest != i3.Manifest {
		t.Fatalf("%v %v", i4, err)
	}
	list, err := s2.List("")
	if err != nil || len(list) != 4 || list[3].ID != "i4" {
		t.Fatalf("%v %v", list, err)
	}
	if l, _ := s2.List("other"); len(l) != 1 {
		t.Fatalf("session filter: %v", l)
	}
	if _, err := s2.Get("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

// TestPrune: old checkpoints and those of ended sessions go, with the
// objects only they used; the others still rewind.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	clock := func() time.Time { return now }
	s := open(t, dir, func(o *Options) { o.Now = clock; o.Retention = 24 * time.Hour })
	ctx := context.Background()
	write(t, dir, "a.txt", "old content")
	s.Create(ctx, Meta{ID: "old", Session: "s1"})
	now = now.Add(48 * time.Hour)
	write(t, dir, "a.txt", "gone session")
	s.Create(ctx, Meta{ID: "ended", Session: "s2"})
	write(t, dir, "a.txt", "kept")
	s.Create(ctx, Meta{ID: "kept", Session: "s3"})
	// Age the store's files past the grace period.
	filepath.WalkDir(s.StoreDir(), func(p string, d fs.DirEntry, err error) error {
		os.Chtimes(p, now.Add(-2*time.Hour), now.Add(-2*time.Hour))
		return nil
	})
	rep, err := s.Prune(ctx, PruneOptions{SessionGone: func(id string) bool { return id == "s2" }})
	if err != nil || rep.Checkpoints != 2 || rep.Objects != 2 {
		t.Fatalf("%+v %v", rep, err)
	}
	list, _ := s.List("")
	if len(list) != 1 || list[0].ID != "kept" {
		t.Fatalf("%v", list)
	}
	write(t, dir, "a.txt", "later")
	s.Record(ctx)
	if _, err := s.Rewind(ctx, "kept", RewindOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestOpenAndIDs(t *testing.T) {
	if _, err := Open(Options{}); err == nil {
		t.Fatal("no dir accepted")
	}
	if _, err := Open(Options{Dir: t.TempDir()}); err == nil {
		t.Fatal("no store dir accepted")
	}
	home := t.TempDir()
	s, err := Open(Options{Dir: "/work/some project", Home: home})
	if err == nil && s.StoreDir() != filepath.Join(home, "checkpoints", "-work-some-project") {
		t.Fatal(s.StoreDir())
	}
	s = open(t, t.TempDir(), nil)
	if !ValidID(strings.Repeat("a", 128)) || ValidID(strings.Repeat("a", 129)) || ValidID("") {
		t.Fatal("ValidID: 1–128 characters")
	}
	for _, id := range []string{"../x", "a/b", strings.Repeat("a", 129), strings.Repeat("a", 200)} {
		if _, err := s.Create(context.Background(), Meta{ID: id}); err == nil {
			t.Fatalf("id %q accepted", id)
		}
	}
	if _, err := s.Create(context.Background(), Meta{ID: "dup"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(context.Background(), Meta{ID: "dup"}); err == nil {
		t.Fatal("a taken id was accepted")
	}
}

// FuzzDecodeManifest: any bytes either decode or fail with ErrCorrupt;
// what decodes encodes to the same bytes.
func FuzzDecodeManifest(f *testing.F) {
	m := &manifest{entries: []Entry{
		{Path: "a b", Type: TypeFile, Mode: 0o644, Size: 3, MTime: 1, CTime: 2, Ino: 3, Hash: strings.Repeat("ab", 32)},
		{Path: "d", Type: TypeDir, Mode: 0o755},
		{Path: "d/l\n", Type: TypeSymlink, Mode: 0o777, Target: "../x \"q\""},
	}, notCovered: []NotCovered{{Path: "build", Reason: ReasonIgnored}}}
	b, _ := m.encode()
	f.Add(b)
	f.Add([]byte(manifestMagic + "\nf 644 1 2 3 4 x \"p\"\n"))
	f.Add([]byte(manifestMagic + "\nl 777 \"t\" \"../up\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum := sha256.Sum256(data)
		h := hex.EncodeToString(sum[:])
		m, err := decodeManifest(data, h)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		for _, e := range m.entries {
			if !validRel(e.Path) {
				t.Fatalf("path %q escapes", e.Path)
			}
		}
		if _, err := decodeManifest(data, strings.Repeat("0", 64)); !errors.Is(err, ErrCorrupt) {
			t.Fatal("a wrong hash was accepted")
		}
	})
}

// TestDeferred: Open creates nothing; a deferred checkpoint is recorded by
// the next recording of the Store, or written deferred by Settle without a
// scan; a rewind to a deferred record restores the next recording made
// after it (a checkpoint or the tip), or changes nothing when there is
// none.
func TestDeferred(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := filepath.Join(dir, "f.txt")
	os.WriteFile(f, []byte("one\n"), 0o644)
	storeDir := filepath.Join(t.TempDir(), "store")
	s := open(t, dir, func(o *Options) { o.StoreDir = storeDir })
	if _, err := os.Stat(storeDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open created the store: %v", err)
	}
	if ok, err := s.PruneIfDue(ctx, time.Hour, PruneOptions{}); ok || err != nil {
		t.Fatalf("prune of an empty store: %v %v", ok, err)
	}
	if l, err := s.List(""); len(l) != 0 || err != nil {
		t.Fatalf("list of an empty store: %v %v", l, err)
	}

	// Deferred, then taken up by a Create: same tree, the defer's time.
	if _, err := s.Defer(Meta{ID: "t1", Session: "s"}); err != nil {
		t.Fatal(err)
	}
	c1, err := s.Create(ctx, Meta{ID: "c1", Kind: KindTool})
	if err != nil {
		t.Fatal(err)
	}
	t1, err := s.Get("t1")
	if err != nil || t1.Deferred || t1.Manifest != c1.Manifest || t1.Kind != KindTurn || t1.Created.After(c1.Created) {
		t.Fatalf("t1 %+v %v (c1 %+v)", t1, err, c1)
	}
	os.WriteFile(f, []byte("two\n"), 0o644)
	if err := s.Settle(ctx); err != nil { // a checkpoint was created: the tip is recorded
		t.Fatal(err)
	}

	// Deferred and settled without a recording: no scan, a deferred record.
	if _, err := s.Defer(Meta{ID: "t2"}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(storeDir, "tip"))
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(storeDir, "tip")); string(after) != string(before) {
		t.Fatal("Settle without a created checkpoint recorded the tip")
	}
	t2, err := s.Get("t2")
	if err != nil || !t2.Deferred || t2.Manifest != "" {
		t.Fatalf("t2 %+v %v", t2, err)
	}
	// Nothing recorded after t2: rewinding to it changes nothing.
	rep, err := s.Rewind(ctx, "t2", RewindOptions{})
	if err != nil || rep.Changed() {
		t.Fatalf("rewind to t2 with nothing after it: %+v %v", rep, err)
	}
	// A recording after t2 (another run's checkpoint): that is its state.
	time.Sleep(10 * time.Millisecond)
	if _, err := s.Create(ctx, Meta{ID: "c2", Kind: KindTool}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(f, []byte("three\n"), 0o644)
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rewind(ctx, "t2", RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f); string(b) != "two\n" {
		t.Fatalf("rewind to t2: %q", b)
	}
	if _, err := s.Rewind(ctx, "t1", RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f); string(b) != "one\n" {
		t.Fatalf("rewind to t1: %q", b)
	}
	if _, err := s.Defer(Meta{ID: "bad id"}); err == nil {
		t.Fatal("an invalid id was deferred")
	}
}

// FuzzAppendQuote: the fast path quotes exactly as strconv.AppendQuote.
func FuzzAppendQuote(f *testing.F) {
	for _, s := range []string{"", "a/b.go", `q"uote`, `back\slash`, "tab\t", "é", "\x7f", "x\x00y", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendQuote(nil, s)), strconv.Quote(s); got != want {
			t.Fatalf("appendQuote(%q) = %s, want %s", s, got, want)
		}
	})
}

// damageJournal damages the record of key in the store's journals:
// its body overwritten with 'x's, or (hide) its header's type changed so
// that no look-up finds it.
func damageJournal(t *testing.T, s *Store, typ byte, key string, hide bool) {
	t.Helper()
	found := false
	s.eachJournal(func(p string, recs []jrec) {
		for _, r := range recs {
			if r.typ != typ || r.key != key {
				continue
			}
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if hide {
				head := fmt.Sprintf("%c %s %d\n", typ, key, r.n)
				_, err = f.WriteAt([]byte("z"), r.off-int64(len(head)))
			} else {
				_, err = f.WriteAt(bytes.Repeat([]byte("x"), int(r.n)), r.off)
			}
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			found = true
		}
	})
	if !found {
		t.Fatalf("no %c record %s in the journals", typ, key)
	}
	s.j.mu.Lock()
	if hide {
		delete(s.j.own, string(typ)+key) // forget where it was
	}
	s.j.other, s.j.read = nil, false
	s.j.mu.Unlock()
}

// TestJournalAcrossStores: what one Store appended to its journal is read
// by another (another process), a partial last record — a writer that
// died mid-record — is ignored, and a Store whose journal another one's
// prune unpacked goes on recording into a new journal.
func TestJournalAcrossStores(t *testing.T) {
	dir := t.TempDir()
	storeDir := filepath.Join(t.TempDir(), "store")
	write(t, dir, "a.txt", "one")
	ctx := context.Background()
	s1, err := Open(Options{Dir: dir, StoreDir: storeDir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Create(ctx, Meta{ID: "c1", Session: "s"}); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "two")
	write(t, dir, "b.txt", "new")
	if err := s1.Record(ctx); err != nil {
		t.Fatal(err)
	}
	own := s1.ownJournal()
	f, err := os.OpenFile(own, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("r c9 500\n{\"id\":\"c9\"") // cut short
	f.Close()

	s2, _ := Open(Options{Dir: dir, StoreDir: storeDir})
	list, err := s2.List("s")
	if err != nil || len(list) != 1 || list[0].ID != "c1" {
		t.Fatalf("list from another store: %+v %v", list, err)
	}
	if _, err := s2.Rewind(ctx, "c1", RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one" {
		t.Fatalf("a.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("b.txt not removed: %v", err)
	}

	// s2's prune unpacks s1's journal (old enough) and removes it.
	old := time.Now().Add(-2 * pruneGrace)
	os.Chtimes(own, old, old)
	if _, err := s2.Prune(ctx, PruneOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(own); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("journal not unpacked: %v", err)
	}
	write(t, dir, "a.txt", "three")
	if _, err := s1.Create(ctx, Meta{ID: "c2", Session: "s"}); err != nil {
		t.Fatal(err)
	}
	if s1.ownJournal() == own {
		t.Fatal("s1 appended to a removed journal")
	}
	write(t, dir, "a.txt", "four")
	s1.Record(ctx)
	s3, _ := Open(Options{Dir: dir, StoreDir: storeDir})
	for id, want := range map[string]string{"c2": "three", "c1": "one"} {
		if _, err := s3.Rewind(ctx, id, RewindOptions{Force: true}); err != nil {
			t.Fatalf("rewind %s: %v", id, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != want {
			t.Fatalf("after rewinding to %s a.txt = %q", id, b)
		}
	}
}

// FuzzReadJournal: any bytes give whole records within the file (a body
// followed by its newline) or an error, never a panic.
func FuzzReadJournal(f *testing.F) {
	f.Add([]byte("o " + strings.Repeat("a", 64) + " 3\nabc\nr id1 2\n{}\n"))
	f.Add([]byte("m x 5\nab"))
	f.Add([]byte("r id 0\n\nz k -1\n"))
	f.Add([]byte("rr k 1\nx\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "j.log")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		recs, _ := readJournal(p)
		for _, r := range recs {
			if r.off < 0 || r.n < 0 || r.off+r.n >= int64(len(b)) || b[r.off+r.n] != '\n' || r.key == "" {
				t.Fatalf("record %+v out of %d bytes", r, len(b))
			}
		}
	})
}

// TestRewindCountLines: with CountLines, a rewind's report sums the lines
// it adds and removes — an edited file, a created one it removes, a
// deleted one it brings back — in a dry run and a real rewind alike.
func TestRewindCountLines(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "edit.txt", "one\ntwo\n")
	write(t, dir, "gone.txt", "a\nb\nc\n")
	s := open(t, dir, nil)
	ctx := context.Background()
	if _, err := s.Create(ctx, Meta{ID: "c0", Session: "s1", Kind: KindTurn}); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "edit.txt", "one\nTWO\nthree\n")
	write(t, dir, "new.txt", "x\ny\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	if _, err := s.Create(ctx, Meta{ID: "c1", Session: "s1", Kind: KindTurn}); err != nil {
		t.Fatal(err)
	}
	// A line counter of its own: lines of to missing from from, and back.
	count := func(from, to []byte) (int, int) {
		has := func(text []byte) map[string]int {
			m := map[string]int{}
			for l := range strings.SplitSeq(string(text), "\n") {
				if l != "" {
					m[l]++
				}
			}
			return m
		}
		f, g := has(from), has(to)
		add, del := 0, 0
		for l, n := range g {
			add += max(n-f[l], 0)
		}
		for l, n := range f {
			del += max(n-g[l], 0)
		}
		return add, del
	}
	// Rewinding to c0: edit.txt gains "two" and loses "TWO", "three";
	// gone.txt comes back (3 lines); new.txt goes (2 lines).
	for _, dry := range []bool{true, false} {
		rep, err := s.Rewind(ctx, "c0", RewindOptions{DryRun: dry, CountLines: count})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Insertions != 4 || rep.Deletions != 4 {
			t.Errorf("dry run %v: insertions %d, deletions %d; want 4, 4", dry, rep.Insertions, rep.Deletions)
		}
	}
}

// TestIgnoreFilesChange: a scan spares matching the paths the previous
// one recorded only while every ignore file is the one it read; a
// changed, added or removed ignore file — even rewritten at the same size
// and dated back past the racy window — is matched afresh.
func TestIgnoreFilesChange(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	age := func(t *testing.T, dir string, rels ...string) {
		t.Helper()
		for _, rel := range rels {
			if err := os.Chtimes(filepath.Join(dir, rel), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		want   []string // ignored after the change
	}{
		{"unchanged, a new file matches", func(t *testing.T, dir string) {
			write(t, dir, "new.log", "n")
		}, []string{"c.log", "new.log", "sub/b.txt", "x.tmp"}},
		{"root .gitignore rewritten, same size", func(t *testing.T, dir string) {
			write(t, dir, ".gitignore", "*.txt\n")
			age(t, dir, ".gitignore")
		}, []string{"a.txt", "sub/b.txt", "x.tmp"}},
		{"sub .gitignore grows", func(t *testing.T, dir string) {
			write(t, dir, "sub/.gitignore", "b.txt\nd.go\n")
			age(t, dir, "sub/.gitignore")
		}, []string{"c.log", "sub/b.txt", "sub/d.go", "x.tmp"}},
		{"sub .gitignore removed", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "sub/.gitignore"))
		}, []string{"c.log", "x.tmp"}},
		{"a .gitignore added", func(t *testing.T, dir string) {
			write(t, dir, "lib/.gitignore", "*.go\n")
			age(t, dir, "lib/.gitignore")
		}, []string{"c.log", "lib/e.go", "sub/b.txt", "x.tmp"}},
		{"exclude changed", func(t *testing.T, dir string) {
			write(t, dir, ".git/info/exclude", "a.txt\n")
			age(t, dir, ".git/info/exclude")
		}, []string{"a.txt", "c.log", "sub/b.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, ".gitignore", "*.log\n")
			write(t, dir, "sub/.gitignore", "b.txt\n")
			write(t, dir, ".git/info/exclude", "*.tmp\n")
			for _, f := range []string{"a.txt", "c.log", "x.tmp", "sub/b.txt", "sub/d.go", "lib/e.go"} {
				write(t, dir, f, f)
			}
			age(t, dir, ".gitignore", "sub/.gitignore", ".git/info/exclude")
			s := open(t, dir, nil)
			ctx := context.Background()
			// Twice: the second scan is the one that reuses the first's.
			for range 2 {
				if _, err := s.Create(ctx, Meta{}); err != nil {
					t.Fatal(err)
				}
			}
			tc.change(t, dir)
			info, err := s.Create(ctx, Meta{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range info.NotCovered {
				if n.Reason == ReasonIgnored {
					got = append(got, n.Path)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("ignored %v, want %v", got, tc.want)
			}
		})
	}
}
