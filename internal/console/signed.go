package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// Logins that survive a restart are signed cookies, not rows of a store:
// the console stays a client of the API with no storage of its own, every
// serve process on one Gantry home accepts them (no sticky sessions), and
// the server keeps nothing per login. A signed login cannot be revoked
// server-side once the process that logged it out has stopped; it expires
// with its SessionTTL, and changing the API token or the key ends every
// login at once.

// KeyFile is the name of the session key's file in a Gantry home.
const KeyFile = "console.key"

// keyLen is the session key's length in bytes.
const keyLen = 32

// LoadKey returns the session key kept in path (hex), creating it, mode
// 0600, with a new random key when missing. A key file that others may
// read (group or other permission bits) or that is not a key is refused.
func LoadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, keyLen)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return LoadKey(path) // another process created it first
		}
		if err != nil {
			return nil, fmt.Errorf("console: session key: %w", err)
		}
		_, err = f.WriteString(hex.EncodeToString(key) + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return nil, fmt.Errorf("console: session key: %w", err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("console: session key: %w", err)
	}
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("console: session key: %w", err)
	} else if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("console: session key %s is mode %v: others may read it (chmod 600 %s)", path, fi.Mode().Perm(), path)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != keyLen {
		return nil, fmt.Errorf("console: session key %s is not %d hex-encoded bytes (remove it to make a new one)", path, keyLen)
	}
	return key, nil
}

// signer makes and checks signed login cookies. Its key is derived from
// the session key and the API token, so a new token ends every login.
type signer struct{ key []byte }

func newSigner(sessionKey []byte, token string) *signer {
	m := hmac.New(sha256.New, sessionKey)
	m.Write([]byte("gantry console login\x00" + token))
	return &signer{key: m.Sum(nil)}
}

func (s *signer) mac(parts ...string) string {
	m := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// cookie returns the cookie value of a new login with id (hex) that
// expires at exp: "id.expiry.mac".
func (s *signer) cookie(id string, exp time.Time) string {
	e := strconv.FormatInt(exp.Unix(), 10)
	return id + "." + e + "." + s.mac("login", id, e)
}

// parse checks a cookie value and returns its login's id and expiry.
func (s *signer) parse(v string) (id string, exp time.Time, ok bool) {
	id, rest, ok1 := strings.Cut(v, ".")
	e, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || len(id) != 2*keyLen || len(sig) != 64 {
		return "", time.Time{}, false
	}
	if !hmac.Equal([]byte(sig), []byte(s.mac("login", id, e))) {
		return "", time.Time{}, false
	}
	n, err := strconv.ParseInt(e, 10, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	return id, time.Unix(n, 0), true
}

// csrf is the CSRF token of login id.
func (s *signer) csrf(id string) string { return s.mac("csrf", id) }
