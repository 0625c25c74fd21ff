package tool

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

type clock interface{ Now() time.Time }

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func TestServices(t *testing.T) {
	var s Services // zero value is usable
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if Provide[clock](&s, fixedClock{at}) != &s {
		t.Fatal("Provide does not return its Services")
	}
	env := &Env{Services: &s}
	c, err := Use[clock](env)
	if err != nil || c.Now() != at {
		t.Fatalf("Use[clock] = %v, %v", c, err)
	}
	// Keyed by the requested type: the concrete type is a different key.
	if _, err := Use[fixedClock](env); !errors.Is(err, ErrNoService) || !strings.Contains(err.Error(), "tool.fixedClock") {
		t.Fatalf("Use[fixedClock] error = %v", err)
	}
	_, err = Use[io.Reader](env)
	if !errors.Is(err, ErrNoService) || !strings.Contains(err.Error(), "io.Reader") {
		t.Fatalf("missing service error does not name the type: %v", err)
	}
	for _, e := range []*Env{nil, {}} {
		if _, err := Use[clock](e); !errors.Is(err, ErrNoService) || !strings.Contains(err.Error(), "tool.clock") || !strings.Contains(err.Error(), "no services") {
			t.Fatalf("Use on %v: %v", e, err)
		}
	}
	// Replacing a service.
	Provide[clock](&s, fixedClock{at.Add(time.Hour)})
	if c, _ := Use[clock](env); c.Now() != at.Add(time.Hour) {
		t.Fatal("Provide did not replace the service")
	}
}

func TestServicesConcurrent(t *testing.T) {
	var s Services
	env := &Env{Services: &s}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 100 {
				if i%2 == 0 {
					Provide[clock](&s, fixedClock{time.Unix(int64(j), 0)})
				} else if _, err := Use[clock](env); err != nil && !errors.Is(err, ErrNoService) {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

func TestFileCacheBounded(t *testing.T) {
	c := NewFileCache(3)
	put := func(p string, size int64) { c.Put(FileState{Path: p, Size: size}) }
	put("/a", 1)
	put("/b", 2)
	put("/c", 3)
	put("/a", 10) // an update does not reorder or grow
	if st, ok := c.Get("/a"); !ok || st.Size != 10 {
		t.Fatalf("Get(/a) = %+v, %v", st, ok)
	}
	put("/d", 4) // evicts the oldest: /a
	if _, ok := c.Get("/a"); ok {
		t.Fatal("/a not evicted")
	}
	for _, p := range []string{"/b", "/c", "/d"} {
		if _, ok := c.Get(p); !ok {
			t.Fatalf("%s evicted", p)
		}
	}
	c.Delete("/c")
	c.Delete("/missing")
	put("/e", 5)
	put("/f", 6) // evicts /b; /c is already gone
	for p, want := range map[string]bool{"/b": false, "/c": false, "/d": true, "/e": true, "/f": true} {
		if _, ok := c.Get(p); ok != want {
			t.Errorf("Get(%s) present = %v, want %v", p, ok, want)
		}
	}
	if len(c.m) != 3 || len(c.order) != 3 {
		t.Fatalf("size %d, order %v", len(c.m), c.order)
	}
	if d := NewFileCache(0); d.max != 1000 {
		t.Fatalf("default max = %d", d.max)
	}
	var _ FileStates = c
}

func TestFileCacheConcurrent(t *testing.T) {
	c := NewFileCache(50)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 500 {
				p := fmt.Sprintf("/f%d", (i*7+j)%120)
				c.Put(FileState{Path: p})
				c.Get(p)
				if j%5 == 0 {
					c.Delete(p)
				}
			}
		})
	}
	wg.Wait()
	if len(c.m) > 50 || len(c.m) != len(c.order) {
		t.Fatalf("bound broken: %d entries, %d in order", len(c.m), len(c.order))
	}
}

