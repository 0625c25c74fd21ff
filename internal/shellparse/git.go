package shellparse

import "strings"

const (
	gitDiffOpts = `-p -u -s -z -U= -M -C -B -D -R -W -w -b -a -S= -G= -O=:r -l= -# -m -c -t -r -q
		--patch --no-patch --unified= --raw --patch-with-raw --patch-with-stat --stat=? --numstat --shortstat --dirstat=?
		--summary --name-only --name-status --compact-summary --check --full-index --binary --abbrev=? --no-abbrev
		--break-rewrites=? --find-renames=? --find-copies=? --find-copies-harder --irreversible-delete --diff-filter=
		--pickaxe-all --pickaxe-regex --skip-to= --rotate-to= --relative=? --no-relative --text --ignore-cr-at-eol
		--ignore-space-at-eol --ignore-space-change --ignore-all-space --ignore-blank-lines --ignore-matching-lines=
		--inter-hunk-context= --function-context --exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules=?
		--src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix= --ita-invisible-in-index
		--ita-visible-in-index --color=? --no-color --color-moved=? --no-color-moved --color-moved-ws= --color-words=?
		--word-diff=? --word-diff-regex= --minimal --patience --histogram --anchored= --diff-algorithm=
		--indent-heuristic --no-indent-heuristic --no-renames --rename-empty --no-rename-empty --output-indicator-new=
		--output-indicator-old= --output-indicator-context= --cached --staged --merge-base --submodule=? --stat-width=
		--stat-name-width= --stat-count= --stat-graph-width=
		--no-index:o --ext-diff:x --textconv:x --output=:w`
	gitLogOpts = gitDiffOpts + ` -n= -i -E -F -P -L= -g --oneline --graph --decorate=? --no-decorate --decorate-refs=
		--decorate-refs-exclude= --all --branches=? --tags=? --remotes=? --glob= --exclude= --abbrev-commit
		--no-abbrev-commit --format= --pretty=? --since= --until= --after= --before= --since-as-filter= --author=
		--committer= --grep= --all-match --invert-grep --regexp-ignore-case --basic-regexp --extended-regexp
		--fixed-strings --perl-regexp --reverse --first-parent --merges --no-merges --min-parents= --max-parents=
		--no-min-parents --no-max-parents --follow --date= --max-count= --skip= --full-history --simplify-by-decoration
		--simplify-merges --dense --sparse --left-right --left-only --right-only --cherry-pick --cherry-mark --cherry
		--boundary --topo-order --date-order --author-date-order --no-walk=? --do-walk --ancestry-path=? --cc --dd
		--remerge-diff --diff-merges= --no-diff-merges --combined-all-paths --full-diff --log-size --parents --children
		--source --mailmap --use-mailmap --no-mailmap --no-use-mailmap --notes=? --no-notes --show-notes=?
		--show-linear-break=? --count --encoding= --expand-tabs=? --no-expand-tabs --relative-date --show-pulls
		--in-commit-order --clear-decorations --walk-reflogs --reflog --single-worktree --not --bisect --objects
		--objects-edge --indexed-objects --unpacked --timestamp --header --no-object-names --object-names
		--show-signature:x --stdin:o`
)

// gitSub is what the model knows about a git subcommand.
type gitSub struct {
	spec *cmdSpec
	// content: the subcommand prints file contents of the repository.
	content bool
	// form, if set, decides whether the operands make it a writing form.
	form func(ops []Word, r scanResult) (Class, string)
}

var gitRead = map[string]gitSub{}

