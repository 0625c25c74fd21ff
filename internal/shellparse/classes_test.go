package shellparse

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestAtFile(t *testing.T) {
	for _, tc := range []struct {
		in        string
		file      string
		ok, exact bool
	}{
		{"@f", "f", true, true}, {"@-", "", false, true}, {"a=b", "", false, true}, {"k@f", "f", true, true},
		{"k=@f;type=x", "f", true, true}, {"k=<f", "f", true, true}, {"k=v@x", "", false, true}, {"plain", "", false, true},
		{`k=@"a;b"`, "", true, false}, {"@", "", true, false}, {"user@host", "host", true, true},
	} {
		f, ok, exact := atFile(tc.in)
		if f != tc.file || ok != tc.ok || exact != tc.exact {
			t.Errorf("atFile(%q) = %q %v %v, want %q %v %v", tc.in, f, ok, exact, tc.file, tc.ok, tc.exact)
		}
	}
}

func FuzzAtFile(f *testing.F) {
	for _, s := range []string{"@f", "k=@f;t=x", "k@f", "a=<b", "", "@-", `k=@"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		file, ok, exact := atFile(s)
		if file != "" && (!ok || !exact || !strings.Contains(s, file)) {
			t.Fatalf("atFile(%q) = %q %v %v", s, file, ok, exact)
		}
	})
}

// paths renders a command's reads and writes: value, then R (recursive),
// F (follows links), U (unknown), G (option glob).
func paths(ps []Path) []string {
	var out []string
	for _, p := range ps {
		s := p.Value
		for _, f := range []struct {
			on bool
			c  string
		}{{p.Recursive, "R"}, {p.Follow, "F"}, {p.Unknown, "U"}, {p.OptionGlob, "G"}} {
			if f.on {
				s += "/" + f.c
			}
		}
		out = append(out, s)
	}
	return out
}

// TestOptionFilePaths: option values and indirections are reads and
// writes of the model (class 1).
func TestOptionFilePaths(t *testing.T) {
	for _, tc := range []struct {
		src           string
		reads, writes []string
	}{
		{"jq -n --rawfile x f '$x'", []string{"f"}, nil},
		{"jq --slurpfile v a.json --arg k v '.' b.json", []string{"a.json", "b.json"}, nil},
		{"jq 'import \"m\" as m; .' f", []string{"f", "modules the jq program imports/U"}, nil},
		{"curl -d @body -F 'up=<doc;type=x' --data-urlencode 'k@enc' -H @hdr -b jar -T up -K cfg u", []string{"body", "doc", "enc", "hdr", "jar", "up", "cfg"}, nil},
		{"curl -b 'a=b' --data-raw @x u", nil, nil},
		{"wc --files0-from=l", []string{"l", "wc --files0-from: the files l lists/U"}, nil},
		{"sha256sum -c s", []string{"sha256sum : the files its operands list/U", "s"}, nil},
		{"grep -R x d", []string{"d/R/F", "d/R"}, nil},
		{"grep -r x d", []string{"d/R"}, nil},
		{"rg -L x", []string{"./R", "./R/F"}, nil},
		{"find -L d -name x", []string{"d/R", "d/R/F"}, nil},
		{"diff -r a b", []string{"a/R/F", "b/R/F", "a/R", "b/R"}, nil},
		{"diff -r --no-dereference a b", []string{"a/R", "b/R"}, nil},
		{"ls -RL d", []string{"d/R/F", "d"}, nil},
		{"du -L d", []string{"d/R/F", "d"}, nil},
		{"cp -rL a b", []string{"a/R/F", "a/R"}, []string{"b/R"}},
		{"chown -RL u d", nil, []string{"d/R/F", "d/R"}},
		{"wc -l *.go", []string{"*.go/G"}, nil},
		{"awk 'BEGIN{ARGV[1]=\"x\"} 1' f", []string{"files the awk program opens itself/U", "f"}, nil},
		{"awk -f p.awk f", []string{"files the awk program file opens/U", "p.awk", "f"}, nil},
		{"sed --file=s.sed f", []string{"s.sed", "files sed's script file opens/U", "f"}, []string{"files sed's script file writes/U"}},
		{"xargs -a args echo", []string{"args"}, nil},
		{"rsync -a --files-from=l --log-file=log src dst", []string{"l", "rsync --files-from: the files l lists/U", "src/R"}, []string{"log", "dst/R"}},
		{"bash --rcfile rc -i", []string{"rc"}, nil},
	} {
		a := Analyze(tc.src)
		var r, w []string
		for _, c := range a.Cmds {
			r = append(r, paths(c.Reads)...)
			w = append(w, paths(c.Writes)...)
		}
		slices.Sort(r)
		slices.Sort(w)
		wr, ww := slices.Clone(tc.reads), slices.Clone(tc.writes)
		slices.Sort(wr)
		slices.Sort(ww)
		if !slices.Equal(r, wr) || !slices.Equal(w, ww) {
			t.Errorf("%q: reads %q writes %q, want %q %q", tc.src, r, w, wr, ww)
		}
	}
}

// where renders each command's Where: name@dir|dir or name@?.
func where(a *Analysis) string {
	var parts []string
	for _, c := range a.Cmds {
		s := c.Name() + "@"
		if c.Where.Unknown {
			s += "?"
		} else {
			var ds []string
			for _, ch := range c.Where.Dirs {
				var ts []string
				for _, st := range ch {
					t := st.Target
					if st.Physical {
						t += "!"
					}
					ts = append(ts, t)
				}
				ds = append(ds, "/"+strings.Join(ts, "/"))
			}
			s += strings.Join(ds, "|")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// TestWhere: the directories each command may run in (class 2).
func TestWhere(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"cd sub && cat ../a", "cd@/ cat@/sub"},
		{"cd sub; cat ../a", "cd@/ cat@/sub|/"},
		{"cd sub || cat x; cat y", "cd@/ cat@/ cat@/sub|/"},
		{"(cd sub) && cat a", "cd@/ cat@/"},
		{"cd sub | cat a", "cd@/ cat@/"},
		{"{ cd sub; } && cat a", "cd@/ cat@/sub|/"},
		{"if cd a; then cat x; fi; cat y", "cd@/ cat@/a|/ cat@/a|/"},
		{"cd -P l && cd .. && cat x", "cd@/ cd@/l! cat@/l!/.."},
		{"command cd a && cat x", "cd@/ cat@/a"},
		{"timeout 5 cd a && cat x", "cd@/ cat@/"},
		{"cd $D && cat x", "cd@/ cat@?"},
		{"popd && cat x", "popd@/ cat@?"},
		{"pushd -n /x && cat y", "pushd@/ cat@/"},
		{"HOME=/x; cat ~/y", "@? cat@?"},
		{"CDPATH=/x cd y; cat z", "cd@? cat@?"},
		{"HOME=/x ls; cat y", "ls@? cat@/"},
		{"export HOME=/x; cat y", "export@/ cat@?"},
		{"export A=1; cat y", "export@/ cat@/"},
		{"read -r HOME; cat y", "read@/ cat@?"},
		{"printf -v PWD %s /x; cat y", "printf@/ cat@?"},
		{"for HOME in /x; do cat y; done", "cat@?"},
		{"set -P; cat y", "set@/ cat@?"},
		{"set -e; cat y", "set@/ cat@/"},
		{"shopt -s cdable_vars; cat y", "shopt@/ cat@?"},
		{"source f; cat y", "source@/ cat@?"},
		{"$X a; cat y", "$X@/ cat@?"},
		{"f() { cd /x; }; f; cat y", "cd@? f@? cat@?"},
		{"eval 'cd /x'; cat y", "eval@/ cd@/ cat@//x|/"},
		{"sh -c 'cd /x; cat y'; cat z", "sh@/ cd@/ cat@//x|/ cat@/"},
		{"env -C /x cat y", "cat@//x!"},
		{"env HOME=/x bash -c 'cat ~/y'", "bash@? cat@?"},
		{": ${CDPATH:=/}; cd etc && cat passwd", ":@/ cd@? cat@?"},
		{"echo $((HOME=1)); cat ~/x", "echo@/ cat@?"},
		{"echo ${HOME:-x}; cat y", "echo@/ cat@/"},
		{"sudo -D d cat y", "cat@/d!"},
		{"chroot /r cat y", "cat@?"},
		{"find . -execdir cat {} \\;", "find@/ cat@?"},
		{"find . -exec cat {} \\;", "find@/ cat@/"},
		{"trap 'cat y' EXIT; cat z", "trap@/ cat@? cat@?"},
		{"for d in a b; do cd $d; done; cat x", "cd@? cat@?"},
		{"for d in a b; do cd x; done; cat y", "cd@? cat@?"},
		{"while true; do cd x && break; done; cat y", "true@? cd@? break@? cat@?"},
		{"cat $(cd /x; cat y)", "cat@/ cd@/ cat@//x|/"},
		{"cat > out; cd a", "cat@/ cd@/"},
	} {
		if got := where(Analyze(tc.src)); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.src, got, tc.want)
		}
	}
	// Redirections open where their statement starts.
	a := Analyze("cd sub && { cat a; } > out")
	if len(a.RedirectWhere) != 1 || fmt.Sprint(a.RedirectWhere[0]) != "{[[{sub true false}]] false}" {
		t.Errorf("RedirectWhere = %v", a.RedirectWhere)
	}
}

// TestSubstitutedPayloads: text only known at run time in a payload
// (class 4) and runners that hand their command to a shell are
// unresolved; code run at expansion time (class 3) too.
func TestSubstitutedPayloads(t *testing.T) {
	for src, want := range map[string]bool{
		"xargs -I{} sh -c '{}'": true, "xargs -I '{}' sh -c 'echo {}'": true, "xargs -I % bash -c 'echo %'": true, "xargs -i sh -c 'x {}'": true,
		"xargs --replace=Z sh -c Z": true, "xargs -IQ Q": true, "find . -exec sh -c 'echo {}' \\;": true,
		"find . -execdir sh -c '{}' \\;": true, "find . -exec {} \\;": true, "watch 'ls; rm x'": true,
		"watch -x ls": false, "sudo -s 'rm x'": true, "sudo -u root ls": false, "env -S 'rm x'": true,
		"find . -exec cat {} \\;": false, "xargs -I{} cat {}": false, "echo ${x@P}": true,
		"printf -v 'a[$(id)]' x": true, "printf -v v x": false, "mapfile -C id a": true, "declare A=1": false,
		"declare -n r=x": true, "read 'a[$(id)]'": true, "shift 2": false, "hash -p /x ls": true,
		"f() { ls; }; f": false, "echo $((x+1))": true, "for ((i=0;i<2;i++)); do :; done": true, "enable -f x.so y": true,
	} {
		if got := Analyze(src).Unresolved; got != want {
			t.Errorf("Analyze(%q).Unresolved = %v, want %v", src, got, want)
		}
	}
}

// TestLoopBinding: a quoted reference to a loop variable over one word is
// that word; anything that may reassign it is not.
func TestLoopBinding(t *testing.T) {
	for src, want := range map[string]bool{
		"for f in sub/*.txt; do echo \"$f\"; done":                   true,
		"for f in sub/*.txt; do wc -l \"${f}\"; done":                true,
		"for f in a b; do echo \"$f\"; done":                         false,
		"for f in sub/*.txt; do echo $f; done":                       false,
		"for f in sub/*.txt; do read f; echo \"$f\"; done":           false,
		"for f in sub/*.txt; do f=x; echo \"$f\"; done":              false,
		"for f in $X; do echo \"$f\"; done":                          false,
		"for f in sub/*.txt; do echo \"${f:-x}\"; done":              false,
		"for f in sub/*.txt; do echo \"$f.bak\"; done":               false,
		"g() { f=/etc/passwd; }; for f in a; do g; cat \"$f\"; done": false,
	} {
		if got, why := ReadOnlySource(src); got != want {
			t.Errorf("ReadOnly(%q) = %v (%s), want %v", src, got, why, want)
		}
	}
}

// FuzzWhere: the flow never panics and its results are bounded.
func FuzzWhere(f *testing.F) {
	for _, s := range []string{"cd a && cat b", "cd a; cd b || cd c; cat d", "for x in a; do cd $x; done", "f() { cd x; }; f",
		"eval 'cd a; eval \"cd b\"'; cat c", "(cd a) | cd b && { cd c; } > o", "case x in a) cd y;& b) cd z;; esac; cat q",
		"env -C a sudo -D b cat c", "while cd a; do cd b; done"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		a := Analyze(src)
		if a.Err != nil {
			return
		}
		if len(a.RedirectWhere) != len(a.Script.Redirects) {
			t.Fatalf("%q: %d redirect places for %d redirects", src, len(a.RedirectWhere), len(a.Script.Redirects))
		}
		for _, c := range a.Cmds {
			w := c.Where
			if w.Unknown {
				continue
			}
			if len(w.Dirs) == 0 || len(w.Dirs) > maxDirs {
				t.Fatalf("%q: %s has %d directories", src, c.Name(), len(w.Dirs))
			}
			for _, ch := range w.Dirs {
				if len(ch) > maxSteps {
					t.Fatalf("%q: a chain of %d steps", src, len(ch))
				}
				for _, st := range ch {
					if !st.Literal {
						t.Fatalf("%q: a non-literal step in a known place", src)
					}
				}
			}
		}
	})
}

// TestMultiWordOption: an option that takes several words applies its
// effects to the word it names.
func TestMultiWordOption(t *testing.T) {
	s := spec(opRead, 0, `--pair=2@1:r --last=2:r --three=3@2:w`)
	r := s.scanArgs([]Word{{Value: "--pair"}, {Value: "a"}, {Value: "b"}, {Value: "--last"}, {Value: "c"}, {Value: "d"},
		{Value: "--three"}, {Value: "e"}, {Value: "f"}, {Value: "g"}, {Value: "op"}, {Value: "--last=x"}})
	var got []string
	for _, v := range r.values {
		got = append(got, v.flag+"="+v.val.Value+":"+v.eff)
	}
	if want := []string{"--pair=a:r", "--last=d:r", "--three=f:w"}; !slices.Equal(got, want) {
		t.Errorf("values %q, want %q", got, want)
	}
	if len(r.operands) != 1 || r.operands[0].Value != "op" || len(r.unknown) != 1 {
		t.Errorf("operands %v unknown %v", r.operands, r.unknown)
	}
}
