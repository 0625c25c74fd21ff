package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// helperEnv carries a [helperSpec] to the helper process (see [Main]). It
// is removed from the environment before the command runs.
const helperEnv = "_GANTRY_SANDBOX_HELPER"

// helperSpec is what the helper does before it runs Args.
type helperSpec struct {
	// Landlock, if set, is applied (with the seccomp filter and the
	// capability drop) before Args run.
	Landlock *Policy `json:"landlock,omitempty"`
	// Bridge, if set, is the proxy's Unix socket: the helper listens on
	// BridgeAddr, forwards every connection there, and sets the proxy
	// variables for Args.
	Bridge     string `json:"bridge,omitempty"`
	BridgeAddr string `json:"bridge_addr,omitempty"`
	// Inner, with Bridge, is the seccomp filter of the command (the bridge
	// itself keeps the right to dial the proxy's Unix socket): the bridge
	// runs Helper again with Seccomp set to it, which loads it and
	// executes Args.
	Inner  *filterOptions `json:"inner,omitempty"`
	Helper string         `json:"helper,omitempty"`
	// Seccomp, if set, is loaded before Args are executed (and nothing
	// else is done).
	Seccomp *filterOptions `json:"seccomp,omitempty"`
	// Args is the command (Args[0] an absolute path).
	Args []string `json:"args"`
}

func encodeSpec(s *helperSpec) string {
	b, _ := json.Marshal(s)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeSpec(v string) (*helperSpec, error) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return nil, err
	}
	var s helperSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if len(s.Args) == 0 {
		return nil, errors.New("no command")
	}
	return &s, nil
}

// mainCalled records that the program calls [Main], so that re-executing
// it reaches the helper rather than the program itself.
var mainCalled atomic.Bool

// Main must be called first thing in main() (and in TestMain of tests
// that use the Landlock backend or the proxy) by a program that uses this
// package. In an ordinary start it returns at once. When the program was
// started as a sandbox helper — by the Landlock backend, or inside
// bubblewrap to bridge the network proxy — it applies the restrictions, runs
// the command and exits with its status; it never returns then.
//
// The Landlock backend and the proxy under bubblewrap are available only in
// programs that call Main (see [Detect]).
func Main() {
	mainCalled.Store(true)
	superviseMain() // supervise.go: returns unless started as a supervisor
	v, ok := os.LookupEnv(helperEnv)
	if !ok {
		return
	}
	os.Unsetenv(helperEnv)
	spec, err := decodeSpec(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gantry sandbox: bad helper spec: %v\n", err)
		os.Exit(126)
	}
	os.Exit(endHelper(runHelper(spec)))
}

// helperPath is the program to re-execute as the helper.
func helperPath(p string) (string, error) {
	if p != "" {
		return p, nil
	}
	if !mainCalled.Load() {
		return "", errors.New("sandbox: this program does not call sandbox.Main, so it cannot act as the sandbox helper")
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("sandbox: helper: %w", err)
	}
	return exe, nil
}

// runHelper applies spec and runs its command; it returns the exit status.
func runHelper(spec *helperSpec) int {
	env := os.Environ()
	if spec.Seccomp != nil {
		if err := loadSeccomp(*spec.Seccomp); err != nil {
			fmt.Fprintf(os.Stderr, "gantry sandbox: seccomp: %v\n", err)
			return 126
		}
		err := syscall.Exec(spec.Args[0], spec.Args, env)
		fmt.Fprintf(os.Stderr, "gantry sandbox: exec %s: %v\n", spec.Args[0], err)
		return 127
	}
	var ln net.Listener
	if spec.Bridge != "" {
		var err error
		ln, err = net.Listen("tcp", spec.BridgeAddr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gantry sandbox: proxy bridge: %v\n", err)
			return 126
		}
		env = withProxyEnv(env, "http://"+ln.Addr().String())
		if err := hardenBridge(); err != nil {
			fmt.Fprintf(os.Stderr, "gantry sandbox: proxy bridge: %v\n", err)
			return 126
		}
	}
	if spec.Landlock != nil {
		port := 0
		if ln != nil {
			port = ln.Addr().(*net.TCPAddr).Port
		}
		if err := restrictSelf(spec.Landlock, port, ln != nil || spec.Landlock.unixAllowed()); err != nil {
			fmt.Fprintf(os.Stderr, "gantry sandbox: %v\n", err)
			return 126
		}
	}
	if ln == nil {
		err := execCommand(spec.Args, env) // supervise.go: exec, or run supervised
		fmt.Fprintf(os.Stderr, "gantry sandbox: exec %s: %v\n", spec.Args[0], err)
		return 127
	}
	return runBridged(spec, ln, env)
}

// runBridged runs the command as a child while forwarding every connection
// to ln to the proxy socket.
func runBridged(spec *helperSpec, ln net.Listener, env []string) int {
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				forward(c, spec.Bridge)
			}()
		}
	}()
	cmd := exec.Command(spec.Args[0], spec.Args[1:]...)
	cmd.Env = env
	if spec.Inner != nil {
		// The command gets the filter without Unix sockets through a
		// second run of the helper.
		cmd = exec.Command(spec.Helper)
		cmd.Env = append(env, helperEnv+"="+encodeSpec(&helperSpec{Seccomp: spec.Inner, Args: spec.Args}))
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Pass termination on to the command (the process group gets it too).
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "gantry sandbox: %v\n", err)
		return 127
	}
	go func() {
		for s := range sig {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	ln.Close()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 127
}

// forward copies between c and a new connection to the Unix socket.
func forward(c net.Conn, socket string) {
	defer c.Close()
	u, err := net.Dial("unix", socket)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(u, c)
		if cw, ok := u.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, u)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// proxyVars are the variables that point HTTP clients at the proxy.
var proxyVars = []string{"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}

// withProxyEnv sets the proxy variables to url and clears NO_PROXY (every
// request must go through the proxy; loopback inside a sandbox is the
// sandbox's own).
func withProxyEnv(env []string, url string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		out = append(out, kv)
	}
	for _, v := range proxyVars {
		out = append(out, v+"="+url)
	}
	return out
}
