package shellparse

import (
	"strings"
	"testing"
)

func TestAnalyzeReadOnly(t *testing.T) {
	yes := []string{
		"ls", "ls -la", "ls -la *.go ~/x", "cat a b | grep -n foo | head -5", "wc -l < input",
		"grep -r 'x' . 2>/dev/null", "ls > /dev/null 2>&1", "echo hello", "printf '%s\\n' a",
		"pwd", "which go", "file x", "stat x", "du -sh .", "df -h", "uname -a", "date", "date +%s", "env",
		"find . -name '*.go' -type f", "find . -print0", "rg foo", "rg -n --glob '*.go' foo",
		"sed -n '1,20p' f", "sed -n '/re/p' f", "sed -n -e '5p' -e '$p' f", "sed -nE '1~2p;$=' f", "sed 's/a/b/g' f",
		"git status", "git diff HEAD~1", "git log --oneline -5", "git show HEAD:x", "git branch --list",
		"git branch -a", "git -C sub status", "git --no-pager log", "git config --get user.name", "git config user.name",
		"git config --list", "git config get user.name",
		"git stash list", "git tag", "git tag -l 'v*'", "git remote -v", "git rev-parse HEAD", "git status --porcelain=v1 -uno",
		"LANG=C ls", "TZ=UTC date", "ls && pwd; echo ok || true", "(ls; pwd)", "{ ls; pwd; }",
		"if test -f x; then cat x; else echo none; fi", "for f in a b; do wc -l f; done",
		"[[ -f x ]] && cat x", "command -v go", "sort -n f", "uniq f", "jq .a f", "jq --arg k v '.[$k]' f", "", "# comment",
		"echo x >&2", "sort -r f | uniq -c", "! grep x f", "time ls", "timeout 5 ls", "nice -n 5 cat f",
		"head -5 f", "tail -n +3 f", "awk '{print $1}' f", "awk -F: '$3 == 0 {print}' f", "cd src", "cd src && ls", "cd /x && ls", "pushd x",
		"sort --rev f", "diff -ru a b", "cat <<'EOF'\nhello\nEOF\n",
	}
	for _, src := range yes {
		if ok, why := ReadOnlySource(src); !ok {
			t.Errorf("ReadOnly(%q) = false (%s), want true", src, why)
		}
	}
	no := map[Class][]string{
		Runs: {
			// Case 10: find actions that execute.
			"find . -exec sh -c 'x' \\;", "find . -exec rm {} +", "find . -execdir rm {} \\;", "find . -ok rm {} \\;",
			"find . -okdir rm {} \\;", "find . -name x -o -exec id \\;",
			"sed 'e id' f", "sed -n '1e id' f", "sed -n 's/a/id/e' f",
			"awk 'BEGIN{system(\"id\")}'", "git --exec-path=/tmp status",
			"env sudo rm -f /etc/passwd", "env ls", "env -i ls", "sudo ls", "xargs ls", "watch ls", "setsid ls",
			"eval ls", "source x", ". x", "rg --pre sh x", "rg --pre=sh x", "rg --hostname-bin=x x", "sort --compress-program=sh f",
			"sh -c 'ls'; bash x.sh", "bash < script", "git diff --ext-diff", "git log --show-signature", "git grep -O x",
			"git grep --open-files-in-pager=vim x", "rsync -e 'ssh -p 2' a b:c", "trap 'rm x' EXIT", "flock l ls", "sh -c 'ls -la'", "bash -c \"git status && pwd\"", "eval 'ls -la'",
		},
		Writes: {
			"find . -delete", "find . -fprint /tmp/x", "find . -fprint0 /tmp/x", "find . -fprintf /tmp/x %p", "find . -fls /tmp/x",
			"sed -i s/a/b/ f", "sed -i.bak s/a/b/ f", "sed --in-place s/a/b/ f", "sed 'w /tmp/x' f", "sed -n 'w /tmp/x' f",
			"sed -n 's/a/b/w /tmp/x' f", "sed -n '1W /tmp/x' f", "awk '{print > \"f\"}'",
			"git diff --output=/tmp/x", "git log --output /tmp/x", "git commit -m x", "git branch -D x",
			"git branch new", "git tag v1", "git config user.name x", "git config --unset user.name", "git stash",
			"git reflog expire --all", "git remote add o u", "git fetch",
			"cat x > out", "ls >> out", "echo k >> ~/.ssh/authorized_keys", "cat > ~/.bashrc <<'EOF'\nx\nEOF\n", "ls &> out",
			"ls 2> err", "ls >| out", "cat <> f", "{ ls; } > out",
			"sort -o out f", "sort --output=out f", "sort --out=out f", "tree -o out", "file -C -m m", "uniq a b", "rm -rf x",
			"cp a b", "mv a b", "touch x", "mkdir x", "tee x", "dd if=a of=b", "nohup ls", "truncate -s0 f",
			"cp -t /tmp a", "cp --target-directory=/tmp a", "cp --target=/tmp a", "install -tDIR a",
		},
		Network: {"git push", "curl x | sh", "wget -O- x", "git ls-remote", "ssh host ls", "git remote show origin", "rsync a host:b"},
		Destructive: {"rm x", "find . -delete", "mv a b", "rsync -a --delete a/ b/", "git clean -fdx", "git reset --hard",
			"shred f", "dd of=/dev/sda", "git push --force", "mv -t /tmp a"},
		Opaque: {
			"find * -name x", "find $D -name x", "sed 's/a/b/' $F", "sed -n -f script.sed f", "sed -n \"$S\" f",
			"gawk 1 f -e x", "git -c core.pager='sh -c x' log", "git -c core.fsmonitor=x status", "git --config-env=a=b status",
			"git -cfoo=bar status", "git $SUB", "git log --exec=x", "git foo", "git --git-dir=/x log", "git -p log",
			"echo $(id)", "echo `id`", "echo \"$(id)\"", "diff <(cat ~/.ssh/id_rsa) x", "ls & pwd", "echo $(( x ))",
			"echo ${x@P}", "cat <<EOF\n$(id)\nEOF\n", "echo $HOME", "echo $'\\x41'", "ls {a,b}", "ls $IFS x",
			"PATH=/tmp ls", "LD_PRELOAD=/tmp/x.so ls", "BASH_ENV=/tmp/x ls", "GIT_EXTERNAL_DIFF=x git diff", "IFS=x ls",
			"PROMPT_COMMAND=x ls", "X=1", "LANG=$X ls", "$CMD", "./ls", "/bin/ls", "l\"s\"x", "\"$(id)\"",
			"f() { ls; }; f", "alias ls=rm", "date -s 2020-01-01", "date 010101012020", "printf -v PATH x", "hostname evil",
			"cd -", "trap -p", "cd $OLDPWD", "popd", "python3 -c x", "make", "npm test",
			"ls | | wc", "ls &&", "&& ls", strings.Repeat("true; ", 60) + "curl x|sh", strings.Repeat("ls;", MaxLen),
			"test -v 'a[$(id)]'", "[ -v x ]", "[[ -v a[1] ]]", "(( a[$(id)] ))", "let x=1", "cat --frobnicate f",
			"ls --colour-scheme=x", "grep -Z -j x", "cat -- $f", "echo hi # c \\\nrm -rf /", "exec 3>&$fd",
			"sh -c \"$x\"", "eval \"$x\"", "bash", "sudo --weird rm x", "xargs -n1 rm < list", "command ls $x",
			"sed --posix -z 'k' f", "awk -f prog f", "git log --out=/tmp/x",
		},
	}
	for class, srcs := range no {
		for _, src := range srcs {
			a := Analyze(src)
			ok, why := a.ReadOnly()
			if ok {
				t.Errorf("ReadOnly(%q) = true, want false (%v)", src, class)
				continue
			}
			if a.Class&class == 0 {
				t.Errorf("Analyze(%q).Class = %v, want it to include %v (%s)", src, a.Class, class, why)
			}
			if why == "" {
				t.Errorf("Analyze(%q): no reason", src)
			}
		}
	}
}

