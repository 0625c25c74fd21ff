package executor

import (
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/benchcpu"
)

// TestCheckFormat: each asserted format accepts what its specification
// allows and refuses obvious garbage; unknown formats accept anything.
func TestCheckFormat(t *testing.T) {
	tests := []struct {
		format         string
		valid, invalid []string
	}{
		{"date-time", []string{"2024-05-01T13:45:00Z", "2024-05-01t13:45:00.123+02:00", "2016-12-31T23:59:60Z", "2016-12-31T15:59:60-08:00", "2024-02-29T00:00:00z"},
			[]string{"2024-05-01", "2024-05-01 13:45:00Z", "2024-05-01T13:45:00", "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T13:45:60Z", "yesterday", "2024-05-01T13:45:00+2:00", "2024-05-01T13:45:00.Z", "２０２４-05-01T13:45:00Z"}},
		{"date", []string{"2024-05-01", "2000-02-29", "1999-12-31"}, []string{"2024-5-1", "1900-02-29", "2024-04-31", "2024-05-01T00:00:00Z", "20240501", ""}},
		{"time", []string{"13:45:00Z", "13:45:00.5+01:00", "23:59:60Z", "00:00:00-00:00"}, []string{"13:45:00", "13:45Z", "25:00:00Z", "12:00:60Z", "13:45:00+24:00"}},
		{"duration", []string{"P1D", "PT1H", "P1Y2M3DT4H5M6S", "P2W", "PT0S", "P1DT1M"}, []string{"P", "PT", "1D", "P1H", "PT1D", "P1W2D", "P1M1Y", "P1.5D", "P-1D"}},
		{"email", []string{"joe@example.com", "joe.bloggs+tag@sub.example.co.uk", "a@[127.0.0.1]", "a@[IPv6:::1]", `"joe bloggs"@example.com`},
			[]string{"joe", "@example.com", "joe@", "Joe <joe@example.com>", "joe@@example.com", "joe@exa mple.com", ".joe@example.com", "joe..b@example.com", "jöe@example.com", "joe@-example.com"}},
		{"idn-email", []string{"jöe@例え.テスト", "joe@example.com"}, []string{"jöe", "jöe@"}},
		{"hostname", []string{"example.com", "a", "xn--bcher-kva.example", "a-b.c1"}, []string{"", "-a.com", "a-.com", "a..com", "exa mple.com", "ex_ample.com", strings.Repeat("a", 64) + ".com", "a.com.", "bü.com", "ab--c.com"}},
		{"idn-hostname", []string{"例え.テスト", "bücher.example"}, []string{"", "-a", "a..b", "a b"}},
		{"ipv4", []string{"127.0.0.1", "255.255.255.255", "0.0.0.0"}, []string{"256.0.0.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "::1", " 1.2.3.4"}},
		{"ipv6", []string{"::1", "2001:db8::8a2e:370:7334", "::ffff:1.2.3.4", "fe80::1"}, []string{"127.0.0.1", "2001:db8:::1", "fe80::1%eth0", "12345::", "g::1"}},
		{"uri", []string{"https://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:joe@example.com", "http://[::1]:8080/", "file:///tmp/x%20y"},
			[]string{"/relative/path", "example.com", "https://exa mple.com", "http://example.com/%zz", "1http://x", "http://example.com/a b", "http://x/<y>", "https://例え.テスト/"}},
		{"uri-reference", []string{"/relative/path", "../up", "#frag", "", "https://example.com"}, []string{"a b", "\\\\server\\share", "%"}},
		{"iri", []string{"https://例え.テスト/パス", "https://example.com"}, []string{"/relative", "https://ex ample.com"}},
		{"iri-reference", []string{"/パス", "#x"}, []string{"a b"}},
		{"uuid", []string{"123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000", "123E4567-E89B-12D3-A456-426614174000"},
			[]string{"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-42661417400g", "{123e4567-e89b-12d3-a456-426614174000}"}},
		{"uri-template", []string{"http://example.com/{id}", "/search{?q,lang}", "{+path}/x", "{var:3}", "{list*}", "plain"}, []string{"{", "}", "{}", "{a b}", "{var:0}", "{var:x}", "{{x}}"}},
		{"json-pointer", []string{"", "/a", "/a~0b/c~1d", "/"}, []string{"a", "/a~", "/a~2"}},
		{"relative-json-pointer", []string{"0", "1/a", "2#", "0/"}, []string{"", "/a", "01/a", "-1", "1#/a"}},
		{"regex", []string{"^[a-z]+$", `(?=x)`, `(a)\1`, `\d{2,}`}, []string{"(abc", "abc)", "[a-", "*a", "[z-a]", `a\`, "a**"}},
		{"made-up-format", []string{"anything", ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			for _, v := range tt.valid {
				if err := checkFormat(tt.format, v); err != nil {
					t.Errorf("%q: want valid, got %v", v, err)
				}
			}
			for _, v := range tt.invalid {
				if err := checkFormat(tt.format, v); err == nil {
					t.Errorf("%q: want invalid", v)
				}
			}
		})
	}
}

// TestFormatValidation: the executor rejects inputs whose strings are not
// of their format and names each field, wherever the format sits —
// properties, items, $ref, an anchor, the alternative a value is of —
// and accepts valid ones, including values of an alternative without a
// format.
func TestFormatValidation(t *testing.T) {
	const schema = `{"type":"object","$defs":{"when":{"$anchor":"when","type":"string","format":"date-time"}},
		"properties":{
			"id":{"type":"string","format":"uuid"},
			"url":{"type":"string","format":"uri"},
			"ips":{"type":"array","items":{"type":"string","format":"ipv4"}},
			"at":{"$ref":"#/$defs/when"},
			"at2":{"$ref":"#when"},
			"maybe":{"anyOf":[{"type":"string","format":"email"},{"type":"null"}]},
			"either":{"oneOf":[{"type":"string","format":"ipv4"},{"type":"integer"}]},
			"pick":{"anyOf":[{"type":"string","format":"ipv4"},{"type":"string","format":"ipv6"}]},
			"num":{"type":"number","format":"date"},
			"any":{"format":"hostname"},
			"meta":{"type":"object","patternProperties":{"^d_":{"format":"date"},"^n_":{"type":"string"}},"additionalProperties":{"type":"string","format":"email"}},
			"cond":{"if":{"type":"string","maxLength":5},"then":{"format":"time"},"else":{"format":"duration"}}
		},
		"dependentSchemas":{"id":{"properties":{"by":{"format":"email"}}}}}`
	c := compileSchema(json.RawMessage(schema))
	if c.err != nil {
		t.Fatal(c.err)
	}
	tests := []struct {
		in   string
		want []string // field errors; nil: valid
	}{
		{`{"id":"123e4567-e89b-12d3-a456-426614174000","url":"https://x.dev","ips":["1.2.3.4"],"at":"2024-05-01T13:45:00Z","at2":"2024-05-01T13:45:00Z","maybe":null,"either":7,"pick":"::1","num":3,"any":4}`, nil},
		{`{"maybe":"joe@example.com","either":"10.0.0.1","pick":"10.0.0.1"}`, nil},
		{`{"id":"nope"}`, []string{"/id: not a valid uuid: must be a UUID"}},
		{`{"url":"not a uri","ips":["1.2.3.4","999.1.1.1"]}`, []string{"/ips/1: not a valid ipv4: must be an IPv4 address", "/url: not a valid uri: must be an absolute URI"}},
		{`{"at":"yesterday","at2":"2024-02-30T00:00:00Z"}`, []string{"/at: not a valid date-time: must be an RFC 3339 date-time (2024-05-01T13:45:00Z)", "/at2: not a valid date-time: must be an RFC 3339 date-time (2024-05-01T13:45:00Z)"}},
		{`{"maybe":"joe"}`, []string{"/maybe: not a valid email: must be an email address"}},
		{`{"either":"1.2.3"}`, []string{"/either: not a valid ipv4: must be an IPv4 address"}},
		{`{"pick":"nonsense"}`, []string{"/pick: not a valid ipv4: must be an IPv4 address"}},
		{`{"any":"-bad-"}`, []string{"/any: not a valid hostname: must be a host name"}},
		{`{"meta":{"d_x":"2024-01-01","n_y":"free","e":"a@b.co"},"cond":"P1DT10H","by":"not checked without id"}`, nil},
		{`{"meta":{"d_x":"2024-13-01","e":"nobody"}}`, []string{"/meta/d_x: not a valid date: must be an RFC 3339 date (2024-05-01)", "/meta/e: not a valid email: must be an email address"}},
		{`{"cond":"1:00"}`, []string{"/cond: not a valid time: must be an RFC 3339 time with offset (13:45:00Z)"}},
		{`{"cond":"one day"}`, []string{"/cond: not a valid duration: must be an ISO 8601 duration (P3DT4H)"}},
		{`{"id":"123e4567-e89b-12d3-a456-426614174000","by":"me"}`, []string{"/by: not a valid email: must be an email address"}},
	}
	for _, tt := range tests {
		v, err := decodeInput(json.RawMessage(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		err = c.schema.Validate(v)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: want valid, got %v", tt.in, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: want invalid", tt.in)
			continue
		}
		var got []string
		for _, f := range fieldErrors(c.schema, err) {
			got = append(got, f.Path+": "+f.Message)
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: field errors:\n%s\nwant:\n%s", tt.in, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

// FuzzCheckFormat: no checker panics, and the checkers agree with each
// other and with the standard library where they overlap.
func FuzzCheckFormat(f *testing.F) {
	for _, s := range []string{"2024-05-01T13:45:00Z", "23:59:60+00:00", "P1Y2M3DT4H5M6S", "joe@example.com", "a@[IPv6:::1]", "xn--bcher-kva.example",
		"::ffff:1.2.3.4", "https://example.com/%41", "123e4567-e89b-12d3-a456-426614174000", "{+a,b:3,c*}", "/a~0", "1#", "(?=a)\\1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range []string{"date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
			"uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex"} {
			_ = checkFormat(name, s)
		}
		if isDateTime(s) && (!isDate(s[:10]) || !isTime(s[11:])) {
			t.Fatalf("date-time %q without its date and time", s)
		}
		if checkFormat("uri", s) == nil && checkFormat("uri-reference", s) != nil {
			t.Fatalf("uri %q is not a uri-reference", s)
		}
		if checkFormat("uri", s) == nil && checkFormat("iri", s) != nil {
			t.Fatalf("uri %q is not an iri", s)
		}
		if checkFormat("email", s) == nil && checkFormat("idn-email", s) != nil {
			t.Fatalf("email %q is not an idn-email", s)
		}
		if checkFormat("hostname", s) == nil && checkFormat("idn-hostname", s) != nil {
			t.Fatalf("hostname %q is not an idn-hostname", s)
		}
		a, err := netip.ParseAddr(s)
		if (checkFormat("ipv4", s) == nil) != (err == nil && a.Is4()) {
			t.Fatalf("ipv4 %q disagrees with netip", s)
		}
		if err := checkFormat("regex", s); err != nil && !strings.Contains(err.Error(), "regular expression") {
			t.Fatalf("regex %q: %v", s, err)
		}
		if err := checkFormat("uuid", s); err != nil && errors.Unwrap(err) != nil {
			t.Fatalf("uuid error wraps: %v", err)
		}
	})
}

// BenchmarkValidateInput: validating a valid input (the hot path of every
// call) against a schema without formats and against the same schema
// with formats (the validator, then the walk for formats).
func BenchmarkValidateInput(b *testing.B) {
	for _, bc := range []struct{ name, schema string }{
		{"plain", `{"type":"object","properties":{"id":{"type":"string"},"at":{"type":"string"},"url":{"type":"string"},"ips":{"type":"array","items":{"type":"string"}},"n":{"type":"integer","minimum":0}},"required":["id","at"],"additionalProperties":false}`},
		{"formats", `{"type":"object","properties":{"id":{"type":"string","format":"uuid"},"at":{"type":"string","format":"date-time"},"url":{"type":"string","format":"uri"},"ips":{"type":"array","items":{"type":"string","format":"ipv4"}},"n":{"type":"integer","minimum":0}},"required":["id","at"],"additionalProperties":false}`},
		{"refs", refsBenchSchema},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := compileSchema(json.RawMessage(bc.schema))
			if c.err != nil {
				b.Fatal(c.err)
			}
			v, err := decodeInput(json.RawMessage(`{"id":"123e4567-e89b-12d3-a456-426614174000","at":"2024-05-01T13:45:00Z","url":"https://example.com/a?b=c","ips":["10.0.0.1","192.168.1.1"],"n":3}`))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			defer benchcpu.Start(b)()
			for b.Loop() {
				if err := c.schema.Validate(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// refsBenchSchema is the formats schema with its fields behind references
// (pointers, an anchor), as generated schemas write them.
const refsBenchSchema = `{"type":"object","$defs":{"id":{"type":"string","format":"uuid"},"at":{"$anchor":"at","type":"string","format":"date-time"},"ip":{"type":"string","format":"ipv4"}},"properties":{"id":{"$ref":"#/$defs/id"},"at":{"$ref":"#at"},"url":{"type":"string","format":"uri"},"ips":{"type":"array","items":{"$ref":"#/$defs/ip"}},"n":{"type":"integer","minimum":0}},"required":["id","at"],"additionalProperties":false}`

// BenchmarkExplainInput: naming the violations of an invalid input whose
// fields sit behind references (the walk follows each $ref).
func BenchmarkExplainInput(b *testing.B) {
	c := compileSchema(json.RawMessage(refsBenchSchema))
	if c.err != nil {
		b.Fatal(c.err)
	}
	v, err := decodeInput(json.RawMessage(`{"id":"x","at":"yesterday","url":"https://example.com/a?b=c","ips":["10.0.0.1",7],"n":-3}`))
	if err != nil {
		b.Fatal(err)
	}
	verr := c.schema.Validate(v)
	if verr == nil {
		b.Fatal("accepted")
	}
	b.ReportAllocs()
	defer benchcpu.Start(b)()
	for b.Loop() {
		if fe := fieldErrors(c.schema, verr); len(fe) < 4 {
			b.Fatalf("field errors %v", fe)
		}
	}
}

// TestRefIndex: the walks resolve references by pointer, by anchor (older
// drafts' "$id": "#name" included, translated) and by an embedded
// resource's $id, so violations behind them are named at their field.
func TestRefIndex(t *testing.T) {
	const schema = `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"http://example.com/r.json","type":"object",
		"definitions":{"t":{"$id":"t.json","items":[{"type":"string"}]},"n":{"$id":"#num","type":"integer"}},
		"properties":{"a":{"$ref":"t.json#/items/0"},"b":{"$ref":"#num"},"c":{"$ref":"#/definitions/n"}}}`
	c := compileSchema(json.RawMessage(schema))
	if c.err != nil {
		t.Fatal(c.err)
	}
	v, _ := decodeInput(json.RawMessage(`{"a":1,"b":"x","c":1.5}`))
	err := c.schema.Validate(v)
	if err == nil {
		t.Fatal("accepted")
	}
	var got []string
	for _, f := range fieldErrors(c.schema, err) {
		got = append(got, f.Path+": "+f.Message)
	}
	want := []string{"/a: got integer, want string", "/b: got string, want integer", "/c: got number, want integer"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("field errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDynamicRefFormats: the walk for formats follows a $dynamicRef the
// way the validator does, through the dynamic scope: a generic list whose
// items are "$dynamicRef": "#item" takes its item schema from the
// outermost resource of the scope that defines the dynamic anchor (the
// "emails" resource, with a format), and the list's own default when
// reached directly.
func TestDynamicRefFormats(t *testing.T) {
	const overridden = `{"$id":"http://example.com/root","type":"object",
		"$defs":{"emails":{"$id":"emails","$ref":"list","$defs":{"item":{"$dynamicAnchor":"item","type":"string","format":"email"}}},
			"list":{"$id":"list","type":"array","items":{"$dynamicRef":"#item"},"$defs":{"default":{"$dynamicAnchor":"item"}}}},
		"properties":{"to":{"$ref":"emails"},"any":{"$ref":"list"}}}`
	c := compileSchema(json.RawMessage(overridden))
	if c.err != nil {
		t.Fatal(c.err)
	}
	for _, tc := range []struct {
		in   string
		want string // "" valid
	}{
		{`{"to":["joe@example.com"]}`, ""},
		{`{"to":["joe"]}`, "/to/0: not a valid email: must be an email address (expected string)"},
		{`{"any":["joe"]}`, ""}, // the list's own default item: anything
		{`{"to":[1]}`, "/to/0: got integer, want string"},
	} {
		if got := violations(c, tc.in); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestFormatsInContainsAndPropertyNames: a format under "contains" and
// "propertyNames" is asserted too — at least minContains items must
// match "contains" with valid formats, and every property name must be
// of its format.
func TestFormatsInContainsAndPropertyNames(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"to":{"type":"array","contains":{"type":"string","format":"email"}},
		"two":{"type":"array","contains":{"type":"string","format":"email"},"minContains":2},
		"any":{"type":"array","contains":{"type":"string","format":"email"},"minContains":0},
		"hosts":{"type":"object","propertyNames":{"format":"hostname"}}}}`
	c := compileSchema(json.RawMessage(schema))
	if c.err != nil {
		t.Fatal(c.err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"to":[1,"joe@example.com"]}`, ""},
		{`{"to":[1,"joe"]}`, `/to/1: not a valid email: must be an email address (at least 1 item(s) must match "contains")`},
		{`{"to":["joe","ann"]}`, `/to/0: not a valid email: must be an email address (at least 1 item(s) must match "contains"); /to/1: not a valid email: must be an email address (at least 1 item(s) must match "contains")`},
		{`{"to":[1,2]}`, `/to: must contain at least 1 item(s) matching "contains", got 0`},
		{`{"two":["a@example.com","b@example.com"]}`, ""},
		{`{"two":["a@example.com","b"]}`, `/two/1: not a valid email: must be an email address (at least 2 item(s) must match "contains")`},
		{`{"any":["b"]}`, ""},
		{`{"hosts":{"example.com":1,"b.example":2}}`, ""},
		{`{"hosts":{"example.com":1,"not a host":2}}`, `/hosts/not a host: property name "not a host" is not a valid hostname: must be a host name`},
	} {
		if got := violations(c, tc.in); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// violations validates the input in against c and returns its field
// errors joined by "; " ("" when it is valid).
func violations(c *compiled, in string) string {
	v, _ := decodeInput(json.RawMessage(in))
	err := c.schema.Validate(v)
	if err == nil {
		return ""
	}
	var msgs []string
	for _, f := range fieldErrors(c.schema, err) {
		msgs = append(msgs, f.String())
	}
	return strings.Join(msgs, "; ")
}

// TestFormatSuite runs the official JSON Schema Test Suite's optional
// format tests of 2020-12 (testdata/format-suite, a copy; its LICENSE is
// beside it) through the executor's validation, formats asserted. The
// cases listed in formatSuiteDeviations are known to differ, by choice
// (said why there).
func TestFormatSuite(t *testing.T) {
	files, _ := filepath.Glob("testdata/format-suite/*.json")
	if len(files) == 0 {
		t.Fatal("no format suite")
	}
	cases, deviations := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Tests       []struct {
				Description string          `json:"description"`
				Data        json.RawMessage `json:"data"`
				Valid       bool            `json:"valid"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(b, &groups); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range groups {
			// The suite's schemas are not object schemas; wrap them.
			c := compileSchema(json.RawMessage(`{"type":"object","properties":{"v":` + string(g.Schema) + `}}`))
			if c.err != nil {
				t.Fatalf("%s: %v", g.Description, c.err)
			}
			for _, tc := range g.Tests {
				cases++
				name := filepath.Base(f) + ": " + tc.Description
				v, err := decodeInput(json.RawMessage(`{"v":` + string(tc.Data) + `}`))
				if err != nil {
					t.Fatal(err)
				}
				got := c.schema.Validate(v) == nil
				if formatSuiteDeviations[name] {
					deviations++
					if got == tc.Valid {
						t.Errorf("%s: listed as a deviation but agrees with the suite now", name)
					}
					continue
				}
				if got != tc.Valid {
					t.Errorf("%q: %s: valid = %v, want %v", name, tc.Data, got, tc.Valid)
				}
			}
		}
	}
	t.Logf("%d cases, %d known deviations", cases, deviations)
}

// formatSuiteDeviations are the suite's format cases Gantry answers
// otherwise, by file and description.
var formatSuiteDeviations = map[string]bool{
	// IDNA (RFC 5890–5893): host names are checked by golang.org/x/net/idna
	// (UTS #46 for registration: tables, hyphens, joiners, Bidi rule), which
	// does not implement the CONTEXTO rules (middle dot, keraia, geresh,
	// katakana middle dot) nor the few code points RFC 5892 disallows by
	// exception but UTS #46 allows.
	"hostname.json: contains illegal char U+302E Hangul single dot tone mark":       true,
	"hostname.json: Exceptions that are DISALLOWED, right-to-left chars":            true,
	"hostname.json: Exceptions that are DISALLOWED, left-to-right chars":            true,
	"hostname.json: MIDDLE DOT with no preceding 'l'":                               true,
	"hostname.json: MIDDLE DOT with nothing preceding":                              true,
	"hostname.json: MIDDLE DOT with no following 'l'":                               true,
	"hostname.json: MIDDLE DOT with nothing following":                              true,
	"hostname.json: Greek KERAIA not followed by Greek":                             true,
	"hostname.json: Greek KERAIA not followed by anything":                          true,
	"hostname.json: Hebrew GERESH not preceded by anything":                         true,
	"hostname.json: Hebrew GERSHAYIM not preceded by anything":                      true,
	"hostname.json: KATAKANA MIDDLE DOT with no Hiragana, Katakana, or Han":         true,
	"hostname.json: KATAKANA MIDDLE DOT with no other characters":                   true,
	"idn-hostname.json: contains illegal char U+302E Hangul single dot tone mark":   true,
	"idn-hostname.json: Exceptions that are DISALLOWED, right-to-left chars":        true,
	"idn-hostname.json: Exceptions that are DISALLOWED, left-to-right chars":        true,
	"idn-hostname.json: MIDDLE DOT with no preceding 'l'":                           true,
	"idn-hostname.json: MIDDLE DOT with nothing preceding":                          true,
	"idn-hostname.json: MIDDLE DOT with no following 'l'":                           true,
	"idn-hostname.json: MIDDLE DOT with nothing following":                          true,
	"idn-hostname.json: Greek KERAIA not followed by Greek":                         true,
	"idn-hostname.json: Greek KERAIA not followed by anything":                      true,
	"idn-hostname.json: Hebrew GERESH not preceded by anything":                     true,
	"idn-hostname.json: Hebrew GERSHAYIM not preceded by anything":                  true,
	"idn-hostname.json: KATAKANA MIDDLE DOT with no Hiragana, Katakana, or Han":     true,
	"idn-hostname.json: KATAKANA MIDDLE DOT with no other characters":               true,
	"idn-hostname.json: A-label that decodes to a disallowed code point is invalid": true,
	// An IPvFuture host ("[v1.x]"): net/url does not parse it.
	"iri.json: an IPvFuture host with an uppercase version letter is valid": true,
}

// FuzzFormatWalk: whatever the input, validating against a schema whose
// formats sit behind references, a dynamic reference, contains and
// propertyNames never panics, and an input refused (by the validator or
// for a format) gets at least one field error.
func FuzzFormatWalk(f *testing.F) {
	fuzzFieldErrors(f, `{"$id":"http://example.com/root","type":"object",
		"$defs":{"email":{"type":"string","format":"email"},
			"emails":{"$id":"emails","$ref":"list","$defs":{"item":{"$dynamicAnchor":"item","type":"string","format":"email"}}},
			"list":{"$id":"list","type":"array","items":{"$dynamicRef":"#item"},"$defs":{"default":{"$dynamicAnchor":"item"}}}},
		"properties":{"to":{"$ref":"emails"},"cc":{"type":"array","contains":{"$ref":"#/$defs/email"},"minContains":2},
			"hosts":{"type":"object","propertyNames":{"format":"hostname"},"additionalProperties":{"$ref":"#/$defs/email"}},
			"at":{"anyOf":[{"type":"string","format":"date-time"},{"type":"null"}]}}}`,
		`{"to":["a@example.com"]}`, `{"to":["a"]}`, `{"cc":["a@example.com","b"]}`, `{"cc":[1,2]}`,
		`{"hosts":{"example.com":"a@example.com","bad host":"x"}}`, `{"at":null}`, `{"at":"yesterday"}`)
}