// gitWrite are subcommands known to write, with their class.
var gitWrite = map[string]Class{
	"add": Writes, "commit": Writes, "checkout": Writes, "switch": Writes, "restore": Writes, "reset": Writes,
	"rebase": Writes, "merge": Writes, "cherry-pick": Writes, "revert": Writes, "rm": Writes | Destructive,
	"mv": Writes, "init": Writes, "gc": Writes, "prune": Writes | Destructive, "apply": Writes, "am": Writes,
	"notes": Writes, "update-ref": Writes, "update-index": Writes, "bisect": Writes, "clean": Writes | Destructive,
	"stash": Writes, "tag": Writes, "branch": Writes, "config": Writes, "remote": Writes, "worktree": Writes,
	"reflog": Writes | Destructive, "filter-branch": Writes | Destructive, "replace": Writes, "sparse-checkout": Writes,
	"maintenance": Writes, "repack": Writes, "pack-refs": Writes, "commit-tree": Writes, "mktag": Writes,
	"hash-object": Writes, "read-tree": Writes, "write-tree": Writes, "symbolic-ref": Writes, "format-patch": Writes,
	"push": Network, "fetch": Network | Writes, "pull": Network | Writes, "clone": Network | Writes,
	"ls-remote": Network, "submodule": Network | Writes, "request-pull": Network, "send-email": Network,
	"archive": Writes, "difftool": Runs, "mergetool": Runs | Writes, "send-pack": Network, "fetch-pack": Network | Writes,
}

