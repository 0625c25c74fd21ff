package interaction

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/outbuf"
	"github.com/gantry-dev/gantry/tool"
)

// Terminal is a [Channel] that asks on a line terminal: it writes numbered
// choices to Out and reads one line per answer from In. It handles every
// request kind. Text from the request is shown escaped (control and
// invisible characters visible), on one line where it is a label.
//
// Requests are asked one at a time. End of input means nobody is there:
// the request fails with [ErrNobody] (and so does every later one). A
// cancelled ctx returns at once; the line being read is kept for the next
// question.
//
// It is the CLI's channel for `gantry -p` at a terminal; a full-screen UI
// would implement [Channel] itself.
type Terminal struct {
	in  io.Reader
	out io.Writer
	// Pause, if set, is called before a request is shown and the function
	// it returns after it is answered (to stop a spinner drawing over the
	// prompt).
	Pause func() (resume func())

	ask   sync.Mutex // one request at a time
	start sync.Once
	lines chan string
	err   error // set before lines is closed
}

// NewTerminal returns a Terminal reading answers from in and writing
// prompts to out.
func NewTerminal(in io.Reader, out io.Writer) *Terminal {
	return &Terminal{in: in, out: out}
}

// Ask implements [Channel].
func (t *Terminal) Ask(ctx context.Context, req Request) (Answer, error) {
	if r, ok := req.(*NotificationRequest); ok {
		return notifyTerminal(t.out, r) // nothing to answer: never waits for a question
	}
	t.ask.Lock()
	defer t.ask.Unlock()
	if t.Pause != nil {
		defer t.Pause()()
	}
	switch r := req.(type) {
	case *PermissionRequest:
		return t.permission(ctx, r)
	case *QuestionRequest:
		return t.questions(ctx, r)
	case *PlanRequest:
		return t.plan(ctx, r)
	case *ElicitationRequest:
		return t.elicit(ctx, r)
	case *TrustRequest:
		return t.trust(ctx, r)
	case nil:
		return nil, errors.New("interaction: nil request")
	}
	return nil, fmt.Errorf("%w (%s)", ErrNobody, req.Kind())
}

// readLine reads one line (without its newline). End of input is
// [ErrNobody].
func (t *Terminal) readLine(ctx context.Context) (string, error) {
	t.start.Do(func() {
		t.lines = make(chan string)
		go t.readLoop()
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case s, ok := <-t.lines:
		if !ok {
			if errors.Is(t.err, io.EOF) {
				return "", fmt.Errorf("%w (end of input)", ErrNobody)
			}
			return "", fmt.Errorf("%w (reading the answer: %v)", ErrNobody, t.err)
		}
		return strings.TrimRight(s, "\r\n"), nil
	}
}

// readLoop feeds lines to readLine; it ends at the end of input (or a read
// error), which every later read then reports.
func (t *Terminal) readLoop() {
	br := bufio.NewReader(t.in)
	for {
		s, err := br.ReadString('\n')
		if s != "" && (err == nil || errors.Is(err, io.EOF)) {
			t.lines <- s
		}
		if err != nil {
			t.err = err
			close(t.lines)
			return
		}
	}
}

func (t *Terminal) printf(format string, args ...any) { fmt.Fprintf(t.out, format, args...) }

// block escapes s for display on several lines, each indented.
func block(s, indent string) string { return blockPrefixed(s, indent, indent) }

// blockPrefixed is block with the first line's prefix first and the
// others' rest.
func blockPrefixed(s, first, rest string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		lines[i] = p + outbuf.EscapeDisplay(strings.ReplaceAll(l, "\t", "    "))
	}
	return strings.Join(lines, "\n")
}

// choose reads a choice 1..n; an empty line is def; anything else asks
// again (at most three times, then def).
func (t *Terminal) choose(ctx context.Context, n, def int) (int, error) {
	for range 3 {
		t.printf("Choose 1-%d [%d]: ", n, def)
		line, err := t.readLine(ctx)
		if err != nil {
			t.printf("\n")
			return 0, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			return def, nil
		}
		if k, err := strconv.Atoi(line); err == nil && k >= 1 && k <= n {
			return k, nil
		}
		t.printf("Please answer with a number from 1 to %d.\n", n)
	}
	return def, nil
}

func (t *Terminal) who(w Who) string {
	if w.Agent == "" {
		return ""
	}
	return " (subagent " + DisplayLine(w.Agent, 40) + ")"
}

