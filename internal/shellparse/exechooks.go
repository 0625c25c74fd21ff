package shellparse

import (
	"path"
	"strings"
)

// Tools with exec hooks. A program whose options can name another program
// to run is in the model only with those options marked: tar's
// --to-command, --checkpoint-action=exec, --use-compress-program/-I,
// --info-script/-F, --new-volume-script, --rsh-command and --rmt-command
// run programs (and a remote archive host:file runs rsh); an option the
// table does not list is not understood. Other such tools — zip (-TT,
// --unzip-command), unzip, 7z, ssh, scp, sftp, sqlite3 (.shell, .system),
// interpreters (python -c, perl -e, node -e, ruby -e), less and more (!,
// LESSOPEN), man, vim -c, make, npm — are not in the table at all, so
// they are not understood and ask; ssh-family runners are Network and
// unresolved. The environment variables that name such programs (PAGER,
// GIT_SSH_COMMAND, TAR_OPTIONS, RSYNC_RSH, LESSOPEN, …) are caught by the
// assignment allow-list (envvars.go).

// tarOpts are GNU tar's options. Value-less effect letters: t list, X
// extract, c a writing mode (create, append, update, catenate, delete), D
// compare, O extract to standard output, a absolute names, d removes its
// operands, N no recursion, o not analysed. Value letters: F the archive,
// C the directory it works in, T a list of names, K a checkpoint action,
// r read, w written, x a program it runs.
const tarOpts = `-t:t --list:t -x:X --extract:X --get:X -c:c --create:c -r:c --append:c -u:c --update:c -A:c
	--catenate:c --concatenate:c --delete:c -d:D --diff:D --compare:D --test-label
	-f=:F --file=:F -C=:C --directory=:C -T=:T --files-from=:T -X=:r --exclude-from=:r -K= --starting-file=
	-O:O --to-stdout:O -P:a --absolute-names:a --remove-files:d --recursive-unlink:d -U:d --unlink-first:d
	--no-recursion:N --recursion
	-I=:x --use-compress-program=:x -F=:x --info-script=:x --new-volume-script=:x --rsh-command=:x
	--rmt-command=:x --to-command=:x --checkpoint-action=:K --checkpoint=?
	-g=:w --listed-incremental=:w -G --incremental --index-file=:w --volno-file=:w -M:o --multi-volume:o
	-L=:o --tape-length=:o
	-z -j -J -Z -a --gzip --gunzip --ungzip --bzip2 --xz --lzma --lzip --lzop --zstd --compress --uncompress
	--auto-compress --no-auto-compress
	-v --verbose -w --interactive --confirmation -k --keep-old-files --skip-old-files --keep-newer-files
	--overwrite --overwrite-dir --no-overwrite-dir -m --touch -p --preserve-permissions --same-permissions
	--no-same-permissions --same-owner --no-same-owner --numeric-owner -o -h --dereference --hard-dereference
	-S --sparse --sparse-version= -W --verify --totals=? --full-time --utc --quoting-style= --quote-chars=
	--no-quote-chars= --show-transformed-names --show-stored-names --null --no-null --unquote --no-unquote
	--ignore-failed-read --ignore-zeros -i -B --read-full-records --occurrence=? --xattrs --no-xattrs
	--xattrs-include= --xattrs-exclude= --acls --no-acls --selinux --no-selinux --one-file-system
	--one-top-level=? --exclude-vcs --exclude-vcs-ignores --exclude-caches --exclude-caches-under
	--exclude-caches-all --exclude-backups --exclude= --exclude-tag= --exclude-tag-under= --exclude-tag-all=
	--add-file= --backup=? --suffix= --check-links -l --label= -V= --force-local --ignore-command-error
	--no-ignore-command-error --warning= --sort= --format= -H= --posix --old-archive --portability -n --seek
	--no-seek --delay-directory-restore --no-delay-directory-restore --keep-directory-symlink --preserve-order
	-s --same-order --atime-preserve=? --restrict --wildcards --no-wildcards --wildcards-match-slash
	--no-wildcards-match-slash --ignore-case --no-ignore-case --anchored --no-anchored --strip-components=
	--transform= --xform= --owner= --group= --owner-map= --group-map= --mode= --mtime= --clamp-mtime
	--newer=:r -N=:r --after-date=:r --newer-mtime=:r --pax-option= -b= --blocking-factor= --record-size=
	--block-number -R --utc --no-check-device --check-device --level= --hole-detection= --null
	--help --version --usage --show-defaults --show-omitted-dirs --no-quote-chars --quote-chars`

// tarArgLetters are the short options of tar that take a value, for
// expanding an old-style first argument (tar tvf x.tar).
const tarArgLetters = "fCTXKIFgLVHbN"

func initExecHooks() {
	def(names("tar", "gtar"), spec(opNone, 0, tarOpts).with(checkTar))
}

// tarOldStyle expands tar's old-style first argument ("tvf x.tar": each
// letter an option, those that take a value taking the following words in
// order) into ordinary options.
func tarOldStyle(args []Word) []Word {
	if len(args) == 0 || args[0].Dynamic || args[0].Value == "" || strings.HasPrefix(args[0].Value, "-") {
		return args
	}
	for _, c := range args[0].Value {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return args
		}
	}
	out := []Word{}
	next := 1
	for _, c := range args[0].Value {
		flag := "-" + string(c)
		out = append(out, Word{Text: flag, Value: flag})
		if strings.ContainsRune(tarArgLetters, c) && next < len(args) {
			out = append(out, args[next])
			next++
		}
	}
	return append(out, args[next:]...)
}