// TestAnalyzePaths: operands and option values land in Reads and Writes.
func TestAnalyzePaths(t *testing.T) {
	tests := []struct {
		src           string
		reads, writes []string
	}{
		{"cat a b", []string{"a", "b"}, nil},
		{"cp -t DIR a b", []string{"a", "b"}, []string{"DIR"}},
		{"cp -tDIR a", []string{"a"}, []string{"DIR"}},
		{"cp --target-directory=DIR a", []string{"a"}, []string{"DIR"}},
		{"cp a b c", []string{"a", "b"}, []string{"c"}},
		{"mv a b", nil, []string{"b", "a"}},
		{"dd if=in of=out bs=1M", []string{"in"}, []string{"out"}},
		{"sort -o out in", []string{"in"}, []string{"out"}},
		{"sort -oout in", []string{"in"}, []string{"out"}},
		{"curl -o f https://x", nil, []string{"f"}},
		{"grep -e pat f g", []string{"f", "g"}, nil},
		{"grep pat f", []string{"f"}, nil},
		{"grep -r pat", []string{"."}, nil},
		{"rg pat src", []string{"src"}, nil},
		{"find a b -name x", []string{"a", "b"}, nil},
		{"find a -delete", []string{"a"}, []string{"a"}},
		{"sed -i s/a/b/ f", nil, []string{"f"}},
		{"tee -a log", nil, []string{"log"}},
		{"echo x > out < in", []string{"in"}, []string{"out"}},
		{"git show HEAD:x", []string{"."}, nil},
		{"git -C sub status", []string{"sub"}, nil},
		{"wc --files0-from=list", []string{"list", "wc --files0-from: the files list lists"}, nil},
		{"ln -s target link", []string{"target"}, []string{"link"}}, // a link source is read (links.go)
		{"chmod 644 f g", nil, []string{"f", "g"}},
		{"rsync -a src/ dst/", []string{"src/"}, []string{"dst/"}},
	}
	for _, tt := range tests {
		a := Analyze(tt.src)
		var reads, writes []string
		for _, c := range a.Cmds {
			for _, p := range c.Reads {
				reads = append(reads, p.Value)
			}
			for _, p := range c.Writes {
				writes = append(writes, p.Value)
			}
		}
		if strings.Join(reads, ",") != strings.Join(tt.reads, ",") || strings.Join(writes, ",") != strings.Join(tt.writes, ",") {
			t.Errorf("%q: reads %q writes %q, want %q %q", tt.src, reads, writes, tt.reads, tt.writes)
		}
	}
}

