package shellparse

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// Code run at expansion time from quoted strings: bash runs command
// substitutions it finds in values it evaluates as prompts (${x@P}, PS4
// under set -x), as arithmetic (subscripts in declare/read/printf -v/let/
// (( ))/[[ ]]/${a[…]}, test's numeric comparisons, ${!x}), as callbacks
// (mapfile -C, compgen -C/-F, trap), or as code (eval, source, hash -p).
// The parser sees only a quoted literal there. The property checked
// against real bash: when the analysis calls a line understood (not
// Opaque, not unresolved), every program bash ran is one the analysis
// saw; in particular a read-only line runs no stub at all.

// expandFragments are the constructs; P is replaced by a canary payload
// (a stub program in a command substitution), N by a stub's name, B by
// the directory of the stubs.
var expandFragments = []string{
	`x='$(@P@)'; echo "${x@P}"`,
	`x='$(@P@)'; echo ${x@P}`,
	`x='$(@P@)'; y=${x@E}; echo "$y"`,
	`PS4='$(@P@)'; set -x; true`,
	`PS4='$(@P@) '; set -o xtrace; echo hi`,
	`printf -v 'a[$(@P@)]' %s x`,
	`declare 'a[$(@P@)]=1'`,
	`declare -a a; declare 'a[$(@P@)]'=1`,
	`typeset -i n; n='a[$(@P@)]'`,
	`read 'a[$(@P@)]' <<< x`,
	`let 'a[$(@P@)]=1'`,
	`x='a[$(@P@)]'; echo $((x))`,
	`x='a[$(@P@)]'; (( x ))`,
	`x='a[$(@P@)]'; [[ $x -eq 1 ]]`,
	`[[ 'a[$(@P@)]' -eq 1 ]]`,
	`[[ -v 'a[$(@P@)]' ]]`,
	`test -v 'a[$(@P@)]'`,
	`[ 'a[$(@P@)]' -eq 1 ]`,
	`test 'a[$(@P@)]' -lt 1`,
	`printf '%d\n' 'a[$(@P@)]'`,
	`x='a[$(@P@)]'; echo "${a[x]}"`,
	`x='a[$(@P@)]'; echo "${!x}"`,
	`x='a[$(@P@)]'; echo "${y:x}"`,
	`mapfile -C @N@ -c 1 a <<< l`,
	`readarray -C @N@ -c 1 a <<< l`,
	`compgen -C @N@ x`,
	`f() { @N@; }; compgen -F f x`,
	`trap @N@ EXIT`,
	`x=@N@; trap "$x" EXIT`,
	`trap '@N@' DEBUG; true`,
	`declare -n r='a[$(@P@)]'; r=1`,
	`shift 'a[$(@P@)]'`,
	`hash -p @B@/@N@ cat; cat /dev/null`,
	`shopt -s extdebug; true`,
	`x='$(@P@)'; eval "echo $x"`,
	`source /dev/stdin <<< '@N@'`,
	`. <(echo @N@)`,
	`cat <<EOF
$(@P@)
EOF`,
	`echo "${x:-$(@P@)}"`,
	`case x in $(@P@)) ;; esac`,
	`a=([$(@P@)]=1)`,
	`PROMPT_COMMAND=@N@; true`,
	`x='$(@P@)'; printf -v y '%s' "$x"; eval "$y"`,
	`command_not_found_handle() { @N@; }; nosuchcmd_zz`,
	`enable -n echo; echo x`,
	`set -T; trap '@N@' DEBUG; f() { true; }; f`,
	`x='\$(@P@)'; echo "${x@P}"`,
	`IFS=x; y='a[$(@P@)]'; echo $((y))`,
	// Values from a loop (no assignment) evaluated where dynamic words
	// are otherwise understood: [[ ]] and case.
	`for x in '$(@P@)'; do [[ -n "${x@P}" ]]; done`,
	`for x in '$(@P@)'; do case "${x@P}" in *) ;; esac; done`,
	`for x in '$(@P@)'; do [[ "${x@P}" ]]; done`,
	`for x in 'a[$(@P@)]'; do [[ $x -eq 1 ]]; done`,
	`for x in 'a[$(@P@)]'; do [[ -v $x ]]; done`,
	`for x in 'a[$(@P@)]'; do [[ ${!x} ]]; done`,
	`for x in 'a[$(@P@)]'; do [[ ${a[x]} ]]; done`,
	`for x in 'a[$(@P@)]'; do case $((x)) in *) ;; esac; done`,
	`for x in 'a[$(@P@)]'; do case ${y:x} in *) ;; esac; done`,
	`for x in '$(@P@)'; do for y in "${x@P}"; do :; done; done`,
	`for x in 'a[$(@P@)]'; do [[ $x == 1 ]]; done`,
	`for x in '$(@P@)'; do case "$x" in *) ;; esac; done`,
}

// expandShapes wrap a fragment.
var expandShapes = []string{"%s", "( %s )", "{ %s; }", "if true; then %s; fi", "true && %s", "for i in 1; do %s; done", "echo a | { %s; }"}

func expandLine(r *rand.Rand, bin string) string {
	var parts []string
	for range 1 + r.IntN(2) {
		f := expandFragments[r.IntN(len(expandFragments))]
		name := stubs[r.IntN(len(stubs))]
		f = fill(f, name, bin)
		shape := expandShapes[r.IntN(len(expandShapes))]
		parts = append(parts, strings.Replace(shape, "%s", f, 1))
	}
	return strings.Join(parts, "\n")
}

// checkUnderstood fails when bash ran a program the analysis did not see
// in a line the analysis claims to understand.
func checkUnderstood(t *testing.T, l *bashLab, src string) bool {
	t.Helper()
	a := Analyze(src)
	if a.Err != nil || a.Class&Opaque != 0 || a.Unresolved {
		return false // not understood: asks; nothing to hold
	}
	for _, run := range l.run(t, src) {
		if !seen(a, run) {
			t.Fatalf("%q: the analysis calls it %s, but bash ran %q, which it did not see", src, a.Class, run)
		}
	}
	return true
}

func fill(f, name, bin string) string {
	return strings.NewReplacer("@P@", name, "@N@", name, "@B@", bin).Replace(f)
}

func TestExpansionTimeCode(t *testing.T) {
	l := newBashLab(t)
	bin := filepath.Join(filepath.Dir(l.dir), "bin")
	// Every fragment on its own.
	understood := 0
	for _, f := range expandFragments {
		if checkUnderstood(t, l, fill(f, "alpha", bin)) {
			understood++
		}
	}
	if understood == 0 {
		t.Fatal("no fragment is understood: the differential check never ran bash")
	}
	// The check can fail: a fragment that does run its payload is caught
	// when it is (wrongly) analysed as understood.
	if runs := l.run(t, `x='$(alpha)'; echo "${x@P}"`); len(runs) == 0 {
		t.Fatal("the canary did not run: the lab cannot see expansion-time code")
	}
	r := rand.New(rand.NewPCG(3, 5))
	n := 40
	if testing.Short() {
		n = 15
	}
	for range n {
		checkUnderstood(t, l, expandLine(r, bin))
	}
}

// FuzzExpansionTimeCode mutates combinations of the fragments.
func FuzzExpansionTimeCode(f *testing.F) {
	for i := range 6 {
		f.Add(uint64(i), uint64(i*17+3))
	}
	l := newBashLab(f)
	bin := filepath.Join(filepath.Dir(l.dir), "bin")
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		checkUnderstood(t, l, expandLine(rand.New(rand.NewPCG(s1, s2)), bin))
	})
}
