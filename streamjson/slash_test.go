package streamjson

import "testing"

func TestParseSlash(t *testing.T) {
	tests := []struct {
		in, name, args string
		ok             bool
	}{
		{"/compact", "compact", "", true},
		{"  /compact keep the names  ", "compact", "keep the names", true},
		{"/greet Ada Lovelace", "greet", "Ada Lovelace", true},
		{"compact", "", "", false},
		{"/", "", "", false},
		{"/ compact", "", "", false},
		{"/etc/hosts is broken", "", "", false},
	}
	for _, tt := range tests {
		name, args, ok := parseSlash(tt.in)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("parseSlash(%q) = %q, %q, %v; want %q, %q, %v", tt.in, name, args, ok, tt.name, tt.args, tt.ok)
		}
	}
}

func FuzzParseSlash(f *testing.F) {
	for _, s := range []string{"/compact", "/x a b", "/etc/x", "", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, _, ok := parseSlash(s)
		if ok && (name == "" || name[0] == '/') {
			t.Fatalf("parseSlash(%q) gave name %q", s, name)
		}
	})
}