// TestAnalyzeForms: the forms rules match (wrappers, runners, git
// globals, payloads).
func TestAnalyzeForms(t *testing.T) {
	tests := []struct {
		src   string
		forms []string // per command: Words | Inner | Canon
	}{
		{"timeout 30 rm -rf b", []string{"rm -rf b|rm -rf b|"}},
		{"env FOO=1 nice rm x", []string{"env FOO=1 nice rm x|rm x|"}},
		{"git -C . -c a=b push origin", []string{"git -C . -c a=b push origin|git -C . -c a=b push origin|git push origin"}},
		{"sh -c 'rm x; ls'", []string{"sh -c rm x; ls|sh -c rm x; ls|", "rm x|rm x|", "ls|ls|"}},
		{"find . -exec rm {} +", []string{"find . -exec rm {} +|find . -exec rm {} +|", "rm {}|rm {}|"}},
		{"xargs -0 rm", []string{"xargs -0 rm|rm {input}|"}},
		{"xargs grep x", []string{"grep x {input}|grep x {input}|"}},
		{"sudo -u root -- rm x", []string{"sudo -u root -- rm x|rm x|"}},
		{"eval 'rm x'", []string{"eval rm x|eval rm x|", "rm x|rm x|"}},
	}
	join := func(ws []Word) string {
		var o []string
		for _, w := range ws {
			o = append(o, w.Value)
		}
		return strings.Join(o, " ")
	}
	for _, tt := range tests {
		a := Analyze(tt.src)
		var got []string
		for _, c := range a.Cmds {
			got = append(got, join(c.Words)+"|"+join(c.Inner)+"|"+join(c.Canon))
		}
		if strings.Join(got, "\n") != strings.Join(tt.forms, "\n") {
			t.Errorf("%q:\n got %q\nwant %q", tt.src, got, tt.forms)
		}
	}
}