// checkTar: listing and extracting to standard output read; the writing
// modes write their archive and read their operands (recursively);
// extraction writes entries only known when it runs; options that run
// programs escalate; a remote archive (host:file) runs rsh.
func checkTar(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	sp := an.specOf(idx)
	r := sp.scanArgs(tarOldStyle(args))
	for _, u := range r.unknown {
		e.add(Opaque, "tar has no known option %s", u)
		e.Escalated = true
	}
	eff := r.effects
	for _, v := range r.values {
		if len(v.eff) == 1 && strings.Contains("tXcDOadNo", v.eff) {
			eff += v.eff
		}
	}
	modes := 0
	for _, m := range "tXcD" {
		if strings.ContainsRune(eff, m) {
			modes++
		}
	}
	list := strings.ContainsRune(eff, 't')
	extract := strings.ContainsRune(eff, 'X')
	writing := strings.ContainsRune(eff, 'c')
	compare := strings.ContainsRune(eff, 'D')
	toStdout := strings.ContainsRune(eff, 'O')
	if modes != 1 {
		e.add(Opaque, "tar needs exactly one of -t, -x, -c, -r, -u, -A, -d, --delete")
		e.Escalated = true
	}
	if strings.ContainsRune(eff, 'o') {
		e.add(Opaque, "tar with multi-volume options cannot be analysed")
		e.Escalated = true
	}
	dir, dirKnown := "", true
	for _, v := range r.values {
		val := v.val
		switch v.eff {
		case "x", "r", "w":
			an.effect(e, "tar", v.flag, v.eff, &val)
		case "K":
			if val.Dynamic || strings.HasPrefix(val.Value, "exec") {
				an.effect(e, "tar", v.flag, "x", &val)
			}
		case "T":
			e.Reads = append(e.Reads, pathOf(val))
			if writing {
				e.Reads = append(e.Reads, unknownPath("tar "+v.flag+": the files "+val.Text+" lists"))
				e.add(Opaque, "tar %s %s: it archives the files that list names, which the analysis does not see", v.flag, val.Text)
				e.Escalated = true
			}
		case "C":
			if val.Dynamic {
				dirKnown = false
				e.add(Opaque, "tar %s %s: the directory is only known when the shell runs", v.flag, val.Text)
			} else {
				dir = val.Value
			}
		case "F":
			if remoteArchive(val, strings.Contains(strings.Join(wordValues(args), " "), "--force-local")) {
				e.add(Network|Runs, "tar %s %s is a remote archive: tar runs rsh to reach it", v.flag, val.Text)
				e.Escalated = true
				continue
			}
			if val.Value == "-" && !val.Dynamic {
				continue // standard input or output
			}
			p := pathOf(val)
			if writing {
				e.Writes = append(e.Writes, p)
				e.add(Writes, "tar writes the archive %s", val.Text)
			} else {
				e.Reads = append(e.Reads, p)
				if ok, why := safeOperand(val, false); !ok {
					e.add(Opaque, "tar %s", why)
				}
			}
		}
	}
	at := func(op string) string {
		if dir == "" || path.IsAbs(op) {
			return op
		}
		return path.Join(dir, op)
	}
	switch {
	case writing:
		for _, op := range r.operands {
			if ok, why := safeOperand(op, false); !ok {
				e.add(Opaque, "tar %s", why)
			}
			p := pathOf(op)
			if !op.Dynamic {
				p.Value = at(op.Value)
			} else if dir != "" || !dirKnown {
				e.add(Opaque, "tar operand %s is relative to another directory", op.Text)
			}
			p.Recursive = !strings.ContainsRune(eff, 'N')
			p.Destructive = strings.ContainsRune(eff, 'd')
			e.Reads = append(e.Reads, p)
			if p.Destructive {
				e.Writes = append(e.Writes, p)
			}
		}
		if strings.ContainsRune(eff, 'd') {
			e.add(Writes|Destructive, "tar --remove-files removes what it archives")
			e.Escalated = true
		}
	case extract && !toStdout:
		target := "."
		if dir != "" {
			target = dir
		}
		e.Writes = append(e.Writes, Path{Value: target, Recursive: true, Dynamic: !dirKnown})
		e.add(Writes, "tar -x writes the archive's entries, which are only known when it runs")
		e.Escalated = true
		if strings.ContainsRune(eff, 'a') {
			e.add(Opaque, "tar -P extracts absolute names: it may write anywhere")
		}
		if strings.ContainsRune(eff, 'd') {
			e.add(Destructive, "tar removes files before extracting over them")
		}
	case compare:
		target := "."
		if dir != "" {
			target = dir
		}
		e.Reads = append(e.Reads, Path{Value: target, Recursive: true, Dynamic: !dirKnown})
	case list, extract && toStdout:
		// Operands are member names, not files.
	}
}

// remoteArchive reports tar's host:file archive form: a colon before the
// first slash, unless --force-local.
func remoteArchive(w Word, forceLocal bool) bool {
	v := w.Value
	if w.Dynamic {
		v = w.Text
	}
	i := strings.IndexByte(v, ':')
	return !forceLocal && i >= 0 && !strings.Contains(v[:i], "/")
}

func wordValues(ws []Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Value
	}
	return out
}
