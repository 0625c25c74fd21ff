package llmenv

import (
	"os"

	"github.com/gantry-dev/gantry/internal/procenv"
)

// HideKeys takes the model providers' keys (ANTHROPIC_API_KEY,
// OPENAI_API_KEY, GANTRY_*_KEY, …) out of this process's environment so that
// no tool, hook or MCP server started later inherits them, wipes them from
// the environment block /proc/<pid>/environ shows, and makes the process
// non-dumpable. It returns a getenv that still sees the keys, for the
// provider set-up ([FromEnv]). Call it first thing in main, before any other
// goroutine starts: where the block cannot be wiped in place, it re-executes
// the program once without the keys and hands them over a pipe.
//
// The error reports only what could not be protected; the keys have left
// the environment regardless, and getenv is never nil.
func HideKeys() (getenv func(string) string, err error) {
	s, err := procenv.Start()
	if s == nil {
		return os.Getenv, err
	}
	return s.Getenv, err
}
