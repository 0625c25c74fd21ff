package procenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestReceive(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("ANTHROPIC_API_KEY=sk=with=equals\x00PATH=/evil\x00OPENAI_API_KEY=o")
	w.Close()
	fd, err := syscall.Dup(int(r.Fd())) // receive closes its own descriptor
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	got, err := receive(strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["ANTHROPIC_API_KEY"] != "sk=with=equals" || got["OPENAI_API_KEY"] != "o" {
		t.Fatalf("received %v", got)
	}
	for _, bad := range []string{"x", "1", "-5"} {
		if _, err := receive(bad); err == nil {
			t.Errorf("receive(%q) accepted", bad)
		}
	}
}

// TestStartScrubsEnviron runs Start in a child process (this test binary)
// whose environment holds a key: the key comes back through Secrets, is in
// neither the Go environment nor /proc/<pid>/environ afterwards, and the
// process was not re-executed (same pid as started).
func TestStartScrubsEnviron(t *testing.T) {
	if os.Getenv("PROCENV_START_HELPER") == "1" {
		s, err := Start()
		environ, rerr := os.ReadFile("/proc/self/environ")
		fmt.Printf("pid=%d key=%s goenv=%q err=%v rerr=%v environ-has-key=%v environ-has-name=%v\n", os.Getpid(), s.Getenv("ANTHROPIC_API_KEY"),
			os.Getenv("ANTHROPIC_API_KEY"), err, rerr, bytes.Contains(environ, []byte("sk-secret-value")), bytes.Contains(environ, []byte("ANTHROPIC_API_KEY=")))
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartScrubsEnviron$")
	cmd.Env = append(os.Environ(), "PROCENV_START_HELPER=1", "ANTHROPIC_API_KEY=sk-secret-value", "OTHER=kept")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := fmt.Sprintf("pid=%d key=sk-secret-value goenv=\"\" err=<nil> rerr=<nil> environ-has-key=false environ-has-name=true", cmd.Process.Pid)
	if got := strings.TrimSpace(out.String()); got != want {
		t.Errorf("helper said\n%s\nwant\n%s", got, want)
	}
}

func BenchmarkScrubEnviron(b *testing.B) {
	for b.Loop() {
		if err := scrubEnviron(); err != nil {
			b.Fatal(err)
		}
	}
}
