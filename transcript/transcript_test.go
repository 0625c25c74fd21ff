package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestStore(t *testing.T) *Store {
	t.Helper()
	n := 0
	var mu sync.Mutex
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := NewStore(t.TempDir())
	st.NewID = func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("id-%03d", n)
	}
	st.Now = func() time.Time { return clock }
	return st
}

func msg(s string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"role":"user","content":%q}`, s))
}

func TestAppendAndResume(t *testing.T) {
	st := newTestStore(t)
	cwd := "/home/u/my project"
	s, err := st.Create(cwd)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := s.Append(Record{Type: TypeUser, Message: msg("hi")})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := s.Append(Record{Type: TypeAssistant, Message: msg("hello")})
	if err != nil {
		t.Fatal(err)
	}
	if r1.ParentUUID != "" || r2.ParentUUID != r1.UUID || r2.SessionID != s.ID || r2.CWD != cwd {
		t.Fatalf("links: %+v %+v", r1, r2)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(st.Home(), "projects", "-home-u-my-project", s.ID+".jsonl"); s.Path != want {
		t.Fatalf("path %s, want %s", s.Path, want)
	}

	re, err := st.Open(cwd, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got := re.Records(); len(got) != 2 || got[1].UUID != r2.UUID {
		t.Fatalf("resumed records: %+v", got)
	}
	r3, err := re.Append(Record{Type: TypeUser, Message: msg("again")})
	if err != nil {
		t.Fatal(err)
	}
	if r3.ParentUUID != r2.UUID {
		t.Fatalf("parent after resume = %q, want %q", r3.ParentUUID, r2.UUID)
	}
	// The session keeps no copy: later reads come from the file, and
	// include what was appended since open.
	for range 2 {
		got, err := re.ReadRecords()
		if err != nil || len(got) != 3 || got[2].UUID != r3.UUID || got[0].UUID != r1.UUID {
			t.Fatalf("records after append: %+v, %v", got, err)
		}
	}
}

func TestTornAndCorruptLines(t *testing.T) {
	tests := []struct {
		name     string
		content  string
		wantRecs int
		skipped  int
	}{
		{"torn tail", `{"type":"user","uuid":"a","sessionId":"s","timestamp":"2026-01-01T00:00:00Z"}` + "\n" + `{"type":"assis`, 1, 1},
		{"valid json without newline is torn", `{"type":"user","uuid":"a","sessionId":"s","timestamp":"2026-01-01T00:00:00Z"}`, 0, 1},
		{"corrupt middle line", `{"type":"user","uuid":"a","sessionId":"s","timestamp":"2026-01-01T00:00:00Z"}` + "\nnot json\n" + `{"type":"user","uuid":"b","sessionId":"s","timestamp":"2026-01-01T00:00:00Z"}` + "\n", 2, 1},
		{"empty", "", 0, 0},
		{"blank lines", "\n\n", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newTestStore(t)
			if err := os.MkdirAll(st.Dir("/w"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(st.Path("/w", "s"), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := st.Open("/w", "s")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := len(s.Records()); got != tt.wantRecs {
				t.Fatalf("records = %d, want %d", got, tt.wantRecs)
			}
			if s.Skipped() != tt.skipped {
				t.Fatalf("skipped = %d, want %d", s.Skipped(), tt.skipped)
			}
			if _, err := s.Append(Record{Type: TypeUser, Message: msg("x")}); err != nil {
				t.Fatal(err)
			}
			recs, err := ReadFile(s.Path)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tt.wantRecs+1 {
				t.Fatalf("after append file has %d records, want %d", len(recs), tt.wantRecs+1)
			}
		})
	}
}

func TestForkAndLatest(t *testing.T) {
	st := newTestStore(t)
	a, _ := st.Create("/w")
	a.Append(Record{Type: TypeUser, Message: msg("one")})
	a.Close()
	time.Sleep(10 * time.Millisecond)
	f, err := st.Fork("/w", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.Append(Record{Type: TypeUser, Message: msg("two")})
	f.Close()
	if f.ID == a.ID {
		t.Fatal("fork kept the id")
	}
	recs := f.Records()
	if len(recs) != 2 || recs[0].ForkedFrom != a.ID || recs[0].SessionID != f.ID {
		t.Fatalf("fork records: %+v", recs)
	}
	orig, _ := ReadFile(a.Path)
	if len(orig) != 1 {
		t.Fatalf("original changed: %d records", len(orig))
	}
	// Make the fork the newest regardless of file system timestamp granularity.
	future := time.Now().Add(time.Hour)
	os.Chtimes(f.Path, future, future)
	latest, err := st.Latest("/w")
	if err != nil || latest != f.ID {
		t.Fatalf("Latest = %q, %v; want %q", latest, err, f.ID)
	}
	if _, err := st.Latest("/elsewhere"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Latest of empty dir: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	st := newTestStore(t)
	for _, id := range []string{"", "..", "a/b", "../x", strings.Repeat("a", 129), strings.Repeat("a", 200)} {
		if _, err := st.Open("/w", id); err == nil {
			t.Errorf("Open(%q) succeeded", id)
		}
	}
	if _, err := st.Open("/w", "missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	s, _ := st.Create("/w")
	s.Close()
	if _, err := s.Append(Record{Type: TypeUser}); err == nil {
		t.Fatal("append after close succeeded")
	}
}

func TestConcurrentAppend(t *testing.T) {
	st := NewStore(t.TempDir())
	s, err := st.Create("/w")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				if _, err := s.Append(Record{Type: TypeUser, Message: msg(fmt.Sprint(i, j))}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	recs, err := ReadFile(s.Path)
	if err != nil || len(recs) != 200 {
		t.Fatalf("got %d records, %v", len(recs), err)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].ParentUUID != recs[i-1].UUID {
			t.Fatalf("record %d parent %q, want %q", i, recs[i].ParentUUID, recs[i-1].UUID)
		}
	}
}

func TestDefaultHome(t *testing.T) {
	env := map[string]string{"GANTRY_HOME": "/g", "HOME": "/h"}
	get := func(k string) string { return env[k] }
	if h, _ := DefaultHome(get); h != "/g" {
		t.Fatalf("GANTRY_HOME: %s", h)
	}
	delete(env, "GANTRY_HOME")
	if h, _ := DefaultHome(get); h != "/h/.gantry" {
		t.Fatalf("HOME: %s", h)
	}
}

func TestNewUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		u := NewUUID()
		if len(u) != 36 || u[14] != '4' || seen[u] {
			t.Fatalf("bad uuid %q", u)
		}
		seen[u] = true
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"type":"user","uuid":"a"}` + "\n{\"ty"))
	f.Add([]byte("\n\n\x00garbage\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st := NewStore(t.TempDir())
		os.MkdirAll(st.Dir("/w"), 0o700)
		os.WriteFile(st.Path("/w", "s"), data, 0o600)
		s, err := st.Open("/w", "s")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		n := len(s.Records())
		if _, err := s.Append(Record{Type: TypeUser}); err != nil {
			t.Fatal(err)
		}
		recs, _ := ReadFile(s.Path)
		if len(recs) < n+1 {
			t.Fatalf("append lost: %d < %d", len(recs), n+1)
		}
	})
}

// TestForkBefore: the fork ends before the named message; an unknown
// message is ErrNotFound.
func TestForkBefore(t *testing.T) {
	st := newTestStore(t)
	a, _ := st.Create("/w")
	a.Append(Record{Type: TypeUser, Message: msg("one"), UUID: "u1"})
	a.Append(Record{Type: TypeAssistant, Message: msg("reply")})
	a.Append(Record{Type: TypeUser, Message: msg("two"), UUID: "u2"})
	a.Append(Record{Type: TypeAssistant, Message: msg("reply 2")})
	a.Close()
	f, err := st.ForkBefore("/w", a.ID, "u2")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs := f.Records()
	if len(recs) != 2 || recs[0].UUID != "u1" || recs[1].ForkedFrom != a.ID || recs[1].SessionID != f.ID {
		t.Fatalf("fork records: %+v", recs)
	}
	if orig, _ := ReadFile(a.Path); len(orig) != 4 {
		t.Fatalf("original changed: %d records", len(orig))
	}
	if _, err := st.ForkBefore("/w", a.ID, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}