func (t *Terminal) permission(ctx context.Context, r *PermissionRequest) (Answer, error) {
	// What the call does comes first and whole: the exact command, the
	// file and its change. The model's description is secondary.
	pv := Preview(r.ToolName, r.Input)
	switch {
	case pv.Command != "":
		t.printf("\nGantry%s wants to run this command (%s):\n%s\n", t.who(r.Who), DisplayLine(r.ToolName, 64), blockPrefixed(pv.Command, "  $ ", "    "))
	case pv.Path != "":
		verb := "change"
		if pv.Removed == "" {
			verb = "write"
		}
		t.printf("\nGantry%s wants to %s %s (%s):\n", t.who(r.Who), verb, DisplayLine(pv.Path, 500), DisplayLine(r.ToolName, 64))
		if pv.ReplaceAll {
			t.printf("  (every occurrence)\n")
		}
		if lines := DiffLines(pv.Removed, pv.Added); len(lines) > 0 {
			t.printf("%s\n", block(strings.Join(lines, "\n"), "  "))
		} else {
			t.printf("  (empty)\n")
		}
	case pv.URL != "":
		t.printf("\nGantry%s wants to use %s on %s\n", t.who(r.Who), DisplayLine(r.ToolName, 64), DisplayLine(pv.URL, 2000))
	default:
		t.printf("\nGantry%s wants to use %s with:\n%s\n", t.who(r.Who), DisplayLine(r.ToolName, 64), block(pv.Input, "  "))
	}
	if r.Description != "" {
		t.printf("  the model says: %s\n", DisplayLine(r.Description, 300))
	}
	if r.Reason != "" {
		why := r.Reason
		if r.Rule != "" {
			why += " (rule " + r.Rule + ")"
		}
		t.printf("  why it asks: %s\n", DisplayLine(why, 500))
	}
	type option struct {
		text   string
		answer PermissionAnswer
	}
	opts := []option{{"Yes, this once", PermissionAnswer{Choice: AllowOnce}}}
	if len(r.Suggestions) > 0 {
		rules := DisplayLine(strings.Join(r.Suggestions, ", "), 200)
		opts = append(opts, option{"Yes, and allow " + rules + " for this session", PermissionAnswer{Choice: AllowSession}})
		if len(r.Scopes) > 0 {
			opts = append(opts, option{fmt.Sprintf("Yes, and always allow %s (saved to %s settings)", rules, r.Scopes[0]),
				PermissionAnswer{Choice: AllowAlways, Scope: r.Scopes[0]}})
		}
	}
	opts = append(opts, option{"No, and tell the model what to do instead", PermissionAnswer{Choice: Deny}})
	for i, o := range opts {
		t.printf("  %d. %s\n", i+1, o.text)
	}
	k, err := t.choose(ctx, len(opts), len(opts))
	if err != nil {
		return nil, err
	}
	a := opts[k-1].answer
	if a.Choice == Deny {
		t.printf("What should the model do instead? (Enter to skip): ")
		msg, err := t.readLine(ctx)
		if err != nil && !errors.Is(err, ErrNobody) {
			return nil, err
		}
		a.Message = strings.TrimSpace(msg)
	}
	return &a, nil
}

func (t *Terminal) questions(ctx context.Context, r *QuestionRequest) (Answer, error) {
	ans := &QuestionAnswer{Answers: map[string]string{}}
	t.printf("\nThe model%s asks:\n", t.who(r.Who))
	for _, q := range r.Questions {
		t.printf("\n[%s] %s\n", DisplayLine(q.Header, 30), DisplayLine(q.Question, 300))
		for i, o := range q.Options {
			t.printf("  %d. %s", i+1, DisplayLine(o.Label, 80))
			if o.Description != "" {
				t.printf(" — %s", DisplayLine(o.Description, 200))
			}
			t.printf("\n")
			if o.Preview != "" {
				t.printf("%s\n", block(o.Preview, "       "))
			}
		}
		if q.MultiSelect {
			t.printf("Numbers separated by commas, or your own answer (Enter to skip): ")
		} else {
			t.printf("A number, or your own answer (Enter to skip): ")
		}
		line, err := t.readLine(ctx)
		if err != nil {
			t.printf("\n")
			return nil, err
		}
		if a := parseChoice(q, strings.TrimSpace(line)); a != "" {
			ans.Answers[q.Question] = a
		}
	}
	return ans, nil
}

// parseChoice turns a typed answer into option labels ("2", "1, 3") or
// keeps it as a free answer.
func parseChoice(q Question, line string) string {
	line = strings.TrimSpace(line)
	if line == "" {
		return ""
	}
	parts := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' })
	if len(parts) == 0 || len(parts) > 1 && !q.MultiSelect {
		return line
	}
	var labels []string
	for _, p := range parts {
		k, err := strconv.Atoi(p)
		if err != nil || k < 1 || k > len(q.Options) {
			return line
		}
		if l := q.Options[k-1].Label; !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}
	return JoinLabels(labels)
}

