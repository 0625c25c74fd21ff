package shellparse

import "sync"

// commands is the model's knowledge of commands: every option it knows for
// each, with the option's effect. A command that is not here is Opaque; an
// option that is not listed for its command is Opaque. This table is the
// one place Gantry knows what a shell command does.
var commands = map[string]*cmdSpec{}

func def(names []string, s *cmdSpec) {
	for _, n := range names {
		if _, dup := commands[n]; dup {
			panic("shellparse: command defined twice: " + n)
		}
		commands[n] = s
	}
}

func names(ns ...string) []string { return ns }

const (
	grepOpts = `-E -F -G -P -e=:P -f=:rP -i -y --no-ignore-case -v -w -x -c --color=? --colour=? -L -l -m= -o -q -s -b -H -h
		--label= -n -T -Z -z -A= -B= -C= -# -a --binary-files= -D= -d= --exclude= --exclude-from=:r --exclude-dir=
		--include= -r:R -R:RF -U --line-buffered --null-data --null --regexp=:P --file=:rP --ignore-case --invert-match
		--word-regexp --line-regexp --count --files-without-match --files-with-matches --max-count= --only-matching
		--quiet --silent --no-messages --byte-offset --with-filename --no-filename --line-number --initial-tab
		--after-context= --before-context= --context= --text --binary --devices= --directories= --recursive:R
		--dereference-recursive:RF --extended-regexp --fixed-strings --basic-regexp --perl-regexp --help --version`
	sumOpts = `-b -c:L -t -z -w --binary --check:L --tag --text --zero --ignore-missing --quiet --status --strict --warn --help --version`
	cpOpts  = `-a:R -b -d -f -i -H -l -L:F -n -P -p -R:R -r:R -s -S= -t=:w -T -u -v -x -Z --archive:R --backup=? --force --interactive
		--link --dereference:F --no-clobber --no-dereference --preserve=? --no-preserve= --parents --recursive:R --reflink=?
		--remove-destination --sparse= --strip-trailing-slashes --symbolic-link --suffix= --target-directory=:w
		--no-target-directory --update=? --verbose --one-file-system --attributes-only --copy-contents --debug
		--keep-directory-symlink --context=?`
)

// tablesOnce builds the command tables on first use rather than at
// package init: a process that analyses no command (gantry --version, an
// SDK program without Bash) pays nothing for them.
var tablesOnce sync.Once

func loadTables() { tablesOnce.Do(func() { initCommands(); initGit(); initExecHooks() }) }

