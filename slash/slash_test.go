package slash

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		in, name, args string
		ok             bool
	}{
		{"/compact", "compact", "", true},
		{"  /compact keep the names  ", "compact", "keep the names", true},
		{"/greet Ada Lovelace", "greet", "Ada Lovelace", true},
		{"/greet\nAda", "greet", "Ada", true},
		{"/frontend:component Button", "frontend:component", "Button", true},
		{"compact", "", "", false},
		{"/", "", "", false},
		{"/ compact", "", "", false},
		{"/etc/hosts is broken", "", "", false},
	}
	for _, tt := range tests {
		name, args, ok := Split(tt.in)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q, %v", tt.in, name, args, ok, tt.name, tt.args, tt.ok)
		}
	}
}

func TestParseFile(t *testing.T) {
	tests := []struct {
		name, in string
		want     Command
		wantErr  string
	}{
		{name: "plain", in: "# Review the diff\n\nLook at it.", want: Command{Name: "plain", Description: "Review the diff", Body: "# Review the diff\n\nLook at it."}},
		{name: "full", in: "---\ndescription: Greet someone\nargument-hint: [name] [greeting]\nallowed-tools: Read, Bash(git status:*)\nmodel: claude-haiku-4-5\ndisable-model-invocation: true\n---\nSay $2 to $1.\n",
			want: Command{Name: "full", Description: "Greet someone", ArgumentHint: "[name] [greeting]", AllowedTools: []string{"Read", "Bash(git status:*)"},
				Model: "claude-haiku-4-5", DisableModelInvocation: true, Body: "Say $2 to $1."}},
		{name: "hint", in: "---\nargument-hint: \"<file>\"\nallowed-tools: [Read, Grep]\n---\nbody", want: Command{Name: "hint", Description: "body", ArgumentHint: "<file>", AllowedTools: []string{"Read", "Grep"}, Body: "body"}},
		{name: "crlf", in: "\xef\xbb\xbf---\r\ndescription: d\r\n---\r\nx\r\n", want: Command{Name: "crlf", Description: "d", Body: "x"}},
		{name: "unclosed", in: "---\ndescription: d\nbody", wantErr: "not closed"},
		{name: "badyaml", in: "---\ndescription: [\n---\nbody", wantErr: "front matter"},
		{name: "badtools", in: "---\nallowed-tools: {a: b}\n---\nbody", wantErr: "tool names"},
		{name: "bad name!", in: "x", wantErr: "invalid command name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseFile([]byte(tt.in), tt.name)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != tt.want.Name || c.Description != tt.want.Description || c.ArgumentHint != tt.want.ArgumentHint ||
				!slices.Equal(c.AllowedTools, tt.want.AllowedTools) || c.Model != tt.want.Model ||
				c.DisableModelInvocation != tt.want.DisableModelInvocation || c.Body != tt.want.Body {
				t.Errorf("got %+v\nwant %+v", *c, tt.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	tests := []struct{ body, args, want string }{
		{"Greet $ARGUMENTS.", "Ada Lovelace", "Greet Ada Lovelace."},
		{"Say $2 to $1, not $3.", `"Ada Lovelace" 'good morning'`, "Say good morning to Ada Lovelace, not ."},
		{"Fix issue $1 ($ARGUMENTS)", "12 now", "Fix issue 12 (12 now)"},
		{"Review the code.", "", "Review the code."},
		{"Review the code.", "main.go", "Review the code.\n\nARGUMENTS: main.go"},
		{"Cost is $5 and $10", "a", "Cost is  and "},
		{"$ARGUMENTS", `a $1 b`, "a $1 b"}, // arguments are not expanded again
	}
	for _, tt := range tests {
		c := &Command{Body: tt.body}
		if got := c.Expand(tt.args); got != tt.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tt.body, tt.args, got, tt.want)
		}
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a  b\tc", []string{"a", "b", "c"}},
		{`"a b" 'c d' e\ f`, []string{"a b", "c d", "e f"}},
		{`""`, []string{""}},
		{`'it''s'`, []string{"its"}},
		{`a"b c"d`, []string{"ab cd"}},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestLoad: the scopes, their precedence, namespacing by subfolder and
// the trust rule (no ProjectDir, no project commands).
func TestLoad(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	gh := filepath.Join(home, ".gantry")
	write(t, filepath.Join(home, ".claude", "commands", "hello.md"), "---\ndescription: user hello\n---\nHello from the user.")
	write(t, filepath.Join(home, ".claude", "commands", "greet.md"), "user greet")
	write(t, filepath.Join(gh, "commands", "mine.md"), "mine")
	write(t, filepath.Join(proj, ".claude", "commands", "greet.md"), "---\ndescription: project greet\n---\nGreet $1.")
	write(t, filepath.Join(proj, ".claude", "commands", "frontend", "component.md"), "Make a component $ARGUMENTS.")
	write(t, filepath.Join(proj, ".claude", "commands", "frontend", "greet.md"), "Frontend greeting.")
	write(t, filepath.Join(proj, ".claude", "commands", "notes.txt"), "not a command")
	write(t, filepath.Join(proj, ".claude", "commands", "broken.md"), "---\ndescription: [\n---\n")
	write(t, filepath.Join(proj, ".gantry", "commands", "deploy.md"), "Deploy.")

	untrusted, problems := Load(LoadOptions{UserHome: home, GantryHome: gh})
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	if got := names(untrusted); !slices.Equal(got, []string{"greet", "hello", "mine"}) {
		t.Errorf("untrusted: %v", got)
	}
	if c := byName(untrusted, "greet"); c.Source != SourceUser || c.Body != "user greet" {
		t.Errorf("untrusted greet = %+v", c)
	}

	trusted, problems := Load(LoadOptions{UserHome: home, GantryHome: gh, ProjectDir: proj})
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "broken.md") {
		t.Errorf("problems = %v, want broken.md's", problems)
	}
	if got := names(trusted); !slices.Equal(got, []string{"component", "deploy", "frontend:greet", "greet", "hello", "mine"}) {
		t.Errorf("trusted: %v", got)
	}
	if c := byName(trusted, "greet"); c.Source != SourceProject || c.Description != "project greet" {
		t.Errorf("project greet = %+v", c)
	}
	if c := byName(trusted, "component"); c.Namespace != "frontend" {
		t.Errorf("component's namespace = %q", c.Namespace)
	}

	r := NewRegistry(trusted...)
	for _, tt := range []struct{ prompt, name, args string }{
		{"/component Button", "component", "Button"},
		{"/frontend:component Button", "component", "Button"},
		{"/frontend:greet", "frontend:greet", ""},
		{"/compact keep", "compact", "keep"},
	} {
		c, args := r.Find(tt.prompt)
		if c == nil || c.Name != tt.name || args != tt.args {
			t.Errorf("Find(%q) = %v, %q", tt.prompt, c, args)
		}
	}
	if c, _ := r.Find("/nope x"); c != nil {
		t.Errorf("Find(/nope) = %v", c)
	}
	if l := r.List(); l[0].Name != "compact" || !l[0].Builtin() || len(l) != len(Builtins())+6 {
		t.Errorf("List() = %v", names(l))
	}
}

// TestBuiltinWins: a custom command cannot take a built-in's name.
func TestBuiltinWins(t *testing.T) {
	r := NewRegistry(&Command{Name: "compact", Body: "custom", Source: SourceProject})
	if c := r.Lookup("compact"); !c.Builtin() {
		t.Errorf("compact = %+v", c)
	}
}

func names(cmds []*Command) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

func byName(cmds []*Command, name string) *Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"/compact", "/x a b", "/etc/x", "", "/", "/a\tb", "/a:b c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, args, ok := Split(s)
		if ok && (name == "" || strings.ContainsAny(name, "/ \n\t")) {
			t.Fatalf("Split(%q) gave name %q", s, name)
		}
		if !ok && (name != "" || args != "") {
			t.Fatalf("Split(%q) not ok but gave %q %q", s, name, args)
		}
	})
}