func TestAnalyzeXargsEscalates(t *testing.T) {
	for src, want := range map[string]bool{"xargs head -n1": false, "xargs wc -l": true, "xargs rg x": true, "xargs -0 rm": true, "xargs sed -n p": true, "xargs mystery": true} {
		a := Analyze(src)
		if got := a.Cmds[0].Escalated; got != want {
			t.Errorf("Analyze(%q).Cmds[0].Escalated = %v, want %v", src, got, want)
		}
	}
}

// TestAnalyzeUnresolved: what rules cannot be matched against.
func TestAnalyzeUnresolved(t *testing.T) {
	for src, want := range map[string]bool{
		"ls": false, "sh -c 'rm x'": false, "sh -c \"$x\"": true, "eval \"$x\"": true, "$CMD x": true, "bash x.sh": true,
		"sudo --weird rm x": true, "ssh h rm x": true, "echo # c \\\nrm x": true, "git $x push": true, "source f": true,
		"ls &&": true, "find . -exec rm {} +": false,
	} {
		if got := Analyze(src).Unresolved; got != want {
			t.Errorf("Analyze(%q).Unresolved = %v, want %v", src, got, want)
		}
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"ls -la", "git status", "sed -n '1,5p' f", "find . -name x", "echo $(id)", "cat > f", "ls 2>/dev/null",
		"cat <<EOF\n$(id)\nEOF\n", "diff <(a) b", "git -c x=y log", "LANG=C ls | wc -l", "sed -n '/a/p;$=' f",
		"sh -c 'sh -c \"eval ls\"'", "find . -exec sh -c 'rm {}' \\;", "timeout 1 env X=1 sudo -u u rm -rf /",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		a := Analyze(src)
		ok, why := a.ReadOnly()
		if a.Err != nil {
			if ok {
				t.Fatalf("%q: unparsable but read-only", src)
			}
			return
		}
		if !ok {
			if why == "" {
				t.Fatalf("%q: not read-only without a reason", src)
			}
			return
		}
		s := a.Script
		if s.HasCommandSubst || s.HasProcessSubst || s.Complex || s.HasBackground || a.Unresolved {
			t.Fatalf("%q: read-only despite substitution/complex/background/unresolved", src)
		}
		for _, r := range s.Redirects {
			if r.Write && !r.IsDevNull() {
				t.Fatalf("%q: read-only despite a redirect to %s", src, r.Target)
			}
		}
		for _, c := range a.Cmds {
			if len(c.Writes) > 0 {
				t.Fatalf("%q: read-only with writes %v", src, c.Writes)
			}
			if len(c.Command.Words) > 0 && c.Command.Words[0].Dynamic {
				t.Fatalf("%q: read-only with a dynamic command name", src)
			}
		}
	})
}

// BenchmarkAnalyze10: a 10-command line (target ≤ 50 µs).
func BenchmarkAnalyze10(b *testing.B) {
	parts := []string{"git status", "ls -la src", "grep -rn TODO . | head -20", "cat go.mod", "wc -l *.go"}
	var sb strings.Builder
	n := 0
	for i := 0; n < 10; i++ {
		if i > 0 {
			sb.WriteString(" && ")
		}
		p := parts[i%len(parts)]
		sb.WriteString(p)
		n += strings.Count(p, "|") + 1
	}
	src := sb.String()
	if got := len(Analyze(src).Cmds); got != 10 {
		b.Fatalf("%d commands, want 10", got)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if ok, why := Analyze(src).ReadOnly(); !ok {
			b.Fatal(why)
		}
	}
}

func TestAnalyzeChangesDir(t *testing.T) {
	for src, want := range map[string]bool{
		"ls":                        false,
		"git status && ls -la":      false,
		"cd sub && ls":              true,
		"cd":                        true,
		"ls; pushd /tmp":            true,
		"popd":                      true,
		"(cd sub && ls)":            true, // not proved to stay in the subshell
		"builtin cd sub":            true,
		"command cd sub":            true,
		"eval 'cd sub'":             true,
		"sh -c 'cd sub && ls'":      true,
		"echo cd":                   false,
		"ls cd":                     false,
		"ls |":                      true, // not understood
		"find . -name cd -print":    false,
		"if true; then cd x; fi":    true,
		"for d in a b; do ls; done": false,
	} {
		if got := Analyze(src).ChangesDir(); got != want {
			t.Errorf("ChangesDir(%q) = %v, want %v", src, got, want)
		}
	}
}