func (t *Terminal) plan(ctx context.Context, r *PlanRequest) (Answer, error) {
	t.printf("\nThe model%s presents a plan", t.who(r.Who))
	if r.PlanFile != "" {
		t.printf(" (saved at %s)", DisplayLine(r.PlanFile, 200))
	}
	t.printf(":\n\n%s\n\n", block(r.Plan, "  "))
	back := r.ReturnMode
	if back == "" {
		back = tool.ModeDefault
	}
	opts := []PlanAnswer{{Approved: true, Mode: back}}
	texts := []string{fmt.Sprintf("Yes, carry it out (%s mode)", back)}
	if back != tool.ModeAcceptEdits {
		opts = append(opts, PlanAnswer{Approved: true, Mode: tool.ModeAcceptEdits})
		texts = append(texts, "Yes, and accept its edits without asking (acceptEdits mode)")
	}
	opts = append(opts, PlanAnswer{})
	texts = append(texts, "No, keep planning (tell the model what to change)")
	for i, s := range texts {
		t.printf("  %d. %s\n", i+1, s)
	}
	k, err := t.choose(ctx, len(opts), len(opts))
	if err != nil {
		return nil, err
	}
	a := opts[k-1]
	if !a.Approved {
		t.printf("What should change? ")
		fb, err := t.readLine(ctx)
		if err != nil && !errors.Is(err, ErrNobody) {
			return nil, err
		}
		a.Feedback = strings.TrimSpace(fb)
	}
	return &a, nil
}

func (t *Terminal) trust(ctx context.Context, r *TrustRequest) (Answer, error) {
	if len(r.Servers) > 0 {
		t.printf("The MCP servers of %s changed since you approved them:\n", DisplayLine(r.Dir, 300))
		for _, s := range r.Servers {
			t.printf("  %s\n", DisplayLine(s, 500))
		}
		t.printf("Approve and start them? [y/N] ")
		yes, err := t.yes(ctx)
		if err != nil {
			return nil, err
		}
		return &TrustAnswer{Trust: yes}, nil
	}
	if r.Changed {
		t.printf("\nThe configuration of %s changed since you trusted it; it is ignored until you trust it again.\n", DisplayLine(r.Dir, 300))
	}
	t.printf("\nDo you trust the files in %s?\n", DisplayLine(r.Dir, 300))
	for file, what := range r.Ignored {
		t.printf("  %s: %s\n", DisplayLine(file, 200), DisplayLine(strings.Join(what, ", "), 200))
	}
	t.printf("Its settings may run hooks and commands, set environment variables, allow tools and start MCP servers.\nTrust this folder? [y/N] ")
	yes, err := t.yes(ctx)
	if err != nil {
		return nil, err
	}
	return &TrustAnswer{Trust: yes}, nil
}

func (t *Terminal) yes(ctx context.Context) (bool, error) {
	line, err := t.readLine(ctx)
	if err != nil {
		t.printf("\n")
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

func (t *Terminal) elicit(ctx context.Context, r *ElicitationRequest) (Answer, error) {
	t.printf("\nThe MCP server %s asks: %s\n", DisplayLine(r.Server, 64), DisplayLine(r.Message, 500))
	if r.URL != "" {
		t.printf("Open this page to continue: %s\nDone? [y/N] ", DisplayLine(r.URL, 500))
		yes, err := t.yes(ctx)
		if err != nil {
			return nil, err
		}
		if !yes {
			return &ElicitationAnswer{Action: ElicitDecline}, nil
		}
		return &ElicitationAnswer{Action: ElicitAccept}, nil
	}
	fields, err := FormFields(r.Schema)
	if err != nil {
		return nil, err
	}
	t.printf("Answer it? [y/N] ")
	yes, err := t.yes(ctx)
	if err != nil {
		return nil, err
	}
	if !yes {
		return &ElicitationAnswer{Action: ElicitDecline}, nil
	}
	content := map[string]any{}
	for _, f := range fields {
		name, title := f.Name, f.Label()
		for attempt := 0; ; attempt++ {
			t.printf("%s", DisplayLine(title, 80))
			if f.Description != "" {
				t.printf(" (%s)", DisplayLine(f.Description, 200))
			}
			if len(f.Enum) > 0 {
				var vs []string
				for _, v := range f.Enum {
					vs = append(vs, DisplayLine(fmt.Sprint(v), 40))
				}
				t.printf(" [%s]", strings.Join(vs, "|"))
			}
			if f.Default != nil {
				t.printf(" (default %s)", DisplayLine(fmt.Sprint(f.Default), 60))
			}
			t.printf(": ")
			line, err := t.readLine(ctx)
			if err != nil {
				t.printf("\n")
				return nil, err
			}
			line = strings.TrimSpace(line)
			if line == "" {
				if f.Default != nil {
					content[name] = f.Default
				}
				if f.Default != nil || !f.Required || attempt >= 2 {
					break
				}
				t.printf("This field is required.\n")
				continue
			}
			v, err := f.Parse(line)
			if err == nil {
				content[name] = v
				break
			}
			if attempt >= 2 {
				return &ElicitationAnswer{Action: ElicitCancel}, nil
			}
			t.printf("%v\n", err)
		}
	}
	return &ElicitationAnswer{Action: ElicitAccept, Content: content}, nil
}
