package executor

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"golang.org/x/net/idna"
)

// checkFormat reports whether s is a valid value of a JSON Schema
// "format" (2020-12's list): nil when it is, or when the format is not one
// Gantry asserts (unknown formats are annotations). The executor asserts
// formats on tool inputs (see docs/tool-schemas.md): a tool declaring
// "format": "uuid" is not called with "not-a-uuid". Checks use the
// standard library, and golang.org/x/net/idna for host names.
func checkFormat(format, s string) error {
	var ok bool
	switch format {
	case "date-time":
		ok = isDateTime(s)
	case "date":
		ok = isDate(s)
	case "time":
		ok = isTime(s)
	case "duration":
		ok = isDuration(s)
	case "email":
		ok = isEmail(s, false)
	case "idn-email":
		ok = isEmail(s, true)
	case "hostname":
		ok = isHostname(s, false)
	case "idn-hostname":
		ok = isHostname(s, true)
	case "ipv4":
		a, err := netip.ParseAddr(s)
		ok = err == nil && a.Is4()
	case "ipv6":
		a, err := netip.ParseAddr(s)
		ok = err == nil && a.Is6() && a.Zone() == ""
	case "uri":
		ok = isURI(s, true, false)
	case "uri-reference":
		ok = isURI(s, false, false)
	case "iri":
		ok = isURI(s, true, true)
	case "iri-reference":
		ok = isURI(s, false, true)
	case "uuid":
		ok = isUUID(s)
	case "uri-template":
		ok = isURITemplate(s)
	case "json-pointer":
		ok = isJSONPointer(s)
	case "relative-json-pointer":
		ok = isRelativeJSONPointer(s)
	case "regex":
		return checkRegex(s)
	default:
		return nil
	}
	if !ok {
		return errors.New("must be " + formatName(format))
	}
	return nil
}

// formatName says what a value of an asserted format is, for messages
// ("must be " + name). A switch, not a map: nothing is built at init.
func formatName(format string) string {
	switch format {
	case "date-time":
		return "an RFC 3339 date-time (2024-05-01T13:45:00Z)"
	case "date":
		return "an RFC 3339 date (2024-05-01)"
	case "time":
		return "an RFC 3339 time with offset (13:45:00Z)"
	case "duration":
		return "an ISO 8601 duration (P3DT4H)"
	case "email", "idn-email":
		return "an email address"
	case "hostname", "idn-hostname":
		return "a host name"
	case "ipv4":
		return "an IPv4 address"
	case "ipv6":
		return "an IPv6 address"
	case "uri":
		return "an absolute URI"
	case "uri-reference":
		return "a URI reference"
	case "iri":
		return "an absolute IRI"
	case "iri-reference":
		return "an IRI reference"
	case "uuid":
		return "a UUID"
	case "uri-template":
		return "a URI template (RFC 6570)"
	case "json-pointer":
		return "a JSON pointer"
	case "relative-json-pointer":
		return "a relative JSON pointer"
	case "regex":
		return "a regular expression"
	}
	return "a " + format
}

func digits(s string, n int) (int, bool) {
	if len(s) != n {
		return 0, false
	}
	v := 0
	for i := 0; i < n; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, true
}

// isDate: full-date of RFC 3339 (YYYY-MM-DD, a day that exists).
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	y, ok1 := digits(s[:4], 4)
	m, ok2 := digits(s[5:7], 2)
	d, ok3 := digits(s[8:], 2)
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// isTime: full-time of RFC 3339 (HH:MM:SS[.frac](Z|±HH:MM)); a leap
// second only where it falls at 23:59:60 UTC.
func isTime(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return false
	}
	h, ok1 := digits(s[:2], 2)
	m, ok2 := digits(s[3:5], 2)
	sec, ok3 := digits(s[6:8], 2)
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 60 {
		return false
	}
	rest := s[8:]
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		rest = rest[i:]
	}
	var offMin int
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3], 2)
		om, ok2 := digits(rest[4:], 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return false
		}
		offMin = oh*60 + om
		if rest[0] == '+' {
			offMin = -offMin
		}
	default:
		return false
	}
	if sec == 60 {
		utc := ((h*60+m+offMin)%1440 + 1440) % 1440
		return utc == 23*60+59
	}
	return true
}

// isDateTime: date-time of RFC 3339 (date "T" time, either case).
func isDateTime(s string) bool {
	if len(s) < 11 || (s[10] != 'T' && s[10] != 't') {
		return false
	}
	return isDate(s[:10]) && isTime(s[11:])
}

