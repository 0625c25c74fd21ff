// Package console is the web console of `gantry serve`: pages to watch
// runs as they happen, answer the asks they wait on, start runs, and manage
// cron jobs and triggers, from a laptop or a phone.
//
// The console is a client of the serve HTTP API, in the same process: every
// action it offers is a call of that API's handler ([Options.API]), so the
// rules (validation, directories, schedules, answers) have one home, the
// API. The console adds what a browser needs and the API does not have:
// server-rendered pages (written by Go code, see render.go), a small hand-written ES module
// that streams a run's events (SSE, resumed with Last-Event-ID) and renders
// them, and browser security:
//
//   - the bearer token is typed once into the login form and exchanged for
//     a session cookie (HttpOnly, SameSite=Strict, Secure when served over
//     TLS) that names a session held in memory, or, with a session key
//     ([Options.SessionKey]), is a signed login that survives a restart;
//     the token never appears in a page, a URL or the log;
//   - every state-changing request carries the session's CSRF token and an
//     Origin (or Sec-Fetch-Site) header naming this server;
//   - the Host header must be one of the console's names (loopback names,
//     and [Options.Hosts]), so a DNS-rebinding page cannot reach it;
//   - every page is sent with a Content-Security-Policy of default-src
//     'self': the console loads nothing from elsewhere.
//
// Nothing is done when the package is loaded, and it uses no templates
// (html/template's reflection would keep every exported method of the
// program in its binary), so a program that links the console but does not
// serve it (gantry -p) pays nothing for it beyond its own code and assets.
package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Defaults of [Options].
const (
	// DefaultSessionTTL is how long a login lasts.
	DefaultSessionTTL = 12 * time.Hour
	// MaxSessions caps the logins held at once; the oldest goes first.
	MaxSessions = 256
)

// Options configure a [Console]. API is required.
type Options struct {
	// API is the serve HTTP API, without its bearer-token check: the
	// console calls it in-process for every page and action, after its own
	// login check.
	API http.Handler
	// Token is the API's bearer token, typed into the login form ("" = no
	// login: a server without a token, on loopback, lets every local
	// browser in; the CSRF, Origin and Host checks still apply).
	Token string
	// Hosts are the names (a host, or host:port) the console answers to in
	// the Host header besides the loopback names (localhost, 127.0.0.1,
	// ::1). A request naming another host is refused (DNS rebinding).
	Hosts []string
	// Secure marks the session cookie Secure (set it when the console is
	// served over TLS; a request that arrives over TLS sets it anyway).
	Secure bool
	// SessionTTL is how long a login lasts (0 = DefaultSessionTTL).
	SessionTTL time.Duration
	// SessionKey, when set ([LoadKey], at least 32 bytes), makes logins
	// signed cookies instead of sessions held in memory: they survive a
	// restart and every console with the same key and Token accepts them.
	// Logging out ends a login in this process only; the login's cookie
	// is dropped by the browser, and a copy of it stays valid elsewhere
	// until it expires. nil = logins in memory (a restart ends them).
	SessionKey []byte
	// Logger receives the console's log: refused requests and failed
	// API calls, never a token or a cookie (nil = discard).
	Logger *slog.Logger
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Console serves the web console. Create it with [New]; it is an
// [http.Handler] for every path but the API's (serve mounts it at "/").
type Console struct {
	o     Options
	log   *slog.Logger
	now   func() time.Time
	hosts map[string]bool
	mux   *http.ServeMux

	mu       sync.Mutex
	sessions map[string]*session  // by cookie value (no SessionKey)
	signer   *signer              // with a SessionKey
	revoked  map[string]time.Time // logins logged out (signed), until they expire

	etags sync.Map // static file name → ETag, computed on first use
}

// session is one login.
type session struct {
	csrf    string
	expires time.Time
}

// New returns a console; it parses nothing until the first page.
func New(o Options) (*Console, error) {
	if o.API == nil {
		return nil, errors.New("console: Options.API is required")
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Console{o: o, log: o.Logger, now: o.Now, sessions: map[string]*session{}, revoked: map[string]time.Time{},
		hosts: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}}
	if o.SessionKey != nil {
		if len(o.SessionKey) < keyLen {
			return nil, fmt.Errorf("console: the session key has %d bytes, want at least %d", len(o.SessionKey), keyLen)
		}
		c.signer = newSigner(o.SessionKey, o.Token)
	}
	for _, h := range o.Hosts {
		n := hostName(h)
		if n == "" {
			return nil, fmt.Errorf("console: host %q is not a host name", h)
		}
		c.hosts[n] = true
	}
	c.routes()
	return c, nil
}

// CheckListen refuses to serve the console on a non-loopback address
// without TLS, unless insecure is set: the login form would send the token
// in clear text over the network. Callers that serve the console (gantry
// serve, gantry-temporal serve) call it with their listener's address.
func CheckListen(addr net.Addr, tls, insecure bool) error {
	if tls || insecure {
		return nil
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err == nil && ap.Addr().IsLoopback() {
		return nil
	}
	return fmt.Errorf("console: %s is not a loopback address and is not served over TLS: the login would cross the network in clear text; "+
		"serve TLS (--tls-cert and --tls-key), turn the console off (--no-console), or accept the risk (--insecure-console)", addr)
}

// hostName returns the lower-case host of a Host header value or a
// host:port ("" if there is none).
func hostName(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return h
}

// ServeHTTP serves the console's pages, checking the Host header first.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.hosts[hostName(r.Host)] {
		c.log.Warn("console: request for an unknown host refused", "host", r.Host, "remote", r.RemoteAddr)
		http.Error(w, "421 misdirected request: this host name is not one of the console's (see --console-host)", http.StatusMisdirectedRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

// cookieName is the session cookie's name: with the __Host- prefix when
// Secure (the browser then refuses it from anything but this origin over
// TLS).
func (c *Console) cookieName(r *http.Request) string {
	if c.secure(r) {
		return "__Host-gantry_console"
	}
	return "gantry_console"
}

func (c *Console) secure(r *http.Request) bool { return c.o.Secure || r.TLS != nil }

// newID returns 256 random bits as hex.
func newID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// login checks a typed token and, when it is the API's, starts a session
// and sets its cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request, token string) bool {
	if c.o.Token != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(c.o.Token)) != 1 {
		c.log.Warn("console: login refused (wrong token)", "remote", r.RemoteAddr)
		return false
	}
	id, s := newID(), &session{csrf: newID(), expires: c.now().Add(c.o.SessionTTL)}
	value := id
	if c.signer != nil {
		value = c.signer.cookie(id, s.expires)
	} else {
		c.mu.Lock()
		c.prune()
		c.sessions[id] = s
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(r), Value: value, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.secure(r), MaxAge: int(c.o.SessionTTL / time.Second)})
	c.log.Info("console: login", "remote", r.RemoteAddr)
	return true
}