func initGit() {
	sub := func(names []string, content bool, tokens string, form func([]Word, scanResult) (Class, string)) {
		for _, n := range names {
			gitRead[n] = gitSub{spec: spec(opNone, 0, tokens), content: content, form: form}
		}
	}
	sub(names("diff", "diff-tree", "diff-files", "diff-index"), true, gitDiffOpts+` --root --no-commit-id --stdin:o -v --pretty=? --format=`, nil)
	sub(names("log", "show", "whatchanged", "rev-list"), true, gitLogOpts, nil)
	sub(names("range-diff"), true, gitLogOpts+` --creation-factor= --no-dual-color`, nil)
	sub(names("status"), false, `-s -b -u=? -v -z --short --branch --porcelain=? --long --verbose --untracked-files=?
		--ignored=? --ignore-submodules=? --ahead-behind --no-ahead-behind --renames --no-renames --find-renames=?
		--column=? --no-column --show-stash`, nil)
	sub(names("rev-parse"), false, `-q --show-toplevel --abbrev-ref=? --short=? --verify --git-dir --git-common-dir
		--is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository --show-prefix --show-cdup
		--symbolic --symbolic-full-name --quiet --all --branches=? --tags=? --remotes=?
		--show-superproject-working-tree --show-object-format=? --absolute-git-dir --git-path= --resolve-git-dir=
		--local-env-vars --default= --prefix= --revs-only --no-revs --flags --no-flags --sq --sq-quote --not --since=
		--until= --before= --after= --shared-index-path --show-ref-format --disambiguate= --exclude= --glob=
		--path-format= --parseopt:o`, nil)
	sub(names("ls-files"), false, `-c -d -m -o -i -s -u -k -z -t -v -f -x= -X=:r --cached --deleted --modified --others
		--ignored --stage --unmerged --killed --directory --no-empty-directory --exclude= --exclude-from=:r
		--exclude-per-directory= --exclude-standard --error-unmatch --full-name --recurse-submodules --abbrev=? --debug
		--eol --deduplicate --format= --sparse --with-tree=`, nil)
	sub(names("ls-tree"), false, `-d -r -t -l -z --long --name-only --name-status --object-only --full-name --full-tree
		--abbrev=? --format=`, nil)
	sub(names("cat-file"), true, `-t -s -e -p -Z --allow-unknown-type --mailmap --use-mailmap --follow-symlinks
		--textconv:x --filters:x --batch=?:o --batch-check=?:o --batch-command=?:o`, nil)
	sub(names("blame", "annotate"), true, `-b -l -t -s -e -w -n -f -p -c -M=? -C=? -L= -S=:r --root --show-stats
		--score-debug --show-name --show-number --show-email --porcelain --line-porcelain --incremental --date= --since=
		--abbrev= --reverse= --first-parent --encoding= --ignore-rev= --ignore-revs-file=:r --color-lines --color-by-age
		--progress --no-progress --minimal --contents=:r`, nil)
	sub(names("shortlog"), false, gitLogOpts+` -s -e -w=? --summary --numbered --email --group=`, nil)
	sub(names("describe"), false, `--tags --all --always --abbrev= --long --dirty=? --broken=? --exact-match --match=
		--exclude= --contains --first-parent --candidates= --debug`, nil)
	sub(names("merge-base"), false, `-a --all --octopus --independent --is-ancestor --fork-point`, nil)
	sub(names("show-ref"), false, `--heads --branches --tags -s --hash=? --verify --head -d --dereference --abbrev=? -q
		--quiet --exists`, nil)
	sub(names("grep"), true, `-n -i -w -v -l -L -c -e= -E -F -P -G -h -H -I -q -o -p -W -r -z -a -# --cached --untracked
		--no-exclude-standard --exclude-standard --recurse-submodules --name-only --files-with-matches
		--files-without-match --count --and --or --not --all-match --break --heading --line-number --column
		--show-function --function-context -A= -B= -C= --after-context= --before-context= --context= --max-depth=
		--threads= -f=:r --full-name --null --only-matching --quiet --text --no-textconv --ignore-case --word-regexp
		--invert-match --extended-regexp --fixed-strings --perl-regexp --basic-regexp --color=? --no-color -m=
		--max-count= --no-index:o --textconv:x -O=?:x --open-files-in-pager=?:x`, nil)
	sub(names("count-objects"), false, `-v -H --verbose --human-readable`, nil)
	sub(names("name-rev"), false, `--tags --refs= --exclude= --all --name-only --no-undefined --always --annotate-stdin:o --stdin:o`, nil)
	sub(names("for-each-ref"), false, `--format= --sort= --count= --points-at= --merged=? --no-merged=? --contains=?
		--no-contains=? --shell --perl --python --tcl --color=? --exclude= --ignore-case --omit-empty --include-root-refs
		--stdin:o`, nil)
	sub(names("version"), false, `--build-options`, nil)
	sub(names("cherry"), false, `-v --abbrev=?`, nil)
	sub(names("var"), false, `-l`, nil)
	sub(names("check-ignore"), false, `-q -v -n -z --quiet --verbose --non-matching --no-index --stdin:o`, nil)
	sub(names("branch"), false, `-a -r -l -v -i --list --all --remotes --verbose --contains=? --no-contains=? --merged=?
		--no-merged=? --sort= --format= --show-current --points-at= --column=? --no-column --color=? --no-color --abbrev=?
		--no-abbrev --ignore-case --omit-empty`, listForm)
	sub(names("tag"), false, `-l -n=? -i --list --sort= --contains=? --no-contains=? --merged=? --no-merged=? --points-at=
		--format= --column=? --no-column --color=? --ignore-case --omit-empty`, listForm)
	sub(names("remote"), false, `-v --verbose`, func(ops []Word, _ scanResult) (Class, string) {
		switch {
		case len(ops) == 0, ops[0].Value == "get-url":
			return 0, ""
		case ops[0].Value == "show" && len(ops) > 1 && ops[1].Value == "-n":
			return 0, ""
		case ops[0].Value == "show":
			return Network, "git remote show contacts the remote"
		}
		return Writes, "git remote " + ops[0].Value + " changes the configuration"
	})
	sub(names("stash"), true, gitLogOpts, func(ops []Word, _ scanResult) (Class, string) {
		if len(ops) >= 1 && (ops[0].Value == "list" || ops[0].Value == "show") {
			return 0, ""
		}
		return Writes, "git stash changes the working tree"
	})
	sub(names("reflog"), false, gitLogOpts, func(ops []Word, _ scanResult) (Class, string) {
		if len(ops) == 0 || ops[0].Value == "show" || ops[0].Value == "exists" || ops[0].Value == "list" {
			return 0, ""
		}
		return Writes | Destructive, "git reflog " + ops[0].Value + " rewrites the reflog"
	})
	sub(names("worktree"), false, `--porcelain -v --verbose -z --expire=`, func(ops []Word, _ scanResult) (Class, string) {
		if len(ops) >= 1 && ops[0].Value == "list" {
			return 0, ""
		}
		return Writes, "git worktree changes worktrees"
	})
	sub(names("config"), false, `--get --get-all --get-regexp --get-urlmatch --get-color --get-colorbool --list -l
		--global --system --local --worktree --file=:r -f=:r --blob= --show-origin --show-scope --name-only -z --null
		--type= --bool --int --bool-or-int --path --expiry-date --default= --includes --no-includes --all --regexp
		--value= --fixed-value --url=
		--add:w --unset:w --unset-all:w --replace-all:w --rename-section:w --remove-section:w -e:w --edit:w`, configForm)
}

