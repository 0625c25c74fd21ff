package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/store"
)

func TestSQLiteReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := store.OpenSQLite(ctx, path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, "L", store.NewTask{Subject: "persist"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Send(ctx, "a", []string{"b"}, "hi"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("database file mode %v, %v", fi.Mode(), err)
	}
	s, err = store.OpenSQLite(ctx, path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if tk, err := s.GetTask(ctx, "L", "1"); err != nil || tk.Subject != "persist" {
		t.Fatalf("after reopen: %+v %v", tk, err)
	}
	if p, _ := s.Pending(ctx, "b", 0); len(p) != 1 {
		t.Fatalf("messages after reopen: %v", p)
	}
	var mode string
	var version int
	db := rawDB(t, path)
	db.QueryRow("PRAGMA journal_mode").Scan(&mode)
	db.QueryRow("PRAGMA user_version").Scan(&version)
	if mode != "wal" || version != store.SchemaVersion {
		t.Fatalf("journal_mode %q, user_version %d", mode, version)
	}
}

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSQLiteNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := store.OpenSQLite(t.Context(), path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := rawDB(t, path)
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", store.SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = store.OpenSQLite(t.Context(), path, store.SQLiteOptions{})
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("opening a newer schema: %v", err)
	}
}

func TestSQLiteBadPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte(strings.Repeat("not a database ", 512)), 0o600)
	for _, p := range []string{"", filepath.Join(file, "g.db"), file} {
		if s, err := store.OpenSQLite(t.Context(), p, store.SQLiteOptions{}); err == nil {
			s.Close()
			t.Fatalf("OpenSQLite(%q) succeeded", p)
		}
	}
}

// TestSQLiteTwoHandles: two handles on one file (as two processes would
// have) see each other's writes; Wait notices a message sent through the
// other handle by polling.
func TestSQLiteTwoHandles(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "g.db")
	a, err := store.OpenSQLite(ctx, path, store.SQLiteOptions{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.OpenSQLite(ctx, path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	done := make(chan error, 1)
	go func() { done <- a.Wait(ctx, "box", 0) }()
	time.Sleep(20 * time.Millisecond)
	if _, err := b.Send(ctx, "x", []string{"box"}, "across"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not see the other handle's message")
	}
	if _, err := b.CreateTask(ctx, "L", store.NewTask{Subject: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ClaimTask(ctx, "L", "1", "me"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ClaimTask(ctx, "L", "1", "you"); !errors.Is(err, store.ErrClaimed) {
		t.Fatalf("second claim through the other handle: %v", err)
	}
}

func TestLazyOpensOnFirstUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "gantry.db")
	l := store.LazySQLite(path, store.SQLiteOptions{})
	if l.Opened() {
		t.Fatal("opened before use")
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatal("the directory was created before use")
	}
	if _, err := l.ListTasks(t.Context(), "L"); err != nil {
		t.Fatal(err)
	}
	if !l.Opened() {
		t.Fatal("not opened by a call")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := l.ListTasks(t.Context(), "L"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	// A failed open is reported, and again on the next call.
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o600)
	bad := store.LazySQLite(filepath.Join(file, "g.db"), store.SQLiteOptions{})
	defer bad.Close()
	for range 2 {
		if _, err := bad.GetTodos(t.Context(), "k"); err == nil {
			t.Fatal("open of a bad path succeeded")
		}
	}
}

const crashEnv = "GANTRY_STORE_CRASH_CHILD"

// crashBatch is how many mailboxes each transaction of the crash child
// writes.
const crashBatch = 200

// TestMain's child mode: write batches until killed.
func init() {
	path := os.Getenv(crashEnv)
	if path == "" {
		return
	}
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, path, store.SQLiteOptions{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	boxes := make([]string, crashBatch)
	for i := range boxes {
		boxes[i] = fmt.Sprint("box", i)
	}
	for n := 0; ; n++ {
		if _, err := s.Send(ctx, "child", boxes, fmt.Sprint(os.Getpid(), " batch ", n)); err != nil {
			fmt.Println("send:", err)
			os.Exit(2)
		}
		if _, err := s.CreateTask(ctx, "L", store.NewTask{Subject: fmt.Sprint("task ", n), Metadata: map[string]any{"n": n}}); err != nil {
			fmt.Println("task:", err)
			os.Exit(2)
		}
		if n == 3 {
			fmt.Println("ready")
		}
	}
}

// TestSQLiteCrash kills a writing child process with SIGKILL, several
// times, at varying points: the database always opens, passes SQLite's
// integrity check, and every multi-row transaction is there whole or not at
// all.
func TestSQLiteCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "g.db")
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %q", line)
		}
		time.Sleep(time.Duration(5+round*7) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		s, err := store.OpenSQLite(t.Context(), path, store.SQLiteOptions{})
		if err != nil {
			t.Fatalf("round %d: open after kill: %v", round, err)
		}
		var ok string
		if err := rawDB(t, path).QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("round %d: integrity %q %v", round, ok, err)
		}
		counts := map[string]int{}
		for i := range crashBatch {
			p, err := s.Pending(t.Context(), fmt.Sprint("box", i), 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range p {
				counts[m.Text]++
			}
		}
		for text, n := range counts {
			if n != crashBatch {
				t.Fatalf("round %d: %q reached %d of %d mailboxes (a torn transaction)", round, text, n, crashBatch)
			}
		}
		tasks, err := s.ListTasks(t.Context(), "L")
		if err != nil {
			t.Fatal(err)
		}
		for i, tk := range tasks {
			if tk.Subject != fmt.Sprint("task ", tk.Metadata["n"]) || tk.ID != fmt.Sprint(i+1) {
				t.Fatalf("round %d: torn task %+v", round, tk)
			}
		}
		t.Logf("round %d: %d batches, %d tasks survived", round, len(counts), len(tasks))
		s.Close()
	}
}

// TestSQLiteMigrationPaused: a version 3 database (no paused column)
// opens at the current version with its jobs active and pausable.
func TestSQLiteMigrationPaused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	ctx := t.Context()
	s, err := store.OpenSQLite(ctx, path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	j, err := s.CreateCronJob(ctx, store.CronJob{Cron: "0 * * * *", Prompt: "p", NextAt: t0, NextScheduled: t0})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := rawDB(t, path)
	if _, err := db.Exec("ALTER TABLE cron_jobs DROP COLUMN paused; PRAGMA user_version = 3"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err = store.OpenSQLite(ctx, path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.GetCronJob(ctx, j.ID); err != nil || got.Paused || !got.NextAt.Equal(t0) {
		t.Fatalf("after migration: %+v %v", got, err)
	}
	if got, err := s.PauseCronJob(ctx, j.ID, true, nil); err != nil || !got.Paused {
		t.Fatalf("pause after migration: %+v %v", got, err)
	}
	fires, err := s.ClaimDue(ctx, "A", t0, t0.Add(time.Minute), 10, func(j store.CronJob) (store.CronJob, bool) { return j, true })
	if err != nil || len(fires) != 0 {
		t.Fatalf("claimed a paused job: %v %v", fires, err)
	}
}
