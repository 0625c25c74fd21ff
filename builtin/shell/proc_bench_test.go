package shell

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/outbuf"
)

// BenchmarkProcTrue is the cost of one `bash -c true` as the Bash tool
// starts it, with and without the supervisor that kills every process the
// command started (a re-execution of the program; here the test binary).
//
//	go test -run '^$' -bench ProcTrue -benchtime 200x ./builtin/shell/
func BenchmarkProcTrue(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip(err)
	}
	for _, sup := range []bool{false, true} {
		name := "unsupervised"
		if sup {
			name = "supervised"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				p, err := startProc(procSpec{shell: bash, command: "true", env: []string{"PATH=/usr/bin:/bin"},
					grace: time.Second, supervise: sup, out: outbuf.Options{Limit: 1 << 20}})
				if err != nil {
					b.Fatal(err)
				}
				p.wait(context.Background())
				p.buf.Close()
				if code, _ := p.exitStatus(); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
