package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/server/temporaltest"
)

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gantry test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600)
	return certFile, keyFile, pool
}

// TestServeTLS: `serve --listen-tls-cert --listen-tls-key` serves the API
// and the console over TLS, off loopback without --insecure-console; the
// console's session cookie is Secure and signed; plain HTTP gets no answer
// of the API.
func TestServeTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	const token = "0123456789abcdef0123456789abcdef"
	env := map[string]string{"GANTRY_SERVE_TOKEN": token, "GANTRY_HOME": filepath.Join(dir, "home"), "HOME": dir}
	var stderr lockedBuffer
	a := &app{stdin: strings.NewReader(""), stdout: new(bytes.Buffer), stderr: &stderr, getenv: func(k string) string { return env[k] }}
	root := newRoot(a)
	root.SetArgs([]string{"serve", "--address", ts.GetFrontendHostPort(), "--namespace", ts.GetDefaultNamespace(),
		"--listen", "0.0.0.0:0", "--listen-tls-cert", certFile, "--listen-tls-key", keyFile, "--db", filepath.Join(dir, "serve.db")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	addr := regexp.MustCompile(`API on https://\S*:(\d+) `)
	var port string
	for deadline := time.Now().Add(30 * time.Second); port == ""; time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			port = m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", stderr.String())
		}
	}
	base := "https://127.0.0.1:" + port
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/health", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health over TLS: %s", resp.Status)
	}
	form := url.Values{"token": {token}}
	req, _ = http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cs) == 0 || !cs[0].Secure || !cs[0].HttpOnly {
		t.Fatalf("login over TLS: %s, cookies %+v", resp.Status, cs)
	}
	// A signed login (it survives a restart), keyed by a 0600 file in the
	// home.
	if strings.Count(cs[0].Value, ".") != 2 {
		t.Errorf("the login %q is not signed", cs[0].Value)
	}
	if fi, err := os.Stat(filepath.Join(env["GANTRY_HOME"], "console.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the console's key file: %v", err)
	}
	// Plain HTTP to the TLS port is not the API.
	resp, err = http.Get("http://127.0.0.1:" + port + "/v1/health")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered on the TLS port")
		}
	}
}

// TestServeTLSHalf: a serving certificate without its key is a usage
// error (exit 2), before any connection.
func TestServeTLSHalf(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen-tls-cert", "cert.pem"},
		{"serve", "--listen-tls-key", "key.pem"},
	} {
		a := &app{stdin: strings.NewReader(""), stdout: new(bytes.Buffer), stderr: new(bytes.Buffer), getenv: func(string) string { return "" }}
		root := newRoot(a)
		root.SetArgs(args)
		var ee *exitError
		if err := root.Execute(); !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "go together") {
			t.Errorf("%v: %v, want exit code 2", args, err)
		}
	}
}