// prune drops expired sessions, and the oldest ones beyond MaxSessions
// (c.mu held).
func (c *Console) prune() {
	now := c.now()
	for id, s := range c.sessions {
		if now.After(s.expires) {
			delete(c.sessions, id)
		}
	}
	for len(c.sessions) >= MaxSessions {
		var oldest string
		for id, s := range c.sessions {
			if oldest == "" || s.expires.Before(c.sessions[oldest].expires) {
				oldest = id
			}
		}
		delete(c.sessions, oldest)
	}
}

// session returns the request's live session (nil = none).
func (c *Console) session(r *http.Request) (string, *session) {
	ck, err := r.Cookie(c.cookieName(r))
	if err != nil {
		return "", nil
	}
	if c.signer != nil {
		id, exp, ok := c.signer.parse(ck.Value)
		if !ok || c.now().After(exp) || exp.After(c.now().Add(c.o.SessionTTL)) {
			return "", nil
		}
		c.mu.Lock()
		_, out := c.revoked[id]
		c.mu.Unlock()
		if out {
			return "", nil
		}
		return id, &session{csrf: c.signer.csrf(id), expires: exp}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[ck.Value]
	if s == nil || c.now().After(s.expires) {
		delete(c.sessions, ck.Value)
		return "", nil
	}
	return ck.Value, s
}

// logout ends the request's session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if id, s := c.session(r); id != "" {
		c.mu.Lock()
		delete(c.sessions, id)
		if c.signer != nil {
			now := c.now()
			for k, exp := range c.revoked {
				if now.After(exp) {
					delete(c.revoked, k)
				}
			}
			c.revoked[id] = s.expires
		}
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(r), Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.secure(r), MaxAge: -1})
}

// sameOrigin reports whether a state-changing request comes from a page
// of this server: its Origin names this host (with the request's scheme),
// or, without an Origin, the browser says Sec-Fetch-Site: same-origin.
// A request with neither is refused: browsers send one of them on every
// POST, and other clients use the API.
func (c *Console) sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil {
			return false
		}
		scheme := "http"
		if r.TLS != nil || c.o.Secure {
			scheme = "https"
		}
		return u.Scheme == scheme && strings.EqualFold(u.Host, r.Host) && u.Path == "" && u.User == nil
	}
	return r.Header.Get("Sec-Fetch-Site") == "same-origin"
}

// guard wraps a console page: it requires a session (a browser is sent to
// the login page, a script gets 401), and for a POST the session's CSRF
// token and a same-origin request.
func (c *Console) guard(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, s := c.session(r)
		if s == nil && c.o.Token == "" && r.Method == http.MethodGet {
			// No token to type: a local browser logs in by coming.
			c.login(w, r, "")
			http.Redirect(w, r, r.URL.RequestURI(), http.StatusSeeOther)
			return
		}
		if s == nil {
			if r.Method == http.MethodGet && !wantsJSON(r) && r.Header.Get("Accept") != "text/event-stream" {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			http.Error(w, "401 unauthorized: log in first", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !c.sameOrigin(r) {
				c.log.Warn("console: cross-origin request refused", "path", r.URL.Path, "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr)
				http.Error(w, "403 forbidden: cross-origin request", http.StatusForbidden)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
			if err := r.ParseForm(); err != nil {
				http.Error(w, "400 bad request: "+err.Error(), http.StatusBadRequest)
				return
			}
			tok := r.Header.Get("X-CSRF-Token")
			if tok == "" {
				tok = r.PostForm.Get("csrf")
			}
			if subtle.ConstantTimeCompare([]byte(tok), []byte(s.csrf)) != 1 {
				c.log.Warn("console: request without a valid CSRF token refused", "path", r.URL.Path, "remote", r.RemoteAddr)
				http.Error(w, "403 forbidden: missing or wrong CSRF token (reload the page)", http.StatusForbidden)
				return
			}
		}
		h(w, r, s)
	}
}

// maxForm caps a form's body.
const maxForm = 1 << 20

// wantsJSON reports whether a script (the console's own module) asks for
// a JSON answer instead of a page.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}
