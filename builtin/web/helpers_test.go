package web

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/netguard"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// loopback is the address policy of tests that fetch from a local server.
var loopback = netguard.Policy{Allow: []netguard.Class{netguard.Loopback}}

// fakeResolver answers names from a table; a name with several answers
// gives the next one on each lookup (the last one repeats), to model DNS
// rebinding.
type fakeResolver struct {
	mu    sync.Mutex
	names map[string][][]netip.Addr
	seen  map[string]int
}

func newResolver(m map[string][]string) *fakeResolver {
	r := &fakeResolver{names: map[string][][]netip.Addr{}, seen: map[string]int{}}
	for name, answers := range m {
		for _, a := range answers {
			var set []netip.Addr
			for _, s := range strings.Split(a, ",") {
				set = append(set, netip.MustParseAddr(s))
			}
			r.names[name] = append(r.names[name], set)
		}
	}
	return r
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	answers, ok := r.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.seen[host], len(answers)-1)
	r.seen[host]++
	return answers[i], nil
}

// publicSite serves h over TLS as "example.com" at the public address
// 93.184.216.34 (resolved by a fake resolver; connections to any checked
// address are routed to the local server). Loopback is not allowed.
func publicSite(t *testing.T, h http.Handler, names map[string][]string) Options {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	if names == nil {
		names = map[string][]string{}
	}
	if _, ok := names["example.com"]; !ok {
		names["example.com"] = []string{"93.184.216.34"}
	}
	addr := srv.Listener.Addr().String()
	return Options{
		Resolver: newResolver(names),
		rootCAs:  pool,
		dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

// fetchTool builds WebFetch with opts.
func fetchTool(t *testing.T, opts Options) tool.Tool {
	t.Helper()
	return Tools(opts)[0]
}

// testEnv is the environment of a call that needs nothing of a session.
func testEnv(t *testing.T) *tool.Env {
	return &tool.Env{WorkDir: t.TempDir(), Services: &tool.Services{}}
}

// mustCall runs tl as the executor would (nil env: testEnv) and fails the
// test unless it succeeds.
func mustCall(t *testing.T, tl tool.Tool, env *tool.Env, in any) *tool.Result {
	t.Helper()
	if env == nil {
		env = testEnv(t)
	}
	res, err := tooltest.Run(t.Context(), tl, env, in)
	if err != nil {
		t.Fatalf("call %v: %v", in, err)
	}
	if res.IsError {
		t.Fatalf("call %v: error result %s", in, res.TextContent())
	}
	return res
}

func wantAll(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
}

func wantNone(t *testing.T, got string, not ...string) {
	t.Helper()
	for _, w := range not {
		if strings.Contains(got, w) {
			t.Errorf("unexpected %q in:\n%s", w, got)
		}
	}
}