// isDuration: the ISO 8601 durations of RFC 3339's appendix A: P, then
// weeks alone, or years/months/days and a T with hours/minutes/seconds, in
// that order, each at least once where present.
func isDuration(s string) bool {
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || rest == "" {
		return false
	}
	date, tm, hasT := strings.Cut(rest, "T")
	if hasT && tm == "" {
		return false
	}
	units := func(s, order string) bool {
		first := false
		for s != "" {
			i := 0
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			if i == 0 || i == len(s) {
				return false
			}
			k := strings.IndexByte(order, s[i])
			if k < 0 || (k > 0 && first) {
				return false // units in order, and after the first one each next one (P1Y2D lacks M)
			}
			first = true
			order = order[k+1:]
			s = s[i+1:]
		}
		return true
	}
	if strings.HasSuffix(date, "W") && !hasT {
		_, ok := digits(date[:len(date)-1], len(date)-1)
		return ok && len(date) > 1
	}
	return units(date, "YMD") && units(tm, "HMS")
}

// isEmail: an RFC 5321 address (local@domain): a dot-atom or quoted
// local part of at most 64 bytes, a host name or an address literal
// ([192.0.2.1], [IPv6:…]); nothing else (no display name, no angle
// brackets). idn (RFC 6531) allows non-ASCII characters.
func isEmail(s string, idn bool) bool {
	at := strings.LastIndexByte(s, '@')
	if at < 1 || at > 64 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if q, ok := strings.CutPrefix(local, `"`); ok {
		q, ok = strings.CutSuffix(q, `"`)
		if !ok {
			return false
		}
		for i := 0; i < len(q); i++ {
			c := q[i]
			switch {
			case c == '\\':
				i++
				if i >= len(q) || q[i] < ' ' || q[i] > '~' {
					return false
				}
			case c == '"' || c < ' ' || c == 0x7f || (c >= utf8.RuneSelf && !idn):
				return false
			}
		}
	} else {
		for _, atom := range strings.Split(local, ".") {
			if atom == "" {
				return false
			}
			for i := 0; i < len(atom); i++ {
				c := atom[i]
				ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
					strings.IndexByte("!#$%&'*+/=?^_`{|}~-", c) >= 0 || (idn && c >= utf8.RuneSelf)
				if !ok {
					return false
				}
			}
		}
		if idn && !utf8.ValidString(local) {
			return false
		}
	}
	if lit, ok := strings.CutPrefix(domain, "["); ok {
		lit, ok = strings.CutSuffix(lit, "]")
		if v6, isV6 := strings.CutPrefix(lit, "IPv6:"); isV6 {
			ad, err := netip.ParseAddr(v6)
			return ok && err == nil && ad.Is6() && ad.Zone() == ""
		}
		ad, err := netip.ParseAddr(lit)
		return ok && err == nil && ad.Is4()
	}
	if idn {
		// RFC 6531 mail domains may come in any normalisation form; IDNA
		// checks the NFC one.
		domain = norm.NFC.String(domain)
	}
	return isHostname(domain, idn)
}

// hostnameIDNA validates host names by IDNA 2008 for registration (UTS
// #46 without mapping): each label's code points against the IDNA tables,
// the hyphen, joiner and Bidi rules, an A-label ("xn--") as valid
// Punycode of a valid U-label, and the lengths of the ASCII form (labels
// of 1–63 octets, 253 in all). "_" is refused (StrictDomainName).
var hostnameIDNA = idna.New(idna.ValidateForRegistration(), idna.CheckHyphens(true), idna.CheckJoiners(true), idna.Transitional(false))

// isHostname: RFC 1123 host names (ASCII letters, digits and hyphens;
// "--" in positions 3–4 only in an A-label, which must be valid) or, with
// idn, RFC 5890 internationalised ones (U-labels too; the ideographic and
// full-width full stops separate labels). Both are checked by
// golang.org/x/net/idna; ASCII letters may be in either case.
func isHostname(s string, idn bool) bool {
	if idn {
		s = strings.NewReplacer("\u3002", ".", "\uFF0E", ".", "\uFF61", ".").Replace(s)
	} else {
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return false
			}
		}
	}
	if s == "" || strings.HasSuffix(s, ".") {
		return false
	}
	a, err := hostnameIDNA.ToASCII(asciiLower(s))
	return err == nil && len(a) <= 253
}

// asciiLower lowers the ASCII letters of s (IDNA registration refuses
// upper case, which host names allow), leaving other characters alone.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// uriChar reports whether c may appear in a URI (RFC 3986: unreserved,
// reserved, or the % of an escape).
func uriChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0
}