func initCommands() {
	// Files and text: read-only with every listed option.
	def(names("cat"), spec(opRead, 0, `-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number
		--squeeze-blank --show-tabs --show-nonprinting --help --version`))
	def(names("head"), spec(opRead, 0, `-c= -n= -q -v -z -# --bytes= --lines= --quiet --silent --verbose --zero-terminated --help --version`))
	def(names("tail"), spec(opRead, 0, `-c= -n= -q -v -z -# -f -F -s= --bytes= --lines= --quiet --silent --verbose
		--zero-terminated --follow=? --retry --sleep-interval= --pid= --max-unchanged-stats= --help --version`))
	def(names("wc"), spec(opRead, 0, `-c -m -l -L -w --bytes --chars --lines --max-line-length --words --files0-from=:L --total= --help --version`))
	def(names("ls", "dir", "vdir"), spec(opRead, 0, `-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -k -l -L:F -m -n -N -o -p -q -Q
		-r -R:T -s -S -t -u -U -v -x -X -Z -1 -I= -w= -T= --all --almost-all --author --escape --block-size= --ignore-backups
		--color=? --directory --dired --classify=? --file-type --format= --full-time --group-directories-first --no-group
		--human-readable --si --dereference-command-line --dereference-command-line-symlink-to-dir --hide= --hyperlink=?
		--indicator-style= --inode --ignore= --kibibytes --dereference:F --literal --numeric-uid-gid --hide-control-chars
		--show-control-chars --quote-name --quoting-style= --reverse --recursive:T --size --sort= --time= --time-style=
		--tabsize= --width= --context --zero --help --version`))
	def(names("grep", "egrep", "fgrep"), spec(opPattern, 0, grepOpts))
	def(names("rg"), spec(opPattern, 0, `-i -s -S -w -x -v -c -l -n -N -H -I -o -u -L:F -F -P -U -a -b -q -p -0 -e=:P -f=:rP
		-g= -t= -T= -A= -B= -C= -m= -j= -M= -E= -r= -d= --hidden --no-ignore --no-ignore-vcs --no-ignore-parent
		--no-ignore-global --no-ignore-dot --no-ignore-exclude --no-ignore-files --no-require-git --glob= --iglob=
		--type= --type-not= --type-add= --type-clear= --files --files-with-matches --files-without-match --count
		--count-matches --json --vimgrep --line-number --no-line-number --no-heading --heading --with-filename
		--no-filename --color= --colors= --smart-case --ignore-case --case-sensitive --fixed-strings --word-regexp
		--line-regexp --invert-match --multiline --multiline-dotall --pcre2 --engine= --max-count= --max-depth=
		--max-filesize= --max-columns= --max-columns-preview --context= --after-context= --before-context= --follow:F
		--sort= --sortr= --stats --trim --type-list --only-matching --replace= --passthru --null --null-data --text
		--debug --trace --no-messages --no-config --threads= --encoding= --unrestricted --regexp=:P --file=:rP --quiet
		--column --no-column --byte-offset --crlf --glob-case-insensitive --ignore-file=:r --one-file-system
		--path-separator= --pretty --binary --no-unicode --help --version --context-separator= --field-match-separator=
		--pre=:x --pre-glob=:x --hostname-bin=:x --search-zip:x -z:x`).recurse())
	def(names("stat"), spec(opRead, 0, `-L -f -t -c= --format= --printf= --dereference --file-system --terse --cached= --help --version`))
	def(names("du"), spec(opRead, 0, `-a -b -c -h -H -k -L:F -l -m -P -s -S -x -0 -d= -t= -B= -X=:r --all --apparent-size
		--block-size= --bytes --total --dereference:F --dereference-args --max-depth= --human-readable --si --inodes
		--summarize --separate-dirs --one-file-system --threshold= --time=? --time-style= --exclude= --exclude-from=:r
		--null --count-links --files0-from=:L --help --version`).walk())
	def(names("df"), spec(opRead, 0, `-a -B= -h -H -i -k -l -P -t= -T -x= --all --block-size= --human-readable --si --inodes
		--local --output=? --portability --total --type= --print-type --exclude-type= --sync --no-sync --help --version`))
	def(names("cut"), spec(opRead, 0, `-b= -c= -d= -f= -n -s -z --bytes= --characters= --delimiter= --fields= --complement
		--only-delimited --output-delimiter= --zero-terminated --help --version`))
	def(names("tr"), spec(opNone, 0, `-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1 --help --version`))
	def(names("nl"), spec(opRead, 0, `-b= -d= -f= -h= -i= -l= -n= -p -s= -v= -w= --body-numbering= --section-delimiter=
		--footer-numbering= --header-numbering= --line-increment= --join-blank-lines= --number-format= --no-renumber
		--number-separator= --starting-line-number= --number-width= --help --version`))
	def(names("od"), spec(opRead, 0, `-A= -j= -N= -S= -t= -v -w=? -a -b -c -d -f -i -l -o -s -x --address-radix=
		--skip-bytes= --read-bytes= --strings=? --format= --output-duplicates --width=? --endian= --traditional --help --version`))
	def(names("hexdump"), spec(opRead, 0, `-b -c -C -d -o -x -e= -f=:r -n= -s= -v --canonical --format= --format-file=:r
		--length= --skip= --no-squeezing --help --version`))
	def(names("diff"), spec(opRead, 0, `-u -U= -c -C= -q -r:RF -N -i -w -b -B -a -y -s -p -e -n -t -T -d -x= -X=:r -I= -E -Z
		-W= --unified=? --context=? --brief --recursive:RF --new-file --unidirectional-new-file --ignore-case
		--ignore-all-space --ignore-space-change --ignore-blank-lines --ignore-tab-expansion --ignore-trailing-space
		--text --side-by-side --report-identical-files --show-c-function --show-function-line= --ed --normal --rcs
		--minimal --exclude= --exclude-from=:r --ignore-matching-lines= --color=? --palette= --label= --strip-trailing-cr
		--width= --suppress-common-lines --no-dereference:N --speed-large-files --from-file=:r --to-file=:r --left-column
		--expand-tabs --initial-tab --tabsize= --suppress-blank-empty --line-format= --old-line-format=
		--new-line-format= --unchanged-line-format= --old-group-format= --new-group-format= --changed-group-format=
		--unchanged-group-format= --horizon-lines= --starting-file= --help --version`))
	def(names("cmp"), spec(opRead, 0, `-b -i= -l -n= -s --print-bytes --ignore-initial= --verbose --bytes= --quiet --silent --help --version`))
	def(names("comm"), spec(opRead, 0, `-1 -2 -3 -z --check-order --nocheck-order --output-delimiter= --total --zero-terminated --help --version`))
	def(names("column"), spec(opRead, 0, `-t -s= -o= -c= -x -n -e -N= -R= -J -l= -L -r= -E= -H= -O= -W= -d -i= -p=
		--table --separator= --output-separator= --output-width= --fillrows --table-columns= --table-right=
		--table-noextreme= --table-hide= --table-order= --table-wrap= --table-name= --json --keep-empty-lines
		--table-noheadings --tree= --tree-id= --tree-parent= --help --version`))
	def(names("strings"), spec(opRead, 0, `-a -d -f -n= -t= -e= -w -o -s= -# --all --data --print-file-name --bytes=
		--radix= --encoding= --include-all-whitespace --output-separator= --unicode= --help --version`))
	def(names("fold"), spec(opRead, 0, `-b -s -w= --bytes --spaces --width= --help --version`))
	def(names("rev"), spec(opRead, 0, `-0 --zero --help --version`))
	def(names("paste"), spec(opRead, 0, `-d= -s -z --delimiters= --serial --zero-terminated --help --version`))
	def(names("join"), spec(opRead, 0, `-a= -e= -i -j= -o= -t= -v= -1= -2= -z --check-order --nocheck-order --header
		--ignore-case --zero-terminated --help --version`))
	def(names("tac"), spec(opRead, 0, `-b -r -s= --before --regex --separator= --help --version`))
	def(names("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum"), spec(opRead, 0, sumOpts))
	def(names("b2sum"), spec(opRead, 0, sumOpts+" -l= --length="))
	def(names("cksum"), spec(opRead, 0, `-a= -l= -c:L --algorithm= --base64 --raw --tag --untagged --length= --check:L --help --version`))
	def(names("base64", "base32"), spec(opRead, 0, `-d -i -w= --decode --ignore-garbage --wrap= --help --version`))
	def(names("jq"), spec(opPattern, 0, `-r -j -a -c -n -s -e -S -C -M -R -h -V --tab --indent= --arg=2 --argjson=2
		--slurpfile=2@2:r --rawfile=2@2:r --args --jsonargs -f=:rP --from-file=:rP -L= --raw-output --join-output
		--ascii-output --compact-output --null-input --slurp --exit-status --sort-keys --color-output
		--monochrome-output --raw-input --seq --stream --stream-errors --raw-output0 --unbuffered --help --version`).with(checkJq))
	def(names("realpath"), spec(opRead, 0, `-e -m -L -P -q -s -z --relative-to=:r --relative-base=:r --canonicalize-existing
		--canonicalize-missing --logical --physical --quiet --strip --no-symlinks --zero --help --version`))
	def(names("readlink"), spec(opRead, 0, `-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing
		--canonicalize-missing --no-newline --quiet --silent --verbose --zero --help --version`))
	def(names("basename"), spec(opNone, 0, `-a -s= -z --multiple --suffix= --zero --help --version`))
	def(names("dirname"), spec(opNone, 0, `-z --zero --help --version`))
	def(names("file"), spec(opRead, 0, `-b -c -E -h -i -k -l -L -N -n -p -r -s -z -Z -0 -v -e= -F= -f=:L -m=:r -P=
		--brief --mime --mime-type --mime-encoding --keep-going --dereference --no-dereference --uncompress
		--uncompress-noreport --no-pad --print0 --raw --special-files --separator= --extension --apple --exclude=
		--exclude-quiet= --files-from=:L --magic-file=:r --parameter= --preserve-date --no-sandbox:o --help --version
		-C:w --compile:w`))
	def(names("tree"), spec(opRead, 0, `-a -d -l:F -f -x -L= -P= -I= -i -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -n -C -X -J -A -S
		--noreport --si --du --inodes --device --dirsfirst --filesfirst --gitignore --prune --filelimit= --charset=
		--matchdirs --ignore-case --timefmt= --sort= --help --version -o=:w --output=:w -R:w -H=:w`).walk())
	def(names("sort"), spec(opRead, 0, `-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z -k= -t= -S= --key=
		--field-separator= --buffer-size= --ignore-leading-blanks --dictionary-order --ignore-case
		--general-numeric-sort --human-numeric-sort --ignore-nonprinting --month-sort --numeric-sort --random-sort
		--reverse --version-sort --check=? --merge --stable --unique --zero-terminated --sort= --debug --parallel=
		--batch-size= --random-source=:r --files0-from=:L --help --version
		-o=:w --output=:w -T=:w --temporary-directory=:w --compress-program=:x`))
	def(names("uniq"), spec(opInOut, 0, `-c -d -D -f= -i -s= -u -w= -z --count --repeated --all-repeated=? --skip-fields=
		--ignore-case --skip-chars= --unique --check-chars= --zero-terminated --group=? --help --version`))

	// Shell and system information.
	def(names("pwd"), spec(opNone, 0, `-L -P --help --version`))
	def(names("echo"), spec(opNone, 0, `-n -e -E`))
	def(names("printf"), spec(opNone, 0, `-v=:o`).with(checkPrintf))
	def(names("which"), spec(opNone, 0, `-a -s --all --skip-alias --skip-functions --help --version`))
	def(names("type"), spec(opNone, 0, `-a -f -p -P -t`))
	def(names("uname"), spec(opNone, 0, `-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release
		--kernel-version --machine --processor --hardware-platform --operating-system --help --version`))
	def(names("whoami", "arch", "tty", "logname"), spec(opNone, 0, `--help --version`))
	def(names("id"), spec(opNone, 0, `-a -g -G -n -r -u -z -Z --group --groups --name --real --user --zero --context --help --version`))
	def(names("groups"), spec(opNone, 0, `--help --version`))
	def(names("nproc"), spec(opNone, 0, `--all --ignore= --help --version`))
	def(names("uptime"), spec(opNone, 0, `-p -s --pretty --since --help --version`))
	def(names("free"), spec(opNone, 0, `-b -k -m -g -h -w -t -l -v -s= -c= --human --wide --total --lohi --committed --si
		--bytes --kilo --mega --giga --tera --peta --kibi --mebi --gibi --tebi --pebi --seconds= --count= --help --version`))
	def(names("ps", "true", "false", ":", "expr"), spec(opNone, 0, `*`))
	def(names("locale"), spec(opNone, 0, `-a -m -c -k -v --all-locales --charmaps --category-name --keyword-name --verbose --help --version`))
	def(names("printenv"), spec(opNone, 0, `-0 --null --help --version`))
	def(names("seq"), spec(opNone, 0, `-# -f= -s= -w --format= --separator= --equal-width --help --version`))
	def(names("sleep"), spec(opNone, 0, `--help --version`))
	def(names("hostname"), spec(opNone, 0, `-s -f -d -i -I -A -a -y --short --fqdn --long --domain --ip-address
		--all-ip-addresses --all-fqdns --alias --yp --nis --help --version`).with(checkNoOperand))
	def(names("env"), spec(opNone, 0, `-0 --null`).with(checkNoOperand))
	def(names("date"), spec(opNone, 0, `-d= -f=:r -I=? -R -r=:r -u --date= --file=:r --iso-8601=? --rfc-email --rfc-3339=
		--reference=:r --utc --universal --debug --resolution --help --version -s=:o --set=:o`).with(checkDate))
	def(names("test", "["), spec(opNone, 0, `*`).with(checkTest))
	def(names("command"), spec(opNone, 0, `-v -V -p`).with(checkCommandLookup))
	def(names("cd", "pushd", "popd"), spec(opNone, 0, `-L -P -e -@ -n`).with(checkChdir))
	def(names("dirs"), spec(opNone, 0, `-c -l -p -v`))
	def(names("exec"), spec(opNone, 0, ``))
	// The parser checks the expressions of [[ ]] and (( )) (subscripts,
	// arithmetic on variables and -v make the line Opaque).
	def(names("[[", "(("), spec(opNone, 0, `*`).with(func(*analyzer, int, []Word) {}))
	def(names("let"), spec(opNone, Opaque, `*`).with(checkStateBuiltin))
	def(names("export", "declare", "typeset", "local", "readonly", "unset", "set", "shopt", "read", "mapfile",
		"readarray", "shift", "getopts", "hash", "ulimit", "umask", "wait", "kill", "jobs", "fg", "bg", "disown",
		"return", "exit", "break", "continue", "compgen", "complete", "caller", "history", "fc", "times", "suspend",
		"logout", "bind", "enable", "alias", "unalias"),
		spec(opNone, Opaque, `*`).with(checkStateBuiltin))
	commands["export"].why = "shell builtin that changes the shell's state"

	// Files: writing.
	def(names("mkdir"), spec(opWrite, Writes, `-p -m= -v -Z --parents --mode= --verbose --context=? --help --version`))
	def(names("touch"), spec(opWrite, Writes, `-a -c -d= -f -h -m -r=:r -t= --date= --no-create --no-dereference
		--reference=:r --time= --help --version`))
	def(names("cp"), spec(opCopy, Writes, cpOpts))
	def(names("install"), spec(opCopy, Writes, cpOpts+` -D -g= -m= -o= -s -C --compare --group= --mode= --owner= --strip
		--preserve-timestamps --no-target-directory --strip-program=:x`))
	def(names("mv"), spec(opMove, Writes, `-b -f -i -n -t=:wd -T -u -v -Z --backup=? --force --interactive --no-clobber
		--strip-trailing-slashes --suffix= --target-directory=:wd --no-target-directory --update=? --verbose --context
		--exchange --no-copy --debug --help --version`))
	def(names("rm"), spec(opDestroy, Writes, `-f -i -I -r:R -R:R -d -v --force --interactive=? --one-file-system
		--no-preserve-root:d --preserve-root=? --recursive:R --dir --verbose --help --version`))
	def(names("rmdir"), spec(opWrite, Writes, `-p -v --ignore-fail-on-non-empty --parents --verbose --help --version`))
	def(names("unlink"), spec(opDestroy, Writes, `--help --version`))
	def(names("shred"), spec(opDestroy, Writes, `-f -n= -s= -u -v -x -z --force --iterations= --random-source=:r --size=
		--remove=? --verbose --exact --zero --help --version`))
	def(names("ln"), spec(opLink, Writes, `-b -d -F -f -i -L -n -P -r -s -S= -t=:w -T -v --backup=? --directory --force
		--interactive --logical --no-dereference --physical --relative --symbolic --suffix= --target-directory=:w
		--no-target-directory --verbose --help --version`))
	def(names("chmod"), spec(opMode, Writes, `-c -f -v -R:R --changes --silent --quiet --verbose --no-preserve-root
		--preserve-root --reference=:r --recursive:R --help --version`))
	def(names("chown", "chgrp"), spec(opMode, Writes, `-c -f -v -h -H -L:F -P -R:R --changes --silent --quiet --verbose
		--dereference --no-dereference --from= --no-preserve-root --preserve-root --reference=:r --recursive:R --help --version`))
	def(names("tee"), spec(opWrite, Writes, `-a -i -p --append --ignore-interrupts --output-error=? --help --version`))
	def(names("truncate"), spec(opWrite, Writes|Destructive, `-c -o -r=:r -s= --no-create --io-blocks --reference=:r --size= --help --version`))
	def(names("dd"), spec(opNone, 0, ``).with(checkDD))
	def(names("rsync"), spec(opNone, Writes, ``).with(checkRsync))

	// Network.
	def(names("curl"), spec(opNone, Network, `-s -S -L -f -I -i -k -v -G -4 -6 -N -Z -j -# -q -O:w -J -R -X= -H=:a -A= -e= -u= -x=
		-d=:a -F=:a -m= -w=:a -b=:c -r= -Y= -y= -z= -E=:r -C= --silent --show-error --location --fail --fail-with-body --head
		--include --insecure --verbose --get --request= --header=:a --user-agent= --referer= --user= --proxy= --data=:a
		--data-raw= --data-binary=:a --data-urlencode=:a --data-ascii=:a --json=:a --form=:a --form-string= --max-time=
		--connect-timeout= --retry= --retry-delay= --retry-max-time= --compressed --write-out=:a --url= --cookie=:c
		--range= --http1.1 --http2 --http3 --tlsv1.2 --tlsv1.3 --ipv4 --ipv6 --no-buffer --location-trusted
		--max-redirs= --remote-name:w --remote-header-name --remote-time --progress-bar --no-progress-meter
		-o=:w --output=:w --output-dir=:w -D=:w --dump-header=:w -c=:w --cookie-jar=:w --trace=:w --trace-ascii=:w
		--stderr=:w -T=:r --upload-file=:r -K=:ro --config=:ro --create-dirs --netrc --netrc-file=:r`).with(checkNetwork))
	def(names("wget"), spec(opNone, Network, `-q -v -c -N -S -r:w -x -k -p -m -4 -6 -t= -T= -w= -U= -l=
		-e=:o --quiet --verbose --continue --timestamping --server-response --recursive:w --no-parent --no-clobber
		--tries= --timeout= --wait= --user-agent= --header= --level= --mirror:w --page-requisites --convert-links
		--no-check-certificate --spider --post-data= --method= --body-data= --execute=:o
		-O=:w --output-document=:w -o=:w --output-file=:w -a=:w --append-output=:w -P=:w --directory-prefix=:w
		-i=:r --input-file=:r --post-file=:r --body-file=:r --help --version`).with(checkNetwork))
	for _, n := range []string{"ssh", "scp", "sftp", "nc", "ncat", "netcat", "telnet", "ftp", "socat", "ping", "dig",
		"nslookup", "host", "whois", "traceroute"} {
		def(names(n), spec(opNone, Network|Opaque, `*`))
	}

	// Commands that run other commands or whose operands are code.
	for n := range shells {
		def(names(n), spec(opNone, 0, ``).with(checkShell))
	}
	def(names("eval"), spec(opNone, Runs, ``).with(checkEval))
	def(names("trap"), spec(opNone, 0, ``).with(checkTrap))
	def(names("source", "."), spec(opRead, Runs|Opaque, `*`).with(checkSource))
	def(names("xargs"), spec(opNone, Runs|Opaque, `*`).with(checkUnresolved))
	for _, n := range []string{"env", "sudo", "doas", "runuser", "watch", "setsid", "flock", "ionice", "chroot", "unshare",
		"taskset", "chrt", "nsenter", "su", "parallel", "strace", "ltrace", "gdb", "script", "fakeroot", "firejail",
		"systemd-run", "tmux", "screen", "dbus-launch", "timeout", "nice", "nohup", "stdbuf", "time", "builtin"} {
		if _, ok := commands[n]; !ok {
			def(names(n), spec(opNone, Runs|Opaque, `*`).with(checkUnresolved))
		}
	}
	def(names("find"), spec(opNone, 0, ``).with(checkFind))
	def(names("sed"), spec(opNone, 0, ``).with(checkSed))
	def(names("awk", "gawk", "mawk", "nawk", "busybox-awk"), spec(opNone, 0, ``).with(checkAwk))
	def(names("git"), spec(opNone, 0, ``).with(checkGit))
}