// listForm: branch and tag list without operands, or with -l/--list
// (operands are patterns); otherwise they create.
func listForm(ops []Word, r scanResult) (Class, string) {
	if len(ops) == 0 {
		return 0, ""
	}
	for _, f := range []string{"--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"} {
		for _, v := range r.values {
			if v.flag == f {
				return 0, ""
			}
		}
	}
	if r.listFlag {
		return 0, ""
	}
	return Writes, "creates a ref"
}

// configForm: git config reads only in its pure reading forms.
func configForm(ops []Word, r scanResult) (Class, string) {
	if strings.Contains(r.effects, "w") {
		return Writes, "git config with an option that changes the configuration"
	}
	if len(ops) > 0 {
		switch ops[0].Value {
		case "get", "list":
			return 0, ""
		case "set", "unset", "rename-section", "remove-section", "edit":
			return Writes, "git config " + ops[0].Value + " changes the configuration"
		}
	}
	if r.getFlag {
		return 0, ""
	}
	if len(ops) <= 1 {
		return 0, ""
	}
	return Writes, "git config NAME VALUE changes the configuration"
}

var (
	gitGlobalNoArg = set("-P", "--no-pager", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
		"--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-lazy-fetch", "--no-advice",
		"--html-path", "--man-path", "--info-path", "--version", "--help", "-v", "-h", "--exec-path")
	gitGlobalArg = set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix",
		"--list-cmds", "--attr-source")
)