// isURI: an RFC 3986 URI (abs: with a scheme) or reference; iri allows
// non-ASCII characters (RFC 3987). Percent escapes must be complete; the
// structure is what net/url parses.
func isURI(s string, abs, iri bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			if !iri {
				return false
			}
			continue
		}
		if !uriChar(c) {
			return false
		}
		if c == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			return false
		}
	}
	if _, rest, ok := strings.Cut(s, "//"); ok && (strings.Index(s, "//") == 0 || strings.Index(s, ":") < strings.Index(s, "//")) {
		authority := rest
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			authority = rest[:i]
		}
		if strings.Count(authority, "@") > 1 {
			return false
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	if abs && u.Scheme == "" {
		return false
	}
	if u.Scheme != "" {
		c := u.Scheme[0]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	// "[" and "]" only around an IP literal host.
	if strings.ContainsAny(u.Path+u.RawQuery+u.Fragment, "[]") {
		return false
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isUUID: 8-4-4-4-12 hexadecimal digits (RFC 9562), any version.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// isURITemplate: RFC 6570 — literals and {expressions} of an optional
// operator and comma-separated variables (name, then :prefix or *).
func isURITemplate(s string) bool {
	for s != "" {
		open := strings.IndexAny(s, "{}")
		if open < 0 {
			return !strings.ContainsAny(s, " \"<>\\^`|\x7f") && strings.IndexFunc(s, unicode.IsControl) < 0
		}
		if s[open] == '}' {
			return false
		}
		lit := s[:open]
		if strings.ContainsAny(lit, " \"<>\\^`|\x7f") || strings.IndexFunc(lit, unicode.IsControl) >= 0 {
			return false
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			return false
		}
		expr := s[open+1 : open+end]
		s = s[open+end+1:]
		if expr != "" && strings.IndexByte("+#./;?&=,!@|", expr[0]) >= 0 {
			expr = expr[1:]
		}
		if expr == "" {
			return false
		}
		for _, v := range strings.Split(expr, ",") {
			name, mod := v, ""
			if i := strings.IndexAny(v, ":*"); i >= 0 {
				name, mod = v[:i], v[i:]
			}
			if name == "" || name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..") {
				return false
			}
			for i := 0; i < len(name); i++ {
				c := name[i]
				if !(c == '_' || c == '.' || c == '%' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
					return false
				}
			}
			switch {
			case mod == "" || mod == "*":
			case mod[0] == ':':
				n, err := strconv.Atoi(mod[1:])
				if err != nil || n < 1 || n > 9999 || mod[1] == '0' {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}

// isJSONPointer: RFC 6901 ("" or /-separated tokens, ~ only as ~0 or ~1).
func isJSONPointer(s string) bool {
	if s != "" && s[0] != '/' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 >= len(s) || (s[i+1] != '0' && s[i+1] != '1')) {
			return false
		}
	}
	return true
}

// isRelativeJSONPointer: a non-negative integer without leading zeros,
// then "#" or a JSON pointer.
func isRelativeJSONPointer(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || (i > 1 && s[0] == '0') {
		return false
	}
	rest := s[i:]
	return rest == "#" || isJSONPointer(rest)
}

// checkRegex: the "regex" format means ECMA-262. Go's regexp/syntax
// (RE2) parses a subset: what it refuses only for features RE2 lacks
// (lookaround, backreferences, escapes ECMA-262 allows) is accepted; a
// pattern that is broken in both (an unclosed group or class, a repeat of
// nothing, a bad range) is not.
func checkRegex(s string) error {
	// What Go (RE2) reads but ECMA-262 does not have: Python's named
	// groups, comment groups, global inline flags, Go's own escapes.
	for _, g := range []string{"(?P<", "(?P=", "(?#", `\a`, `\A`, `\z`, `\C`, `\Q`} {
		if i := strings.Index(s, g); i >= 0 && !escaped(s, i) {
			return fmt.Errorf("must be %s (%s is not ECMA-262)", formatName("regex"), g)
		}
	}
	if i := strings.Index(s, "(?"); i >= 0 && !escaped(s, i) {
		j := i + 2
		for j < len(s) && strings.IndexByte("imsU-", s[j]) >= 0 {
			j++
		}
		if j > i+2 && j < len(s) && s[j] == ')' {
			return fmt.Errorf("must be %s (global inline flags are not ECMA-262)", formatName("regex"))
		}
	}
	// ECMA-262's empty classes, which RE2 refuses: [] matches nothing,
	// [^] any character.
	s = strings.ReplaceAll(strings.ReplaceAll(s, "[^]", `[\s\S]`), "[]", `[^\s\S]`)
	_, err := syntax.Parse(s, syntax.Perl)
	if err == nil {
		return nil
	}
	var se *syntax.Error
	if errors.As(err, &se) {
		switch se.Code {
		case syntax.ErrMissingParen, syntax.ErrUnexpectedParen, syntax.ErrMissingBracket, syntax.ErrMissingRepeatArgument,
			syntax.ErrInvalidRepeatOp, syntax.ErrInvalidCharRange, syntax.ErrTrailingBackslash:
			return fmt.Errorf("must be %s (%s)", formatName("regex"), se.Code)
		}
	}
	return nil
}

// escaped reports whether s[i] follows an odd number of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}
