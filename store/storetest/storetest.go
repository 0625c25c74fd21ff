// Package storetest is the conformance suite every [store.Store]
// implementation must pass. Gantry runs it against the in-memory and the
// SQLite stores; run it against your own implementation with
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openMine(t) })
//	}
package storetest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/store"
)

// Run runs the suite. open returns a fresh, empty store for each subtest;
// Run closes it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"TaskCreateGetList", testTaskCreateGetList},
		{"TaskUpdate", testTaskUpdate},
		{"TaskInvalid", testTaskInvalid},
		{"TaskDependencies", testTaskDependencies},
		{"TaskClaim", testTaskClaim},
		{"ConcurrentClaims", testConcurrentClaims},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"ConcurrentCreates", testConcurrentCreates},
		{"Todos", testTodos},
		{"Mailboxes", testMailboxes},
		{"MailboxWait", testMailboxWait},
		{"ConcurrentSends", testConcurrentSends},
		{"Teams", testTeams},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			defer func() {
				if r := recover(); r != nil {
					f, ok := r.(failure)
					if !ok {
						panic(r)
					}
					t.Fatalf("%s:%d: %v", f.file, f.line, f.err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

func ptr[T any](v T) *T { return &v }

// failure is what must and check panic with; Run turns it into t.Fatal.
type failure struct {
	err  error
	file string
	line int
}

func must[T any](v T, err error) T {
	if err != nil {
		_, file, line, _ := runtime.Caller(1)
		panic(failure{err, filepath.Base(file), line})
	}
	return v
}

func check(err error) {
	if err != nil {
		_, file, line, _ := runtime.Caller(1)
		panic(failure{err, filepath.Base(file), line})
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func ids(ts []store.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func testTaskCreateGetList(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := 1; i <= 11; i++ {
		tk := must(s.CreateTask(ctx, "L", store.NewTask{Subject: fmt.Sprintf("task %d", i), Description: "d", ActiveForm: "doing", Metadata: map[string]any{"n": i}}))
		if tk.ID != strconv.Itoa(i) || tk.Status != store.TaskPending || tk.Version != 1 || tk.Owner != "" || tk.CreatedAt.IsZero() {
			t.Fatalf("created %+v", tk)
		}
	}
	got := must(s.GetTask(ctx, "L", "3"))
	if got.Subject != "task 3" || got.Description != "d" || got.ActiveForm != "doing" || got.Metadata["n"] != float64(3) {
		t.Fatalf("get: %+v", got)
	}
	// Another list is separate and numbers from 1.
	other := must(s.CreateTask(ctx, "M", store.NewTask{Subject: "x"}))
	if other.ID != "1" {
		t.Fatalf("other list id %s", other.ID)
	}
	list := must(s.ListTasks(ctx, "L"))
	if want := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}; !slices.Equal(ids(list), want) {
		t.Fatalf("list ids %v, want %v (numeric order)", ids(list), want)
	}
	must(s.UpdateTask(ctx, "L", "2", store.TaskPatch{Status: ptr(store.TaskDeleted)}))
	list = must(s.ListTasks(ctx, "L"))
	if slices.Contains(ids(list), "2") {
		t.Fatal("deleted task listed")
	}
	if d := must(s.GetTask(ctx, "L", "2")); d.Status != store.TaskDeleted {
		t.Fatalf("deleted task: %+v", d)
	}
	if l := must(s.ListTasks(ctx, "nothing")); len(l) != 0 {
		t.Fatalf("empty list: %v", l)
	}
	for _, id := range []string{"99", "x", "", "03", "-1"} {
		_, err := s.GetTask(ctx, "L", id)
		wantErr(t, err, store.ErrNotFound)
	}
	_, err := s.GetTask(ctx, "nolist", "1")
	wantErr(t, err, store.ErrNotFound)
}

func testTaskUpdate(t *testing.T, s store.Store) {
	ctx := context.Background()
	tk := must(s.CreateTask(ctx, "L", store.NewTask{Subject: "a", Metadata: map[string]any{"keep": "k", "drop": true}}))
	u := must(s.UpdateTask(ctx, "L", tk.ID, store.TaskPatch{
		Subject: ptr("b"), Description: ptr("desc"), ActiveForm: ptr("Bing"), Status: ptr(store.TaskInProgress), Owner: ptr("alice"),
		Metadata: map[string]any{"drop": nil, "new": []any{1, "two"}},
	}))
	want := map[string]any{"keep": "k", "new": []any{float64(1), "two"}}
	if u.Subject != "b" || u.Description != "desc" || u.ActiveForm != "Bing" || u.Status != store.TaskInProgress || u.Owner != "alice" || u.Version != 2 || !reflect.DeepEqual(u.Metadata, want) {
		t.Fatalf("updated %+v", u)
	}
	if !u.UpdatedAt.After(tk.CreatedAt) && !u.UpdatedAt.Equal(tk.CreatedAt) {
		t.Fatal("updatedAt went back")
	}
	if g := must(s.GetTask(ctx, "L", tk.ID)); !reflect.DeepEqual(g.Metadata, want) || g.Version != 2 || g.Owner != "alice" {
		t.Fatalf("stored %+v", g)
	}
	// An empty patch still bumps the version (it was a write).
	if e := must(s.UpdateTask(ctx, "L", tk.ID, store.TaskPatch{})); e.Version != 3 {
		t.Fatalf("version %d", e.Version)
	}
	_, err := s.UpdateTask(ctx, "L", tk.ID, store.TaskPatch{Subject: ptr("c"), IfVersion: 2})
	wantErr(t, err, store.ErrVersion)
	if g := must(s.GetTask(ctx, "L", tk.ID)); g.Subject != "b" {
		t.Fatal("a failed update changed the task")
	}
	must(s.UpdateTask(ctx, "L", tk.ID, store.TaskPatch{Subject: ptr("c"), IfVersion: 3}))
	must(s.UpdateTask(ctx, "L", tk.ID, store.TaskPatch{Owner: ptr(""), Metadata: map[string]any{"keep": nil, "new": nil}}))
	if g := must(s.GetTask(ctx, "L", tk.ID)); g.Owner != "" || len(g.Metadata) != 0 {
		t.Fatalf("cleared %+v", g)
	}
	_, err = s.UpdateTask(ctx, "L", "42", store.TaskPatch{Subject: ptr("x")})
	wantErr(t, err, store.ErrNotFound)
}

func testTaskInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	bad := []store.NewTask{
		{Subject: ""},
		{Subject: "   "},
		{Subject: string(make([]byte, store.MaxSubjectLen+1))},
		{Subject: "ok", Description: "\xff"},
		{Subject: "ok", Metadata: map[string]any{"f": func() {}}},
	}
	for i, nt := range bad {
		_, err := s.CreateTask(ctx, "L", nt)
		wantErr(t, err, store.ErrInvalid)
		_ = i
	}
	_, err := s.CreateTask(ctx, "", store.NewTask{Subject: "x"})
	wantErr(t, err, store.ErrInvalid)
	tk := must(s.CreateTask(ctx, "L", store.NewTask{Subject: "x"}))
	if tk.ID != "1" {
		t.Fatalf("failed creates consumed ids: %s", tk.ID)
	}
	for _, p := range []store.TaskPatch{
		{Status: ptr(store.TaskStatus("done"))},
		{Subject: ptr("")},
		{Metadata: map[string]any{"c": make(chan int)}},
	} {
		_, err := s.UpdateTask(ctx, "L", "1", p)
		wantErr(t, err, store.ErrInvalid)
	}
	if g := must(s.GetTask(ctx, "L", "1")); g.Version != 1 {
		t.Fatalf("invalid updates changed the task: %+v", g)
	}
}

func testTaskDependencies(t *testing.T, s store.Store) {
	ctx := context.Background()
	for range 5 {
		must(s.CreateTask(ctx, "L", store.NewTask{Subject: "t"}))
	}
	// 1 blocks 2 and 3; 4 is blocked by 3.
	must(s.UpdateTask(ctx, "L", "1", store.TaskPatch{AddBlocks: []string{"2", "3"}}))
	must(s.UpdateTask(ctx, "L", "4", store.TaskPatch{AddBlockedBy: []string{"3"}}))
	// Adding an existing edge again is a no-op.
	must(s.UpdateTask(ctx, "L", "2", store.TaskPatch{AddBlockedBy: []string{"1"}}))
	check := func(id string, blocks, blockedBy []string) {
		t.Helper()
		g := must(s.GetTask(ctx, "L", id))
		if !slices.Equal(g.Blocks, blocks) || !slices.Equal(g.BlockedBy, blockedBy) {
			t.Fatalf("task %s: blocks %v blockedBy %v, want %v %v", id, g.Blocks, g.BlockedBy, blocks, blockedBy)
		}
	}
	check("1", []string{"2", "3"}, nil)
	check("3", []string{"4"}, []string{"1"})
	check("4", nil, []string{"3"})
	list := must(s.ListTasks(ctx, "L"))
	if !slices.Equal(list[0].Blocks, []string{"2", "3"}) || !slices.Equal(list[3].BlockedBy, []string{"3"}) {
		t.Fatalf("list edges: %+v", list)
	}
	for _, tc := range []struct {
		id string
		p  store.TaskPatch
	}{
		{"1", store.TaskPatch{AddBlocks: []string{"1"}}},
		{"2", store.TaskPatch{AddBlocks: []string{"1"}}},
		{"4", store.TaskPatch{AddBlocks: []string{"1"}}}, // 1 → 3 → 4 → 1
		{"1", store.TaskPatch{AddBlockedBy: []string{"4"}}},
		{"5", store.TaskPatch{AddBlocks: []string{"5"}}},
	} {
		_, err := s.UpdateTask(ctx, "L", tc.id, tc.p)
		wantErr(t, err, store.ErrCycle)
	}
	// A patch that fails on its edges changes nothing else either.
	_, err := s.UpdateTask(ctx, "L", "4", store.TaskPatch{Subject: ptr("renamed"), AddBlocks: []string{"5", "1"}})
	wantErr(t, err, store.ErrCycle)
	if g := must(s.GetTask(ctx, "L", "4")); g.Subject != "t" || len(g.Blocks) != 0 {
		t.Fatalf("failed patch applied: %+v", g)
	}
	_, err = s.UpdateTask(ctx, "L", "1", store.TaskPatch{AddBlocks: []string{"77"}})
	wantErr(t, err, store.ErrNotFound)
	_, err = s.UpdateTask(ctx, "L", "1", store.TaskPatch{AddBlocks: []string{"abc"}})
	wantErr(t, err, store.ErrNotFound)
}

func testTaskClaim(t *testing.T, s store.Store) {
	ctx := context.Background()
	for range 3 {
		must(s.CreateTask(ctx, "L", store.NewTask{Subject: "t"}))
	}
	must(s.UpdateTask(ctx, "L", "1", store.TaskPatch{AddBlocks: []string{"2"}}))
	_, err := s.ClaimTask(ctx, "L", "2", "bob")
	wantErr(t, err, store.ErrNotClaimable)
	c := must(s.ClaimTask(ctx, "L", "1", "alice"))
	if c.Owner != "alice" || c.Status != store.TaskInProgress || c.Version != 3 {
		t.Fatalf("claimed %+v", c)
	}
	_, err = s.ClaimTask(ctx, "L", "1", "bob")
	wantErr(t, err, store.ErrClaimed)
	_, err = s.ClaimTask(ctx, "L", "1", "alice") // already in progress
	wantErr(t, err, store.ErrNotClaimable)
	must(s.UpdateTask(ctx, "L", "1", store.TaskPatch{Status: ptr(store.TaskCompleted)}))
	if c := must(s.ClaimTask(ctx, "L", "2", "bob")); c.Owner != "bob" {
		t.Fatalf("unblocked claim %+v", c)
	}
	// A deleted blocker no longer blocks.
	must(s.UpdateTask(ctx, "L", "3", store.TaskPatch{AddBlockedBy: []string{"2"}}))
	must(s.UpdateTask(ctx, "L", "2", store.TaskPatch{Status: ptr(store.TaskDeleted)}))
	must(s.ClaimTask(ctx, "L", "3", "carol"))
	_, err = s.ClaimTask(ctx, "L", "9", "carol")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.ClaimTask(ctx, "L", "3", "")
	wantErr(t, err, store.ErrInvalid)
	// Claimable agrees with ClaimTask.
	must(s.CreateTask(ctx, "L", store.NewTask{Subject: "free"}))
	list := must(s.ListTasks(ctx, "L"))
	status := map[string]store.TaskStatus{}
	for _, tk := range list {
		status[tk.ID] = tk.Status
	}
	done := func(id string) bool { st, ok := status[id]; return !ok || st == store.TaskCompleted }
	var claimable []string
	for _, tk := range list {
		if store.Claimable(tk, done) {
			claimable = append(claimable, tk.ID)
		}
	}
	if !slices.Equal(claimable, []string{"4"}) {
		t.Fatalf("claimable %v", claimable)
	}
}

// testConcurrentClaims: 50 agents race for 10 tasks; each task is claimed
// exactly once.
func testConcurrentClaims(t *testing.T, s store.Store) {
	ctx := context.Background()
	const tasks, agents = 10, 50
	for range tasks {
		must(s.CreateTask(ctx, "L", store.NewTask{Subject: "work"}))
	}
	var wins [tasks + 1]atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, agents*tasks)
	for a := range agents {
		wg.Go(func() {
			owner := fmt.Sprintf("agent-%d", a)
			for i := 1; i <= tasks; i++ {
				_, err := s.ClaimTask(ctx, "L", strconv.Itoa(i), owner)
				switch {
				case err == nil:
					wins[i].Add(1)
				case errors.Is(err, store.ErrClaimed), errors.Is(err, store.ErrNotClaimable):
				default:
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := 1; i <= tasks; i++ {
		if n := wins[i].Load(); n != 1 {
			t.Fatalf("task %d claimed %d times", i, n)
		}
	}
}

// testConcurrentUpdates: 50 goroutines each add one to a counter in
// metadata with read-modify-write under the version check; none is lost.
// Another 50 touch other fields without a version check; none is lost
// either.
func testConcurrentUpdates(t *testing.T, s store.Store) {
	ctx := context.Background()
	tk := must(s.CreateTask(ctx, "L", store.NewTask{Subject: "counter", Metadata: map[string]any{"n": 0}}))
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			for {
				cur, err := s.GetTask(ctx, "L", tk.ID)
				if err != nil {
					errs <- err
					return
				}
				v := cur.Metadata["n"].(float64)
				_, err = s.UpdateTask(ctx, "L", tk.ID, store.TaskPatch{Metadata: map[string]any{"n": v + 1}, IfVersion: cur.Version})
				if errors.Is(err, store.ErrVersion) {
					continue
				}
				if err != nil {
					errs <- err
				}
				return
			}
		})
		wg.Go(func() {
			if _, err := s.UpdateTask(ctx, "L", tk.ID, store.TaskPatch{Metadata: map[string]any{fmt.Sprintf("k%d", i): true}}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	g := must(s.GetTask(ctx, "L", tk.ID))
	if g.Metadata["n"] != float64(n) || len(g.Metadata) != n+1 || g.Version != 1+2*n {
		t.Fatalf("after %d+%d updates: n=%v keys=%d version=%d", n, n, g.Metadata["n"], len(g.Metadata), g.Version)
	}
}

func testConcurrentCreates(t *testing.T, s store.Store) {
	ctx := context.Background()
	const n = 50
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			tk, err := s.CreateTask(ctx, "L", store.NewTask{Subject: "x"})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[tk.ID] {
				t.Errorf("id %s given twice", tk.ID)
			}
			seen[tk.ID] = true
		})
	}
	wg.Wait()
	if l := must(s.ListTasks(ctx, "L")); len(l) != n || l[n-1].ID != strconv.Itoa(n) {
		t.Fatalf("%d tasks, last %v", len(l), l[len(l)-1].ID)
	}
}

func testTodos(t *testing.T, s store.Store) {
	ctx := context.Background()
	if l := must(s.GetTodos(ctx, "S")); len(l.Items) != 0 || !l.UpdatedAt.IsZero() {
		t.Fatalf("fresh todos %+v", l)
	}
	items := []store.Todo{
		{Content: "Write tests", Status: store.TodoCompleted, ActiveForm: "Writing tests"},
		{Content: "Fix bug", Status: store.TodoInProgress, ActiveForm: "Fixing bug"},
		{Content: "Ship", Status: store.TodoPending, ActiveForm: "Shipping"},
	}
	if err := s.SetTodos(ctx, "S", items); err != nil {
		t.Fatal(err)
	}
	l := must(s.GetTodos(ctx, "S"))
	if !reflect.DeepEqual(l.Items, items) || l.UpdatedAt.IsZero() {
		t.Fatalf("todos %+v", l)
	}
	items[0].Content = "changed by the caller"
	if l := must(s.GetTodos(ctx, "S")); l.Items[0].Content != "Write tests" {
		t.Fatal("the store kept the caller's slice")
	}
	// Replaced whole.
	check(s.SetTodos(ctx, "S", []store.Todo{{Content: "Only", Status: store.TodoPending, ActiveForm: "Onlying"}}))
	if l := must(s.GetTodos(ctx, "S")); len(l.Items) != 1 {
		t.Fatalf("not replaced: %+v", l)
	}
	for _, bad := range [][]store.Todo{
		{{Content: "a", Status: store.TodoInProgress, ActiveForm: "A"}, {Content: "b", Status: store.TodoInProgress, ActiveForm: "B"}},
		{{Content: "a", Status: "done", ActiveForm: "A"}},
		{{Content: "", Status: store.TodoPending, ActiveForm: "A"}},
		{{Content: "a", Status: store.TodoPending}},
	} {
		wantErr(t, s.SetTodos(ctx, "S", bad), store.ErrInvalid)
	}
	if l := must(s.GetTodos(ctx, "S")); len(l.Items) != 1 || l.Items[0].Content != "Only" {
		t.Fatalf("invalid write changed the list: %+v", l)
	}
	check(s.SetTodos(ctx, "S", nil))
	if l := must(s.GetTodos(ctx, "S")); len(l.Items) != 0 || l.UpdatedAt.IsZero() {
		t.Fatalf("cleared %+v", l)
	}
	if l := must(s.GetTodos(ctx, "other")); len(l.Items) != 0 {
		t.Fatal("lists are not separate")
	}
}

func texts(ms []store.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

func testMailboxes(t *testing.T, s store.Store) {
	ctx := context.Background()
	sent := must(s.Send(ctx, "lead", []string{"a", "b"}, "hello"))
	if len(sent) != 2 || sent[0].Mailbox != "a" || sent[1].Mailbox != "b" || sent[0].Seq >= sent[1].Seq || sent[0].From != "lead" {
		t.Fatalf("sent %+v", sent)
	}
	for i := range 3 {
		must(s.Send(ctx, "b", []string{"a"}, fmt.Sprint("m", i)))
	}
	p := must(s.Pending(ctx, "a", 0))
	if !slices.Equal(texts(p), []string{"hello", "m0", "m1", "m2"}) {
		t.Fatalf("pending %v", texts(p))
	}
	for i := 1; i < len(p); i++ {
		if p[i].Seq <= p[i-1].Seq {
			t.Fatal("sequence not increasing")
		}
	}
	if l := must(s.Pending(ctx, "a", 2)); !slices.Equal(texts(l), []string{"hello", "m0"}) {
		t.Fatalf("limited %v", texts(l))
	}
	// Not acked: delivered again.
	if again := must(s.Pending(ctx, "a", 0)); len(again) != 4 {
		t.Fatal("pending consumed without ack")
	}
	check(s.Ack(ctx, "a", p[1].Seq))
	if l := must(s.Pending(ctx, "a", 0)); !slices.Equal(texts(l), []string{"m1", "m2"}) {
		t.Fatalf("after ack %v", texts(l))
	}
	// b's mailbox is untouched by a's ack.
	if l := must(s.Pending(ctx, "b", 0)); !slices.Equal(texts(l), []string{"hello"}) {
		t.Fatalf("b %v", texts(l))
	}
	check(s.Ack(ctx, "a", p[3].Seq))
	if l := must(s.Pending(ctx, "a", 0)); len(l) != 0 {
		t.Fatalf("after full ack %v", l)
	}
	// A later message gets a larger sequence than everything acked.
	m := must(s.Send(ctx, "x", []string{"a"}, "late"))
	if m[0].Seq <= p[3].Seq {
		t.Fatal("sequence reused after ack")
	}
	for _, bad := range []struct {
		from string
		to   []string
		text string
	}{{"", []string{"a"}, "x"}, {"f", nil, "x"}, {"f", []string{""}, "x"}, {"f", []string{"a"}, ""}, {"f", []string{"a"}, "\xff"}} {
		_, err := s.Send(ctx, bad.from, bad.to, bad.text)
		wantErr(t, err, store.ErrInvalid)
	}
}

func testMailboxWait(t *testing.T, s store.Store) {
	ctx := context.Background()
	// Already there: returns at once.
	m := must(s.Send(ctx, "x", []string{"w"}, "first"))
	if err := s.Wait(ctx, "w", 0); err != nil {
		t.Fatal(err)
	}
	// After the last: waits for the next.
	got := make(chan error, 1)
	go func() { got <- s.Wait(ctx, "w", m[0].Seq) }()
	select {
	case err := <-got:
		t.Fatalf("Wait returned before a new message: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	must(s.Send(ctx, "x", []string{"other"}, "not for w"))
	must(s.Send(ctx, "x", []string{"w"}, "second"))
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not wake on a message")
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	wantErr(t, s.Wait(cctx, "empty", 0), context.DeadlineExceeded)
}

// testConcurrentSends: 20 senders × 25 messages to one mailbox; every
// message arrives once and each sender's messages keep their order.
func testConcurrentSends(t *testing.T, s store.Store) {
	ctx := context.Background()
	const senders, each = 20, 25
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			for j := range each {
				if _, err := s.Send(ctx, fmt.Sprint("s", i), []string{"box"}, fmt.Sprint(j)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// A consumer acks concurrently.
	var got []store.Message
	for len(got) < senders*each {
		if err := s.Wait(ctx, "box", lastSeq(got)); err != nil {
			t.Fatal(err)
		}
		p := must(s.Pending(ctx, "box", 0))
		got = append(got, p...)
		check(s.Ack(ctx, "box", p[len(p)-1].Seq))
	}
	wg.Wait()
	next := map[string]int{}
	for _, m := range got {
		if m.Text != strconv.Itoa(next[m.From]) {
			t.Fatalf("from %s: got %s, want %d", m.From, m.Text, next[m.From])
		}
		next[m.From]++
	}
	if l := must(s.Pending(ctx, "box", 0)); len(l) != 0 {
		t.Fatalf("%d left over", len(l))
	}
}

func lastSeq(ms []store.Message) int64 {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Seq
}

func testTeams(t *testing.T, s store.Store) {
	ctx := context.Background()
	tm := must(s.CreateTeam(ctx, store.Team{Name: "red", Description: "d", Lead: "sess-1", Members: []store.Member{
		{Name: "alice", AgentType: "general-purpose", Role: "writes code"},
		{Name: "bob", AgentType: "Explore", Role: "reviews"},
	}}))
	if tm.TaskList == "" || tm.CreatedAt.IsZero() || !tm.Active() || len(tm.Members) != 2 || tm.Members[0].Status != store.MemberStarting || tm.Members[1].Name != "bob" {
		t.Fatalf("created %+v", tm)
	}
	_, err := s.CreateTeam(ctx, store.Team{Name: "red"})
	wantErr(t, err, store.ErrExists)
	check(s.SetMemberStatus(ctx, "red", "bob", store.MemberIdle, "done reviewing"))
	g := must(s.GetTeam(ctx, "red"))
	if b, _ := g.Member("bob"); b.Status != store.MemberIdle || b.Note != "done reviewing" || b.Role != "reviews" {
		t.Fatalf("bob %+v", b)
	}
	wantErr(t, s.SetMemberStatus(ctx, "red", "zed", store.MemberIdle, ""), store.ErrNotFound)
	wantErr(t, s.SetMemberStatus(ctx, "blue", "bob", store.MemberIdle, ""), store.ErrNotFound)
	// A member joins a running team after it was created.
	added := must(s.AddMember(ctx, "red", store.Member{Name: "dave", AgentType: "Plan", Role: "plans"}))
	if len(added.Members) != 3 || added.Members[2].Name != "dave" || added.Members[2].Status != store.MemberStarting || added.Members[2].UpdatedAt.IsZero() {
		t.Fatalf("after AddMember %+v", added)
	}
	if g := must(s.GetTeam(ctx, "red")); len(g.Members) != 3 || g.Members[0].Name != "alice" || g.Members[2].Role != "plans" {
		t.Fatalf("AddMember not stored: %+v", g)
	}
	check(s.SetMemberStatus(ctx, "red", "dave", store.MemberRunning, ""))
	for _, bad := range []store.Member{{Name: "dave"}, {Name: "alice"}, {Name: ""}, {Name: "*"}, {Name: store.LeadMailbox}} {
		_, err := s.AddMember(ctx, "red", bad)
		wantErr(t, err, store.ErrInvalid)
	}
	_, err = s.AddMember(ctx, "nope", store.Member{Name: "x"})
	wantErr(t, err, store.ErrNotFound)
	must(s.CreateTeam(ctx, store.Team{Name: "blue", TaskList: "custom"}))
	for i := range store.MaxMembers {
		must(s.AddMember(ctx, "blue", store.Member{Name: fmt.Sprintf("m%d", i)}))
	}
	_, err = s.AddMember(ctx, "blue", store.Member{Name: "one-too-many"})
	wantErr(t, err, store.ErrInvalid)
	if l := must(s.ListTeams(ctx)); len(l) != 2 || l[0].Name != "blue" || l[0].TaskList != "custom" || l[1].Name != "red" {
		t.Fatalf("list %+v", l)
	}
	d := must(s.DeleteTeam(ctx, "red"))
	if d.Active() {
		t.Fatal("deleted team active")
	}
	_, err = s.AddMember(ctx, "red", store.Member{Name: "late"})
	wantErr(t, err, store.ErrNotFound)
	for _, m := range d.Members {
		if m.Status != store.MemberStopped {
			t.Fatalf("member %s is %s after delete", m.Name, m.Status)
		}
	}
	if g := must(s.GetTeam(ctx, "red")); g.Active() || len(g.Members) != 3 {
		t.Fatalf("record not kept: %+v", g)
	}
	// A deleted team's name can be used again.
	if n := must(s.CreateTeam(ctx, store.Team{Name: "red", Members: []store.Member{{Name: "carol"}}})); !n.Active() || len(n.Members) != 1 {
		t.Fatalf("recreated %+v", n)
	}
	_, err = s.DeleteTeam(ctx, "nope")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.GetTeam(ctx, "nope")
	wantErr(t, err, store.ErrNotFound)
	for _, bad := range []store.Team{
		{Name: ""},
		{Name: "x", Members: []store.Member{{Name: "a"}, {Name: "a"}}},
		{Name: "x", Members: []store.Member{{Name: "*"}}},
		{Name: "x", Members: []store.Member{{Name: store.LeadMailbox}}},
		{Name: "x", Members: []store.Member{{Name: ""}}},
	} {
		_, err := s.CreateTeam(ctx, bad)
		wantErr(t, err, store.ErrInvalid)
	}
}

func testClosed(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := s.CreateTask(ctx, "L", store.NewTask{Subject: "x"})
	wantErr(t, err, store.ErrClosed)
	_, err = s.Pending(ctx, "a", 0)
	wantErr(t, err, store.ErrClosed)
	wantErr(t, s.Wait(ctx, "a", 0), store.ErrClosed)
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
