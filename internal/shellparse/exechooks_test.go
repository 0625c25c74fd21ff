package shellparse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnalyzeExecHooks(t *testing.T) {
	for _, c := range []struct {
		src       string
		readOnly  bool
		escalated bool
		class     Class // bits that must be set
	}{
		{"tar tf x.tar", true, false, 0},
		{"tar -tvzf x.tgz a b", true, false, 0},
		{"tar --list --file=x.tar", true, false, 0},
		{"tar -xOf x.tar a", true, false, 0},
		{"tar xf x.tar", false, true, Writes},
		{"tar -C out -xf x.tar", false, true, Writes},
		{"tar cf o.tar src", false, false, Writes},
		{"tar --to-command=id -xf x.tar", false, true, Runs},
		{"tar --to-com=id -xf x.tar", false, true, Runs},
		{"tar -cf o.tar --checkpoint-action=exec=id src", false, true, Runs},
		{"tar -cf o.tar --checkpoint-action=dot src", false, false, Writes},
		{"tar -tIid -f x", false, true, Runs},
		{"tar tIf id x.tar", false, true, Runs},
		{"tar -F ./s -tf x.tar", false, true, Runs},
		{"tar --new-volume-script=s -tf x", false, true, Runs},
		{"tar --rsh-command=id -tf h:x", false, true, Runs},
		{"tar --rmt-command=id -tf x", false, true, Runs},
		{"tar tf host:x.tar", false, true, Network | Runs},
		{"tar tf ./host:x.tar", true, false, 0},
		{"tar --force-local -tf host:x.tar", true, false, 0},
		{"tar -tf x.tar --weird", false, true, Opaque},
		{"tar x.tar", false, true, Opaque},
		{"tar -M -tf x", false, true, Opaque},
		{"env -S 'sh -c id'", false, true, Runs},
		{"env FOO=1 ls", false, true, Opaque},
		{"env LANG=C ls", false, false, Runs}, // env is a runner: never read-only
		{"LANG=C ls", true, false, 0},
		{"LC_MESSAGES=C ls", true, false, 0},
		{"LC_MESSAGES=/x ls", false, false, Opaque},
		{"TZ=UTC date", true, false, 0},
		{"TZ=:/etc/localtime date", false, false, Opaque},
		{"COLUMNS=80x ls", false, false, Opaque},
		{"rsync -avze 'sh -c id' a b", false, true, Runs},
		{"rsync -essh a host:b", false, true, Runs},
		{"git rebase -x id main", false, true, Runs},
		{"git rebase --interactive main", false, true, Runs},
		{"git commit -m x", false, false, Runs | Writes},
		{"git bisect run make test", false, true, Runs},
		{"git bisect start", false, false, Runs | Writes},
		{"git submodule foreach 'git pull'", false, true, Runs},
		{"git submodule update", false, false, Runs},
		{"git --bare log", false, true, Opaque},
		{"git clone 'ext::sh -c id' x", false, true, Runs},
		{"git fetch fd::3", false, true, Runs},
		{"git commit -m 'fix Foo::bar'", false, false, Runs | Writes},
		{"git merge -s ours x", false, false, Runs | Writes},
		{"git merge -s evil x", false, true, Runs},
		{"git pull --rebase origin main", false, false, Runs | Network},
		{"git send-email --smtp-server=./s x.patch", false, true, Runs},
		{"git send-email --to-cmd=id x.patch", false, true, Runs},
		{"git -C sub log", true, false, 0},
		{"git status", true, false, 0},
		{"for f in a b; do ls $f; done", false, false, Opaque}, // $f is a dynamic operand
		{"for f in a b; do ls; done", true, false, 0},
		{"for PATH in ./bin; do ls; done", false, false, Opaque},
		{"for LD_PRELOAD in ./x.so; do ls; done", false, false, Opaque},
		{"select IFS in a; do ls; done", false, false, Opaque},
		{"for http_proxy in x; do ls; done", false, false, Opaque},
		{"[[ ${CDPATH:=/} ]] && ls", false, false, Opaque},
		{"case ${PATH=./bin} in *) ls;; esac", false, false, Opaque},
		{"[[ ${lang:=x} ]] && ls", true, false, 0},
	} {
		a := Analyze(c.src)
		ok, why := a.ReadOnly()
		if ok != c.readOnly {
			t.Errorf("%q: read-only %v (%s), want %v", c.src, ok, why, c.readOnly)
			continue
		}
		if len(a.Cmds) == 0 {
			t.Fatalf("%q: no commands", c.src)
		}
		if a.Cmds[0].Escalated != c.escalated {
			t.Errorf("%q: escalated %v, want %v (%s)", c.src, a.Cmds[0].Escalated, c.escalated, a.Cmds[0].Why())
		}
		if a.Class&c.class != c.class {
			t.Errorf("%q: class %v lacks %v", c.src, a.Class, c.class)
		}
	}
}