// checkGit understands git's global options (for rules: git -C . push
// is git push), the read-only subcommands with their options, and the
// subcommands that write or reach the network.
func checkGit(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	i := 0
	globals := false
	for i < len(args) {
		w := args[i]
		if w.Dynamic {
			e.add(Opaque, "git argument %s is only known when the shell runs", w.Text)
			e.Unresolved = true
			return
		}
		v := w.Value
		if !strings.HasPrefix(v, "-") {
			break
		}
		globals = true
		name, val, hasVal := strings.Cut(v, "=")
		if strings.HasPrefix(v, "-c") && !strings.HasPrefix(v, "--") && len(v) > 2 {
			name, val, hasVal = "-c", v[2:], true
		}
		switch {
		case gitGlobalNoArg[name] && !hasVal:
			if name == "--exec-path" || name == "--help" || name == "-h" {
				break
			}
		case name == "--exec-path":
			e.add(Runs, "git --exec-path=%s runs git programs from another directory", val)
			e.Escalated = true
		case name == "--bare" && !hasVal:
			// A repository selector: the current directory is the
			// repository, and its configuration can name programs.
			e.add(Opaque, "git --bare uses the current directory as a repository, whose configuration can run programs")
			e.Escalated = true
		case name == "-p" || name == "--paginate":
			e.add(Opaque, "git %s runs the configured pager", v)
			e.Escalated = true
		case gitGlobalArg[name]:
			if !hasVal {
				i++
				if i >= len(args) || args[i].Dynamic {
					e.add(Opaque, "git %s without a literal value", v)
					e.Unresolved = true
					return
				}
				val = args[i].Value
			}
			switch name {
			case "-C":
				e.Reads = append(e.Reads, Path{Value: val})
			case "-c", "--config-env":
				e.add(Opaque, "git %s %s sets configuration, which can make git run programs", name, val)
				e.Escalated = true
			case "--git-dir", "--work-tree":
				e.Reads = append(e.Reads, Path{Value: val, Recursive: true})
				e.add(Opaque, "git %s=%s points git at another repository, whose configuration can run programs", name, val)
				e.Escalated = true
			}
		default:
			e.add(Opaque, "git has no known global option %s", v)
			e.Unresolved = true
			return
		}
		i++
	}
	if i >= len(args) {
		return // git, git --version: prints
	}
	subw := args[i]
	sub := subw.Value
	if globals {
		e.Canon = append([]Word{e.Inner[0]}, args[i:]...)
	}
	rest := args[i+1:]
	if rs, ok := gitRead[sub]; ok {
		r := rs.spec.scanArgs(rest)
		r.mark(rest)
		for _, u := range r.unknown {
			e.add(Opaque, "git %s has no known option %s", sub, u)
			e.Escalated = true
		}
		for _, v := range r.values {
			an.effect(e, "git "+sub, v.flag, v.eff, &v.val)
		}
		if strings.ContainsAny(r.effects, "xodn") {
			an.effect(e, "git "+sub, "", strings.ReplaceAll(r.effects, "w", ""), nil)
		}
		for _, op := range r.operands {
			if ok, why := safeOperand(op, false); !ok {
				e.add(Opaque, "git %s %s", sub, why)
			}
		}
		if rs.form != nil {
			if cl, why := rs.form(r.operands, r); cl != 0 {
				e.add(cl, "git %s: %s", sub, why)
				e.Escalated = true
				if cl&Writes != 0 && sub != "config" && sub != "remote" {
					// A ref update runs the reference-transaction hook;
					// worktree add runs post-checkout.
					e.add(Runs, "git %s may run the repository's hooks", sub)
				}
			}
		} else if sub == "config" {
			return
		}
		if rs.content {
			e.Reads = append(e.Reads, Path{Value: ".", Recursive: true})
		}
		return
	}
	if cl, ok := gitWrite[sub]; ok {
		gitRuns(an, idx, sub, rest)
		e = an.at(idx)
		why := "git " + sub
		switch {
		case cl&Network != 0:
			why += " reaches a remote"
		case cl&Writes == 0:
			why += " runs a program"
		default:
			why += " changes the repository or working tree"
		}
		e.add(cl, "%s", why)
		for _, a := range rest {
			switch {
			case sub == "push" && (a.Value == "-f" || strings.HasPrefix(a.Value, "--force") || strings.HasPrefix(a.Value, "+") || a.Value == "--delete" || a.Value == "-d"):
				e.add(Destructive, "git push %s rewrites or removes remote history", a.Value)
			case sub == "reset" && (a.Value == "--hard" || a.Value == "--merge" || a.Value == "--keep"):
				e.add(Destructive, "git reset %s discards changes", a.Value)
			case (sub == "checkout" || sub == "restore") && (a.Value == "-f" || a.Value == "--force" || a.Value == "."):
				e.add(Destructive, "git %s %s discards changes", sub, a.Value)
			case sub == "branch" && (a.Value == "-D" || a.Value == "-d" || a.Value == "--delete"):
				e.add(Destructive, "git branch %s deletes a branch", a.Value)
			}
		}
		return
	}
	e.add(Opaque, "git %s is not a known subcommand (it may be an alias, which can run any command)", sub)
}

// mark records list and get forms seen in a scan (branch -l, config
// --get) that scanArgs reports as effects-free flags.
func (r *scanResult) mark(args []Word) {
	for _, a := range args {
		if a.Dynamic {
			continue
		}
		switch v := a.Value; {
		case v == "-l" || v == "--list":
			r.listFlag = true
			r.getFlag = true
		case strings.HasPrefix(v, "--get") || v == "--get-all" || v == "--get-regexp":
			r.getFlag = true
		case v == "--":
			return
		}
	}
}
