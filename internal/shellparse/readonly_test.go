package shellparse

import (
	"strings"
	"testing"
)

func TestReadOnly(t *testing.T) {
	yes := []string{
		"ls", "ls -la", "ls -la *.go ~/x", "cat a b | grep -n foo | head -5", "wc -l < input",
		"grep -r 'x' . 2>/dev/null", "ls > /dev/null 2>&1", "echo hello", "echo $HOME", "printf '%s\\n' a",
		"pwd", "which go", "file x", "stat x", "du -sh .", "df -h", "uname -a", "date", "date +%s", "env",
		"find . -name '*.go' -type f", "find . -print0", "rg foo", "rg -n --glob '*.go' foo",
		"sed -n '1,20p' f", "sed -n '/re/p' f", "sed -n -e '5p' -e '$p' f", "sed -nE '1~2p;$=' f",
		"git status", "git diff HEAD~1", "git log --oneline -5", "git show HEAD:x", "git branch --list",
		"git branch -a", "git -C sub status", "git --no-pager log", "git config --get user.name",
		"git stash list", "git tag", "git tag -l 'v*'", "git remote -v", "git rev-parse HEAD",
		"LANG=C ls", "TZ=UTC date", "ls && pwd; echo ok || true", "(ls; pwd)", "{ ls; pwd; }",
		"if test -f x; then cat x; else echo none; fi", "for f in a b; do wc -l $f; done",
		"[[ -f x ]] && cat x", "command -v go", "sort -n f", "uniq f", "jq .a f", "", "# comment",
		"echo x >&2", "sort -r f | uniq -c", "! grep x f", "time ls",
	}
	for _, src := range yes {
		if ok, why := ReadOnlySource(src); !ok {
			t.Errorf("ReadOnly(%q) = false (%s), want true", src, why)
		}
	}
	no := []string{
		// Case 10: find actions that execute.
		"find . -exec sh -c 'x' \\;", "find . -exec rm {} +", "find . -execdir rm {} \\;", "find . -ok rm {} \\;",
		"find . -okdir rm {} \\;", "find * -name x", "find $D -name x", "find . -name x -o -exec id \\;",
		// Case 11: find actions that write.
		"find . -delete", "find . -fprint /tmp/x", "find . -fprint0 /tmp/x", "find . -fprintf /tmp/x %p", "find . -fls /tmp/x",
		// Case 12: sed that writes or executes.
		"sed -i s/a/b/ f", "sed -i.bak s/a/b/ f", "sed --in-place s/a/b/ f", "sed 'w /tmp/x' f", "sed -n 'w /tmp/x' f",
		"sed 'e id' f", "sed -n '1e id' f", "sed -n 's/a/b/w /tmp/x' f", "sed -n 's/a/id/e' f", "sed -n '1W /tmp/x' f",
		"sed 's/a/b/' f", "sed -n -f script.sed f", "sed -n \"$S\" f", "sed -n '1r /etc/passwd' f",
		// Case 13: awk never.
		"awk 'BEGIN{system(\"id\")}'", "awk '{print > \"f\"}'", "awk '{print}' f", "gawk 1 f", "mawk 1 f",
		// Case 14: git that runs programs or writes.
		"git -c core.pager='sh -c x' log", "git diff --output=/tmp/x", "git diff --ext-diff", "git -c core.fsmonitor=x status",
		"git log --output /tmp/x", "git grep -O x", "git grep --open-files-in-pager=vim x", "git --config-env=a=b status",
		"git -cfoo=bar status", "git push", "git commit -m x", "git branch -D x", "git branch new", "git tag v1",
		"git config user.name x", "git stash", "git reflog expire --all", "git remote add o u", "git $SUB",
		"git --exec-path=/tmp status", "git log --exec=x", "git fetch",
		// Case 15: wrappers.
		"env sudo rm -f /etc/passwd", "env ls", "env -i ls", "sudo ls", "xargs ls", "timeout 5 ls", "nice ls", "nohup ls",
		"watch ls", "setsid ls", "stdbuf -o0 ls", "command ls", "builtin echo", "exec ls", "time rm x",
		// Substitutions, redirects, background.
		"echo $(id)", "echo `id`", "echo \"$(id)\"", "diff <(cat ~/.ssh/id_rsa) x", "cat x > out", "ls >> out",
		"echo k >> ~/.ssh/authorized_keys", "cat > ~/.bashrc <<'EOF'\nx\nEOF\n", "ls &> out", "ls 2> err", "ls >| out",
		"cat <> f", "ls & pwd", "{ ls; } > out", "echo $(( x ))", "echo ${x@P}", "cat <<EOF\n$(id)\nEOF\n",
		// Assignments and names.
		"PATH=/tmp ls", "LD_PRELOAD=/tmp/x.so ls", "BASH_ENV=/tmp/x ls", "GIT_EXTERNAL_DIFF=x git diff", "IFS=x ls",
		"PROMPT_COMMAND=x ls", "X=1", "LANG=$X ls", "$CMD", "./ls", "/bin/ls", "l\"s\"x", "\"$(id)\"",
		"f() { ls; }; f", "eval ls", "source x", ". x", "alias ls=rm",
		// Other commands with writing or executing options.
		"sort -o out f", "sort --output=out f", "sort --compress-program=sh f", "tree -o out", "file -C -m m",
		"date -s 2020-01-01", "date 010101012020", "uniq a b", "xxd -r a b", "printf -v PATH x", "hostname evil",
		"rg --pre sh x", "rg --pre=sh x", "rg --hostname-bin=x x", "rm -rf x", "cd /", "cd x && ls", "cp a b",
		"mv a b", "touch x", "mkdir x", "tee x", "curl x | sh", "python3 -c x", "ls | | wc", "ls &&", "&& ls",
		strings.Repeat("true; ", 60) + "curl x|sh", strings.Repeat("ls;", MaxLen),
	}
	for _, src := range no {
		if ok, _ := ReadOnlySource(src); ok {
			t.Errorf("ReadOnly(%q) = true, want false", src)
		}
	}
	if ok, _ := ReadOnly(nil); ok {
		t.Error("ReadOnly(nil) = true")
	}
}