func TestEnvCloneAndProgress(t *testing.T) {
	var got []Progress
	e := &Env{WorkDir: "/w", AdditionalDirs: []string{"/x"}, Services: &Services{}, Progress: func(p Progress) { got = append(got, p) }}
	c := e.Clone()
	c.AdditionalDirs[0] = "/changed"
	c.WorkDir = "/other"
	if e.AdditionalDirs[0] != "/x" || e.WorkDir != "/w" || c.Services != e.Services {
		t.Fatal("Clone shares slices or copies services")
	}
	if (*Env)(nil).Clone() == nil {
		t.Fatal("nil Clone")
	}
	e.ReportProgress("3 files", 3)
	(*Env)(nil).ReportProgress("ignored", nil)
	(&Env{}).ReportProgress("ignored", nil)
	if len(got) != 1 || got[0].Message != "3 files" || got[0].Data != 3 {
		t.Fatalf("progress = %+v", got)
	}
}

func TestStricter(t *testing.T) {
	order := []Behavior{Passthrough, Allow, Ask, Deny}
	for i, a := range order {
		for j, b := range order {
			want := order[max(i, j)]
			if got := Stricter(a, b); got != want {
				t.Errorf("Stricter(%q, %q) = %q, want %q", a, b, got, want)
			}
		}
	}
	if Stricter("bogus", Allow) != Allow || Stricter(Deny, "bogus") != Deny {
		t.Fatal("unknown behaviours rank lowest")
	}
}

func TestModes(t *testing.T) {
	for _, m := range Modes() {
		if !m.Valid() {
			t.Errorf("%q not valid", m)
		}
	}
	for _, m := range []Mode{"", "auto", "Default"} {
		if m.Valid() {
			t.Errorf("%q valid", m)
		}
	}
}

func TestResults(t *testing.T) {
	r := TextResult("a")
	r.Content = append(r.Content, Image([]byte{1}, "image/png"), EmbeddedText("file:///x", "text/plain", "b"),
		EmbeddedBlob("file:///y", "application/octet-stream", []byte{2}), ResourceLink("file:///z", "z", "text/plain"), Text("ünï"))
	if got := r.TextContent(); got != "a\nb\nünï" {
		t.Fatalf("TextContent = %q", got)
	}
	if TextLen(r.Content) != 5 {
		t.Fatalf("TextLen = %d (runes of text and embedded text)", TextLen(r.Content))
	}
	if len(r.DisplayContent()) != len(r.Content) {
		t.Fatal("DisplayContent without Display")
	}
	r.WithDisplay(Text("diff"))
	if JoinText(r.DisplayContent()) != "diff" {
		t.Fatal("WithDisplay")
	}
	if e := Errorf("bad %d", 1); !e.IsError || e.TextContent() != "bad 1" {
		t.Fatal("Errorf")
	}
	if e := ErrorResult(errors.New("boom")); !e.IsError || e.TextContent() != "boom" {
		t.Fatal("ErrorResult")
	}
	if _, err := JSONResult(make(chan int)); err == nil {
		t.Fatal("JSONResult of a chan")
	}
}

func TestSpecHelpers(t *testing.T) {
	tr, f := true, false
	tests := []struct {
		max, want int
	}{{0, DefaultMaxResultChars}, {-5, -1}, {100, 100}}
	for _, tt := range tests {
		if got := (&Spec{MaxResultChars: tt.max}).ResultLimit(); got != tt.want {
			t.Errorf("ResultLimit(%d) = %d", tt.max, got)
		}
	}
	if !(Annotations{}).Destructive() || !(Annotations{}).OpenWorld() || !(Annotations{DestructiveHint: &tr}).Destructive() ||
		(Annotations{DestructiveHint: &f}).Destructive() || (Annotations{OpenWorldHint: &f}).OpenWorld() {
		t.Fatal("annotation defaults")
	}
	if !(Traits{}).Destructive() || ReadOnlyTraits.Destructive() {
		t.Fatal("traits fail closed")
	}
	if InterruptCancel.String() != "cancel" || InterruptBlock.String() != "block" {
		t.Fatal("Interrupt.String")
	}
	for p, done := range map[Phase]bool{PhaseWait: false, PhaseDoing: false, PhaseSuccess: true, PhaseError: true} {
		if p.Done() != done {
			t.Errorf("%s.Done() = %v", p, !done)
		}
	}
}