func FuzzParseFile(f *testing.F) {
	for _, s := range []string{"---\ndescription: d\nargument-hint: [a] [b]\nallowed-tools: Read\n---\n$1 $ARGUMENTS", "plain", "---\n---\n", "---\nx"} {
		f.Add(s, "a b")
	}
	f.Fuzz(func(t *testing.T, data, args string) {
		c, err := ParseFile([]byte(data), "cmd")
		if err != nil {
			return
		}
		if c.Name != "cmd" {
			t.Fatalf("name %q", c.Name)
		}
		_ = c.Expand(args)
		if strings.Contains(c.Description, "\n") {
			t.Fatalf("description has a newline: %q", c.Description)
		}
	})
}

func FuzzWords(f *testing.F) {
	for _, s := range []string{`a "b c" 'd'`, `\`, `"unclosed`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range Words(s) {
			if !strings.ContainsAny(s, `"'\`) && strings.ContainsAny(w, " \t\n") {
				t.Fatalf("Words(%q): word %q has a space without quoting", s, w)
			}
		}
	})
}

// TestBuiltinList: every built-in has a description; the prompt ones
// (/init, /review) are not run by the front end nor by the model.
func TestBuiltinList(t *testing.T) {
	want := []string{"compact", "clear", "context", "cost", "model", "permissions", "agents", "mcp", "memory", "init", "review"}
	var got []string
	for _, c := range Builtins() {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Builtins() = %v, want %v", got, want)
	}
	for _, c := range Builtins() {
		if c.Description == "" || c.Source != SourceBuiltin {
			t.Errorf("%s: description %q, source %q", c.Name, c.Description, c.Source)
		}
		prompt := c.Name == "init" || c.Name == "review"
		if c.Builtin() == prompt || c.Invocable() {
			t.Errorf("%s: Builtin() = %v, Invocable() = %v", c.Name, c.Builtin(), c.Invocable())
		}
	}
	if got := NewRegistry().Lookup("review").Expand("42"); !strings.Contains(got, "pull request 42") {
		t.Errorf("/review 42 = %q", got)
	}
}
