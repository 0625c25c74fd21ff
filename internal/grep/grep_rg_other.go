//go:build !linux

package grep

import (
	"os"
	"time"
)

// ripgrepOutput reads ripgrep's standard output: outside Linux, a plain
// pipe.
type ripgrepOutput struct{ *os.File }

// newRipgrepOutput makes the pipe; w is ripgrep's standard output (the
// caller closes it once ripgrep has started).
func newRipgrepOutput() (*ripgrepOutput, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	return &ripgrepOutput{r}, w, nil
}

func (o *ripgrepOutput) started(int) {}

// capStat applies the size cap to the files ripgrep reports (ripgrep runs
// without --max-filesize).
type capStat struct{ limit int64 }

func newCapStat(_ string, limit int64) *capStat { return &capStat{limit: limit} }

// within reports whether the file at abs is within the size cap, with its
// modification time. A file that cannot be stat'ed any more is kept.
func (s *capStat) within(_, abs string) (time.Time, bool) { return statCap(abs, s.limit) }

func (s *capStat) close() {}
