package serve_test

import (
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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/serve"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files in dir and returns their paths and the certificate.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
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
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600)
	return certFile, keyFile, cert
}

func TestLoadTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, cert := writeCert(t, dir)
	if c, err := serve.LoadTLS("", ""); c != nil || err != nil {
		t.Fatalf("no files: %v %v", c, err)
	}
	for _, half := range [][2]string{{certFile, ""}, {"", keyFile}} {
		if _, err := serve.LoadTLS(half[0], half[1]); !errors.Is(err, serve.ErrTLSHalf) {
			t.Errorf("LoadTLS(%q, %q): %v, want ErrTLSHalf", half[0], half[1], err)
		}
	}
	if _, err := serve.LoadTLS(keyFile, certFile); err == nil {
		t.Error("swapped files were accepted")
	}
	if _, err := serve.LoadTLS(filepath.Join(dir, "none.pem"), keyFile); err == nil {
		t.Error("a missing certificate was accepted")
	}
	c, err := serve.LoadTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.MinVersion != tls.VersionTLS12 || len(c.Certificates) != 1 {
		t.Fatalf("config %+v", c)
	}
	// A handshake with a client that trusts the certificate.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", c)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			err = conn.(*tls.Conn).Handshake()
			conn.Close()
		}
		done <- err
	}()
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