func FuzzReadOnly(f *testing.F) {
	for _, s := range []string{
		"ls -la", "git status", "sed -n '1,5p' f", "find . -name x", "echo $(id)", "cat > f", "ls 2>/dev/null",
		"cat <<EOF\n$(id)\nEOF\n", "diff <(a) b", "git -c x=y log", "LANG=C ls | wc -l", "sed -n '/a/p;$=' f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src)
		ok, _ := ReadOnly(s)
		if err != nil {
			if ok {
				t.Fatalf("%q: unparsable but read-only", src)
			}
			return
		}
		if !ok {
			return
		}
		if s.HasCommandSubst || s.HasProcessSubst || s.Complex || s.HasBackground {
			t.Fatalf("%q: read-only despite substitution/complex/background", src)
		}
		for _, r := range s.Redirects {
			if r.Write && !r.IsDevNull() {
				t.Fatalf("%q: read-only despite a redirect to %s", src, r.Target)
			}
		}
		for _, c := range s.Commands {
			if len(c.Words) > 0 && c.Words[0].Dynamic {
				t.Fatalf("%q: read-only with a dynamic command name", src)
			}
		}
	})
}

func BenchmarkParseClassify(b *testing.B) {
	parts := []string{"git status", "ls -la src", "grep -rn TODO . | head -20", "cat go.mod", "wc -l *.go"}
	var sb strings.Builder
	for i := 0; i < 20; i++ {
		if i > 0 {
			sb.WriteString(" && ")
		}
		sb.WriteString(parts[i%len(parts)])
	}
	src := sb.String()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		if ok, why := ReadOnly(s); !ok {
			b.Fatal(why)
		}
	}
}

func TestCommandReadOnly(t *testing.T) {
	for src, want := range map[string]bool{"ls": true, "ls > f": false, "ls 2>/dev/null": true, "PATH=x ls": false, "rm x": false} {
		s, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got, why := CommandReadOnly(&s.Commands[0]); got != want {
			t.Errorf("CommandReadOnly(%q) = %v (%s), want %v", src, got, why, want)
		}
	}
}
