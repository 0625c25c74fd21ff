package shellparse

import (
	"regexp"
	"strings"
	"sync"
)

// multiArg matches an option token that takes several words: --rawfile=2@2.
var multiArg = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+)=([2-9])(?:@([1-9]))?$`) })

// flagSpec describes one option of a command.
type flagSpec struct {
	// arg: 0 none, 1 required (next word or attached), N > 1 the N
	// following words (jq --arg name value, --rawfile name file), -1
	// optional and only attached (--color=always).
	arg int8
	// at is the word of a multi-word value (1-based) the effects apply
	// to; 0 means the last (--rawfile NAME FILE: the file).
	at int8
	// eff are the option's effects, letters:
	//
	//	r  its value is a file the command reads
	//	w  its value is a file the command writes; without a value, the
	//	   command's operands become files it writes (sed -i)
	//	d  destructive: what it writes is removed or replaced
	//	x  it runs another program
	//	n  it reaches the network
	//	o  known, but its effect cannot be analysed
	//	R  operands are read recursively (grep -r)
	//	P  it supplies the pattern, so the first operand is a file (grep -e)
	//	a  its value may name a file curl-style: @FILE, NAME@FILE,
	//	   NAME=@FILE or NAME=<FILE reads FILE (see atFile)
	//	c  a value without "=" is a file read (curl -b FILE)
	//	L  its value (or, without a value, each operand) is a file that
	//	   lists more files the command reads: those are unknown
	//	F  a recursion follows symbolic links (grep -R, rg -L, cp -L)
	//	N  a recursion does not follow symbolic links (diff --no-dereference)
	//	T  it walks its operand directories for names and metadata (ls -R)
	eff string
}

// cmdSpec is what the model knows about one command.
type cmdSpec struct {
	short map[byte]flagSpec
	long  map[string]flagSpec
	// anyArg accepts every argument: the command has no option that
	// writes, runs or reaches the network (ps, expr).
	anyArg bool
	// numeric accepts -NUM (head -5, seq -3 3).
	numeric bool
	// globFiles: an option opens more files than its operands (a list
	// file, a link-following or plain recursion, curl's @file): a glob
	// operand whose expansion starts with "-" would be such an option.
	globFiles bool
	// walks: the command walks its operand directories (du, tree) for
	// names and metadata; with a following option (F) it reaches what
	// the links below point at.
	walks bool
	// ops is the role of operands: see the opXxx constants.
	ops byte
	// class is the command's own class with known options.
	class Class
	// why explains class when it is not read-only.
	why string
	// check replaces the generic option scan.
	check func(an *analyzer, idx int, args []Word)
	// globSafe: no option of the command has an effect, so a glob
	// operand that expands to an option cannot make it write or run.
	globSafe bool
	// recursive: operands (default ".") are read recursively.
	recursive bool
}

// Operand roles.
const (
	opNone    = 'n' // not paths (echo, printf)
	opRead    = 'r' // files read
	opPattern = 'p' // a pattern, then files read (unless an option gave the pattern)
	opWrite   = 'w' // files written
	opDestroy = 'd' // files removed
	opCopy    = 'c' // sources read, the last operand written (cp, install)
	opMove    = 'm' // sources removed, the last operand written (mv)
	opInOut   = 'i' // first read, second written (uniq in out)
	opMode    = 'M' // a mode or owner, then files written (chmod, chown)
	opLink    = 'l' // link targets (not opened), the last operand written (ln)
)

// spec builds a cmdSpec from a compact option list: whitespace-separated
// tokens name[=|=?|=N|=N@K][:effects], for example "-a --all -n= --lines=
// --color=? -o=:w -r:R --arg=2 --rawfile=2@2:r". "=N" takes the N
// following words, and the effects apply to the last of them, or to word
// K with "@K". "*" accepts every argument, "-#" accepts -NUM.
func spec(ops byte, class Class, tokens string) *cmdSpec {
	s := &cmdSpec{ops: ops, class: class, short: map[byte]flagSpec{}, long: map[string]flagSpec{}, globSafe: true}
	for _, tok := range strings.Fields(tokens) {
		switch tok {
		case "*":
			s.anyArg = true
			continue
		case "-#":
			s.numeric = true
			continue
		}
		name, eff, _ := strings.Cut(tok, ":")
		var fs flagSpec
		fs.eff = eff
		switch {
		case strings.HasSuffix(name, "=?"):
			fs.arg, name = -1, strings.TrimSuffix(name, "=?")
		case multiArg().MatchString(name):
			m := multiArg().FindStringSubmatch(name)
			fs.arg = int8(m[2][0] - '0')
			if m[3] != "" {
				fs.at = int8(m[3][0] - '0')
			}
			if fs.at > fs.arg {
				panic("shellparse: bad option token " + tok)
			}
			name = m[1]
		case strings.HasSuffix(name, "="):
			fs.arg, name = 1, strings.TrimSuffix(name, "=")
		}
		if strings.ContainsAny(eff, "wdxno") {
			s.globSafe = false
		}
		if strings.ContainsAny(eff, "acLFR") {
			s.globFiles = true
		}
		switch {
		case strings.HasPrefix(name, "--"):
			s.long[name] = fs
		case len(name) == 2 && name[0] == '-':
			s.short[name[1]] = fs
		default:
			panic("shellparse: bad option token " + tok)
		}
	}
	return s
}

// with returns a copy of s with a check function.
func (s *cmdSpec) with(check func(an *analyzer, idx int, args []Word)) *cmdSpec {
	c := *s
	c.check = check
	return &c
}

func (s *cmdSpec) walk() *cmdSpec {
	c := *s
	c.walks = true
	return &c
}

func (s *cmdSpec) recurse() *cmdSpec {
	c := *s
	c.recursive = true
	return &c
}

// lookupLong finds a long option by exact name or unambiguous prefix, as
// getopt_long does (--out is --output).
func (s *cmdSpec) lookupLong(name string) (string, flagSpec, bool) {
	if fs, ok := s.long[name]; ok {
		return name, fs, true
	}
	found := ""
	for n := range s.long {
		if strings.HasPrefix(n, name) {
			if found != "" {
				return "", flagSpec{}, false // ambiguous
			}
			found = n
		}
	}
	if found == "" {
		return "", flagSpec{}, false
	}
	return found, s.long[found], true
}

// optValue is an option's value with the option's effects.
type optValue struct {
	flag string
	val  Word
	eff  string
}

// scanResult is the outcome of scanning a command's arguments.
type scanResult struct {
	operands []Word
	values   []optValue
	effects  string // effects of value-less options seen
	unknown  []string
	// listFlag and getFlag: git's -l/--list and --get… forms (see mark).
	listFlag, getFlag bool
}

// scanArgs reads args (the words after the command name) against s, GNU
// style: options may follow operands, "--" ends them, short options
// cluster (-la), an option's value is attached or the next word.
func (s *cmdSpec) scanArgs(args []Word) scanResult {
	var r scanResult
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if w.Dynamic || s.anyArg || v == "-" || !strings.HasPrefix(v, "-") {
			r.operands = append(r.operands, w)
			continue
		}
		if v == "--" {
			r.operands = append(r.operands, args[i+1:]...)
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v, "=")
			full, fs, ok := s.lookupLong(name)
			if !ok {
				r.unknown = append(r.unknown, v)
				continue
			}
			switch {
			case fs.arg == 0 && hasVal:
				r.unknown = append(r.unknown, v)
			case fs.arg == 0:
				r.effects += fs.eff
			case hasVal && fs.arg > 1:
				// --rawfile=NAME FILE is not a form the programs accept.
				r.unknown = append(r.unknown, v)
			case hasVal:
				r.values = append(r.values, optValue{flag: full, val: Word{Text: val, Value: val}, eff: fs.eff})
			case fs.arg == -1:
				r.effects += fs.eff
			default:
				n := int(fs.arg)
				if i+n >= len(args) {
					r.unknown = append(r.unknown, v+" (missing value)")
					i = len(args)
					continue
				}
				r.values = append(r.values, optValue{flag: full, val: args[i+fs.word()], eff: fs.eff})
				i += n
			}
			continue
		}
		if s.numeric && isDigits(v[1:]) {
			continue
		}
		// A cluster of short options.
		for j := 1; j < len(v); j++ {
			fs, ok := s.short[v[j]]
			if !ok {
				r.unknown = append(r.unknown, "-"+v[j:j+1]+" (in "+v+")")
				break
			}
			if fs.arg == 0 {
				r.effects += fs.eff
				continue
			}
			if fs.arg == -1 {
				r.effects += fs.eff
				break // the rest of the cluster is its value
			}
			if j+1 < len(v) {
				val := v[j+1:]
				r.values = append(r.values, optValue{flag: v[:j+1], val: Word{Text: val, Value: val}, eff: fs.eff})
			} else if i+int(fs.arg) < len(args) {
				r.values = append(r.values, optValue{flag: v, val: args[i+fs.word()], eff: fs.eff})
				i += int(fs.arg)
			} else {
				r.unknown = append(r.unknown, v+" (missing value)")
			}
			break
		}
	}
	return r
}

// word is the offset, from the option, of the value word its effects
// apply to.
func (fs flagSpec) word() int {
	if fs.at > 0 {
		return int(fs.at)
	}
	return int(fs.arg)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
