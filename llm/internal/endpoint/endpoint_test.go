package endpoint

import (
	"net/http"
	"testing"
)

func TestResolve(t *testing.T) {
	v := Vars{KeyVar: "K", URLVar: "U", DefaultURL: "https://default/"}
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { s, ok := m[k]; return s, ok }
	}
	hc := &http.Client{}
	for _, tc := range []struct {
		name      string
		o         Options
		key, base string
	}{
		{"defaults, empty env", Options{LookupEnv: env(nil)}, "", "https://default/"},
		{"env", Options{LookupEnv: env(map[string]string{"K": "ek", "U": "http://env/"})}, "ek", "http://env/"},
		{"empty URL var is unset", Options{LookupEnv: env(map[string]string{"U": ""})}, "", "https://default/"},
		{"options win", Options{APIKey: "ok", BaseURL: "http://opt/", LookupEnv: env(map[string]string{"K": "ek", "U": "http://env/"})}, "ok", "http://opt/"},
	} {
		r := Resolve(tc.o, v)
		if r.APIKey != tc.key || r.BaseURL != tc.base || r.HTTPClient == nil {
			t.Errorf("%s: %+v, want key %q base %q", tc.name, r, tc.key, tc.base)
		}
	}
	if r := Resolve(Options{HTTPClient: hc, LookupEnv: env(nil)}, v); r.HTTPClient != hc {
		t.Error("HTTPClient option not kept")
	}
}