func TestAnalyzeTransfer(t *testing.T) {
	transfer := func(src string) []string {
		var out []string
		for _, c := range Analyze(src).Cmds {
			for _, p := range append(append([]Path{}, c.Reads...), c.Writes...) {
				if p.Transfer {
					out = append(out, p.Value)
				}
			}
		}
		return out
	}
	for src, want := range map[string]string{
		"ln .git/config x":              ".git/config",
		"ln -s ../.env sub/x":           "../.env .env", // the link in sub/ reaches ./.env
		"ln -st dir a b":                "a dir/a b dir/b",
		"cp -al .git x":                 ".git",
		"mv a b c":                      "a b",
		"git mv .envrc x":               ".envrc",
		"rsync -a --link-dest=ref a/ b": "ref b/ref a/",
		"install -m 644 f /usr/bin/f":   "f",
	} {
		if got := strings.Join(transfer(src), " "); got != want {
			t.Errorf("%q: transfer paths %q, want %q", src, got, want)
		}
	}
}

// tarExecLong are tar's long options that run a program.
var tarExecLong = []string{"--to-command", "--checkpoint-action", "--use-compress-program", "--info-script",
	"--new-volume-script", "--rsh-command", "--rmt-command"}

// FuzzExecHooks: words after tar, git rebase, rsync and an assignment.
// Whatever they are, a read-only tar line holds no option that runs a
// program, a read-only assignment is on the inert list with a value that
// is no path, and git rebase/rsync with an exec option is escalated.
func FuzzExecHooks(f *testing.F) {
	for _, s := range []string{"tf x.tar", "-tIid -f x", "--to-com=x -xf a", "-tf h:x", "LANG=C", "TZ=../x",
		"-x id main", "-ix id", "--exe=id", "-avze id a b", "-tvf x --checkpoint-action=exec=id"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, words string) {
		fields := strings.Fields(words)
		quoted := make([]string, len(fields))
		for i, w := range fields {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", "") + "'"
			fields[i] = strings.ReplaceAll(w, "'", "")
		}
		args := strings.Join(quoted, " ")
		if ok, _ := Analyze("tar " + args).ReadOnly(); ok {
			for i, w := range fields {
				if w == "--" {
					break
				}
				name, _, _ := strings.Cut(w, "=")
				if fs, exact := commands["tar"].long[name]; exact && fs.eff != "x" && fs.eff != "K" {
					continue // --checkpoint is not --checkpoint-action
				}
				_, val, _ := strings.Cut(w, "=")
				for _, x := range tarExecLong {
					if x == "--checkpoint-action" && !strings.HasPrefix(val, "exec") {
						continue // only its exec= action runs a program
					}
					if strings.HasPrefix(w, "--") && len(name) >= 3 && strings.HasPrefix(x, name) {
						t.Fatalf("tar %s: read-only with %s", args, w)
					}
				}
				cluster := w
				if i == 0 && !strings.HasPrefix(w, "-") {
					cluster = "-" + w // old style
				}
				if strings.HasPrefix(cluster, "-") && !strings.HasPrefix(cluster, "--") {
					for _, c := range cluster[1:] {
						if c == 'I' || c == 'F' {
							t.Fatalf("tar %s: read-only with -%c", args, c)
						}
						if strings.ContainsRune(tarArgLetters, c) {
							break
						}
					}
				}
			}
		}
		if len(fields) > 0 && isAssignWord(fields[0]) {
			src := fields[0] + " ls"
			if ok, _ := Analyze(src).ReadOnly(); ok {
				name, value, _ := strings.Cut(fields[0], "=")
				if _, listed := inertVars()[name]; !listed && !strings.HasPrefix(name, "LC_") {
					t.Fatalf("%q: read-only with %s, not on the inert list", src, name)
				}
				if strings.HasPrefix(strings.TrimPrefix(value, ":"), "/") || strings.Contains(value, "..") {
					t.Fatalf("%q: read-only with a path value", src)
				}
			}
		}
		for _, pre := range []string{"git rebase ", "rsync "} {
			a := Analyze(pre + args)
			exec := false
			for _, w := range fields {
				if w == "--" {
					break
				}
				name, _, _ := strings.Cut(w, "=")
				switch {
				case pre == "git rebase " && strings.HasPrefix(w, "--") && len(name) >= 3 && strings.HasPrefix("--exec", name):
					exec = true
				case pre == "git rebase " && strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.ContainsAny(w, "xi"):
					exec = exec || strings.IndexAny(w, "xi") < strings.IndexAny(w+"s", "s")
				case pre == "rsync " && (name == "--rsh" || name == "--rsync-path"):
					exec = true
				case pre == "rsync " && strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--"):
					if j := strings.IndexAny(w[1:], rsyncShortArgs); j >= 0 && w[1+j] == 'e' {
						exec = true
					}
				}
			}
			if exec && len(a.Cmds) > 0 && !a.Cmds[0].Escalated {
				t.Fatalf("%s%s: an exec option, not escalated (%s)", pre, args, a.Cmds[0].Why())
			}
		}
	})
}

