package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/console"
	"github.com/gantry-dev/gantry/serve"
)

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, console.KeyFile)
	k1, err := console.LoadKey(path)
	if err != nil || len(k1) != 32 {
		t.Fatalf("new key: %d bytes, %v", len(k1), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi.Mode(), err)
	}
	if k2, err := console.LoadKey(path); err != nil || string(k2) != string(k1) {
		t.Fatalf("the key again: %v", err)
	}
	os.Chmod(path, 0o644)
	if _, err := console.LoadKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a readable key: %v", err)
	}
	bad := filepath.Join(dir, "bad.key")
	os.WriteFile(bad, []byte("not hex\n"), 0o600)
	if _, err := console.LoadKey(bad); err == nil {
		t.Fatal("a file that is not a key was accepted")
	}
	// Processes starting at once share one key.
	shared := filepath.Join(dir, "shared.key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := console.LoadKey(shared)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if string(k) != string(keys[0]) {
			t.Fatal("concurrent LoadKey calls made different keys")
		}
	}
}

// TestSignedLogins: with a session key a login survives a restart (a new
// console with the key and token) and works on another process's console;
// a changed token, another key, a tampered or expired cookie are refused;
// the CSRF token is the same across consoles; logging out ends the login
// in that console.
func TestSignedLogins(t *testing.T) {
	api := http.NewServeMux()
	api.HandleFunc("GET /v1/runs", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"runs":[]}`) })
	key, err := console.LoadKey(filepath.Join(t.TempDir(), console.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	clock := func() time.Time { return now }
	serveWith := func(key []byte, tok string) *httptest.Server {
		con, err := console.New(console.Options{API: api, Token: tok, SessionKey: key, Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(con)
		t.Cleanup(srv.Close)
		return srv
	}
	first := serveWith(key, token)
	b := newBrowser(t, first.URL)
	csrf := b.login()
	cookie := b.c.Jar.Cookies(mustURL(t, first.URL))[0]
	if strings.Count(cookie.Value, ".") != 2 {
		t.Fatalf("cookie %q is not a signed login", cookie.Value)
	}
	first.Close()

	// As another browser holding the cookie, on other consoles.
	get := func(srv *httptest.Server, value string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
		req.AddCookie(&http.Cookie{Name: cookie.Name, Value: value})
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(page)
	}
	restarted := serveWith(key, token)
	if code, page := get(restarted, cookie.Value); code != http.StatusOK || !strings.Contains(page, csrf) {
		t.Fatalf("after a restart: %d (CSRF token kept: %v)", code, strings.Contains(page, csrf))
	}
	other := make([]byte, 32)
	for name, srv := range map[string]*httptest.Server{"a new token": serveWith(key, token+"x"), "another key": serveWith(other, token)} {
		if code, _ := get(srv, cookie.Value); code != http.StatusSeeOther {
			t.Errorf("%s: %d, want a redirect to the login", name, code)
		}
	}
	id, rest, _ := strings.Cut(cookie.Value, ".")
	exp, sig, _ := strings.Cut(rest, ".")
	for name, v := range map[string]string{
		"a later expiry":  id + "." + exp + "1." + sig,
		"another id":      strings.Repeat("0", len(id)) + "." + rest,
		"a cut signature": id + "." + exp + "." + sig[:10],
		"no signature":    id,
	} {
		if code, _ := get(restarted, v); code != http.StatusSeeOther {
			t.Errorf("%s: %d, want a redirect to the login", name, code)
		}
	}
	now = now.Add(console.DefaultSessionTTL + time.Minute)
	if code, _ := get(restarted, cookie.Value); code != http.StatusSeeOther {
		t.Errorf("an expired login: %d", code)
	}
	now = now.Add(-console.DefaultSessionTTL)
	// Logging out ends the login in that console.
	b2 := newBrowser(t, restarted.URL)
	b2.c.Jar.SetCookies(mustURL(t, restarted.URL), []*http.Cookie{{Name: cookie.Name, Value: cookie.Value}})
	if resp, _ := b2.do(http.MethodPost, "/logout", url.Values{"csrf": {csrf}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %s", resp.Status)
	}
	if code, _ := get(restarted, cookie.Value); code != http.StatusSeeOther {
		t.Errorf("a logged-out login: %d", code)
	}
	if _, err := console.New(console.Options{API: api, SessionKey: []byte("short")}); err == nil {
		t.Error("a short session key was accepted")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestLoginSurvivesRestart: a serve with a Gantry home keeps the console's
// key there; a login made on one server is accepted by the next one on
// that home.
func TestLoginSurvivesRestart(t *testing.T) {
	home := t.TempDir()
	first := start(t, serve.Options{Home: home})
	b := newBrowser(t, first.url)
	csrf := b.login()
	if fi, err := os.Stat(filepath.Join(home, console.KeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v", err)
	}
	second := start(t, serve.Options{Home: home})
	b.base, b.origin = second.url, second.url
	resp, page := b.do(http.MethodGet, "/", nil, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, csrf) {
		t.Fatalf("the login on the next server: %s", resp.Status)
	}
	// Without a home, a server keeps its logins to itself.
	third := start(t, serve.Options{})
	b.base, b.origin = third.url, third.url
	if resp, _ := b.do(http.MethodGet, "/", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("a server without the key: %s", resp.Status)
	}
}
