package procenv

import (
	"os"
	"strconv"
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