// TestGitRepoRiskFinds: every configuration file git reads for a
// repository is looked at, and a bare repository or alternates are risky
// whatever their configuration says.
func TestGitRepoRiskFinds(t *testing.T) {
	root := t.TempDir()
	write := func(p, data string) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plain/.git/config", "[core]\n\tbare = false\n")
	write("plain/.git/HEAD", "ref: refs/heads/main\n")
	write("bare/HEAD", "ref: refs/heads/main\n")
	write("bare/objects/.keep", "")
	write("bare/refs/.keep", "")
	write("bare/config", "[core]\n\tbare = true\n")
	write("wt/.git/config", "[extensions]\n\tworktreeConfig = true\n")
	write("wt/.git/config.worktree", "[diff]\n\texternal = id\n")
	write("common/.git/commondir", "../../commonrepo\n")
	write("commonrepo/config", "[filter \"x\"]\n\tclean = id\n")
	write("mods/.git/config", "[core]\n")
	write("mods/.git/modules/lib/config", "[core]\n\tfsmonitor = id\n")
	write("alt/.git/config", "[core]\n")
	write("alt/.git/objects/info/alternates", "/elsewhere/objects\n")
	write("inc/.git/config", "[include]\n\tpath = ../evil\n")
	for dir, want := range map[string]string{
		"plain": "", "plain/sub": "", "bare": "core.bare", "bare/refs": "core.bare", "wt": "diff.external",
		"common": "filter.x.clean", "mods": "core.fsmonitor", "alt": "alternates", "inc": "include.path",
	} {
		got, err := GitRepoRisk(filepath.Join(root, dir))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("GitRepoRisk(%s) = %q, want %q", dir, got, want)
		}
	}
}
