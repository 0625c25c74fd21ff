package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestMCPApprovals(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	proj := filepath.Join(root, "proj")
	sub := filepath.Join(proj, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := &MCPApprovals{Path: filepath.Join(home, "g", MCPApprovalFile), Now: func() time.Time { return at }}

	if m, ok, err := a.Approvals(proj); err != nil || ok || m != nil {
		t.Fatalf("no file: %v %v %v", m, ok, err)
	}
	if err := a.SetApprovals(link, map[string]string{"fs": "v1:a", "web": "v1:b"}); err != nil {
		t.Fatal(err)
	}
	m, ok, err := a.Approvals(proj) // recorded by resolved path
	if err != nil || !ok || len(m) != 2 || m["fs"] != "v1:a" {
		t.Fatalf("after set: %v %v %v", m, ok, err)
	}
	m["fs"] = "mutated"
	if m2, _, _ := a.Approvals(proj); m2["fs"] != "v1:a" {
		t.Fatal("Approvals returned the store's own map")
	}
	if _, ok, _ := a.Approvals(sub); ok {
		t.Fatal("a record must not cover subfolders")
	}
	// Replace, not merge; empty is a record.
	if err := a.SetApprovals(proj, nil); err != nil {
		t.Fatal(err)
	}
	if m, ok, err := a.Approvals(proj); err != nil || !ok || len(m) != 0 || m == nil {
		t.Fatalf("empty record: %v %v %v", m, ok, err)
	}
	if err := a.SetApprovals(sub, map[string]string{"x": "v1:c"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(a.Path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", st, err)
	}
	var doc mcpApprovalDoc
	b, _ := os.ReadFile(a.Path)
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Projects) != 2 || !doc.Projects[0].ApprovedAt.Equal(at) {
		t.Fatalf("file: %v %s", err, b)
	}
	if err := a.Forget(proj); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Approvals(proj); ok {
		t.Fatal("forgotten record still there")
	}
	if _, ok, _ := a.Approvals(sub); !ok {
		t.Fatal("Forget removed another folder's record")
	}
	if err := a.Forget(proj); err != nil {
		t.Fatal(err)
	}

	os.WriteFile(a.Path, []byte("{"), 0o600)
	if _, _, err := a.Approvals(proj); err == nil {
		t.Fatal("corrupt file accepted")
	}
	if err := a.SetApprovals(proj, nil); err == nil {
		t.Fatal("corrupt file overwritten")
	}
}

func TestMCPApprovalsConcurrent(t *testing.T) {
	root := t.TempDir()
	a := &MCPApprovals{Path: filepath.Join(t.TempDir(), MCPApprovalFile)}
	var wg sync.WaitGroup
	for i := range 8 {
		dir := filepath.Join(root, string(rune('a'+i)))
		os.Mkdir(dir, 0o755)
		wg.Go(func() {
			if err := a.SetApprovals(dir, map[string]string{"s": dir}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range 8 {
		dir := filepath.Join(root, string(rune('a'+i)))
		if m, ok, err := a.Approvals(dir); err != nil || !ok || m["s"] != dir {
			t.Errorf("%s: %v %v %v", dir, m, ok, err)
		}
	}
}
