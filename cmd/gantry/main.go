// Command gantry runs LLM agents and their tools from a terminal or CI.
//
// See the README for the subcommands; `gantry --help` lists them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/llm/llmenv"
	"github.com/gantry-dev/gantry/sandbox"
)

// version is set at build time with -ldflags "-X main.version=…"; see
// buildVersion for what a plain build reports.
var version = "dev"

// exitError carries a process exit code through cobra without printing a
// stack trace or usage text.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// app holds what every subcommand shares: the streams and the environment
// lookup, so tests run the CLI in-process without global state.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// beforeRun, if set, runs before any command's own work (cmd is the
	// command about to run), and not for --version or --help (which print
	// and exit): the process-wide settings of a gantry process, left out of
	// in-process tests.
	beforeRun func(cmd *cobra.Command)
}

// cpuBound is the annotation of a command whose run is bound by its own
// CPU (one tool call), not by the network: it keeps Go's default
// collector.
const cpuBound = "gantry/cpu-bound"

// newRootCmd builds the command tree with every subcommand.
func newRootCmd(a *app) *cobra.Command { return newRootCmdFor(a, nil) }

// newRootCmdFor builds the command tree for a command line: the root and
// the subcommands args may name (see neededSubcommands), or all of them
// for args nil. Building the other subcommands' flags and their code's
// pages is start-up every command would pay for nothing.
func newRootCmdFor(a *app, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "gantry",
		Short: "Gantry runs LLM agents built around a fast, safe tool runtime",
		Long: `Gantry runs LLM agents built around a fast, safe tool runtime.

On a terminal, gantry opens the interactive UI; gantry -p PROMPT runs headless.

Exit status:
  0  done
  1  the run failed (an error result, the model provider, the set-up)
  2  wrong usage (a flag, an unknown command, no prompt)
  3  a headless run (-p, text or json output) finished, but a tool call was
     denied or blocked, so it may not have done all it was asked; each
     denial is on stderr (text) or in permission_denials (json)`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion(),
	}
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		if a.beforeRun != nil {
			a.beforeRun(cmd)
		}
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	attachRootRun(a, root)
	// Subcommands, one file each.
	addSubcommands(a, root, neededSubcommands(args))
	return root
}

// addSubcommands adds to root the subcommands need names that it does not
// have yet.
func addSubcommands(a *app, root *cobra.Command, need func(string) bool) {
	have := map[string]bool{}
	for _, c := range root.Commands() {
		have[c.Name()] = true
	}
	for _, sub := range subcommands {
		if need(sub.name) && !have[sub.name] {
			root.AddCommand(sub.new(a))
		}
	}
	strictSubcommands(root)
}

// wholeTree completes a root built for a command line with every
// subcommand, and cobra's help and completion commands as a root built
// whole has them when it runs: for what reads the whole tree (the typo
// check's suggestions).
func wholeTree(a *app, root *cobra.Command) {
	addSubcommands(a, root, func(string) bool { return true })
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
}

// neededSubcommands says which subcommands a command line needs built. The
// command that runs is named by a word of the line (cobra matches names
// exactly: no aliases, no prefix matching), so a subcommand none of the
// words names is not needed; every subcommand is for help (which lists
// them), shell completion (which offers them) and args nil. Building more
// than needed is harmless: a prompt that happens to be a subcommand's name
// builds that subcommand, and cobra decides as it always did.
func neededSubcommands(args []string) func(string) bool {
	all := func(string) bool { return true }
	if args == nil {
		return all
	}
	words := make(map[string]bool, len(args))
	for _, w := range args {
		switch {
		case w == "help" || w == "--help" || w == "completion" || strings.HasPrefix(w, "__complete"):
			return all
		case len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsRune(w, 'h'):
			return all // -h, or shorthand flags run together with it
		}
		words[w] = true
	}
	return func(name string) bool { return words[name] }
}

// strictSubcommands makes every command that only groups subcommands
// (gantry tools, gantry mcp, …) refuse an unknown subcommand with exit
// status 2 and a suggestion, instead of printing its help and succeeding.
func strictSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		strictSubcommands(c)
	}
	if cmd.Parent() == nil || !cmd.HasSubCommands() || cmd.Run != nil || cmd.RunE != nil {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		return unknownCommand(c, args[0])
	}
}

// suggestions are the subcommands of c close to word (edit distance 2, or
// a prefix).
func suggestions(c *cobra.Command, word string) []string {
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	return c.SuggestionsFor(word)
}

// deepSuggestions are the commands one level further down close to word
// ("gantry lsit": gantry tools list, gantry agents list, …), as command
// paths without the root's name.
func deepSuggestions(root *cobra.Command, word string) []string {
	var out []string
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		for _, s := range suggestions(c, word) {
			out = append(out, c.Name()+" "+s)
		}
	}
	return out
}

// unknownCommand is the error for a word that names no subcommand of c,
// with the subcommands it is close to (and extra ones).
func unknownCommand(c *cobra.Command, word string, extra ...string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, c.CommandPath())
	if s := append(suggestions(c, word), extra...); len(s) > 0 {
		msg += "\n\nDid you mean this?"
		for _, x := range s {
			msg += "\n\t" + x
		}
	}
	if c.Parent() == nil {
		msg += fmt.Sprintf("\n\nTo send it to the model as a prompt: gantry -p %q", word)
	}
	return &exitError{code: 2, err: fmt.Errorf("%s\n\nRun '%s --help' for usage.", msg, c.CommandPath())}
}

// subcommands lists the subcommands by name, with their constructors; each
// lives in its own file. The name is the first word of the command's Use
// (TestSubcommandNames).
var subcommands = []struct {
	name string
	new  func(*app) *cobra.Command
}{
	{"agents", newAgentsCmd},
	{"chat", newChatCmd},
	{"permissions", newPermissionsCmd},
	{"mcp", newMCPCmd},
	{"run", newRunCmd},
	{"tools", newToolsCmd},
	{"tasks", newTasksCmd},
	{"todos", newTodosCmd},
	{"sandbox", newSandboxCmd},
	{"cron", newCronCmd},
	{"runs", newRunsCmd},
	{"serve", newServeCmd},
	{"checkpoints", newCheckpointsCmd},
	{"rewind", newRewindCmd},
	{"version", newVersionCmd},
}

func run(ctx context.Context, a *app, args []string) int {
	root := newRootCmdFor(a, args)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(a.stderr, "gantry:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(a.stderr, "gantry:", err)
	return 1
}

// processApp is the app of a gantry process. First of all the model
// providers' keys leave the process environment: on Linux the process
// re-executes itself once without them and receives them over a pipe, so
// not even /proc/<pid>/environ shows them; no tool, hook or MCP server
// inherits them; and the process is made non-dumpable (llmenv.HideKeys).
// The configuration reads the keys through the getenv it returns.
func processApp() *app {
	getenv, err := llmenv.HideKeys()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gantry: warning:", err)
	}
	return &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: getenv}
}

func main() {
	// A sandbox helper (Landlock, or the proxy bridge inside bubblewrap)
	// is this binary re-executed: it applies the sandbox and runs the
	// command, and never returns.
	sandbox.Main()
	os.Exit(processMain(os.Args[1:]))
}

// processMain runs a command line as a gantry process does and returns its
// exit status: the process's app (processApp), its memory settings
// (tuneMemory) and interrupts caught for a command that runs. The script
// tests run it as their gantry command.
func processMain(args []string) int {
	a := processApp()
	stop := func() {}
	a.beforeRun = func(cmd *cobra.Command) {
		tuneMemory(cmd)
		// Interrupts are caught for a command that runs, not for --version
		// or --help, which print and exit: catching them starts a goroutine
		// and locks it to a thread of its own.
		var ctx context.Context
		ctx, stop = signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		cmd.SetContext(ctx)
	}
	code := run(context.Background(), a, args)
	stop()
	return code
}

// The collector's settings of a gantry process (unless the user set GOGC).
// Not at start-up: lowering the GC goal then starts a collection at once,
// which `gantry --version` has no use for. The figures are in
// docs/scale.md ("Footprint decisions and their figures").
const (
	// cliGCPercent is GOGC of a command: a CLI run is bound by the network,
	// not the collector, so it trades a little CPU for a smaller peak heap.
	cliGCPercent = 50
	// oneShotGCPercent is GOGC of a one-shot headless run until its first
	// collection. Go's heap minimum scales with GOGC (4 MB at 100), so
	// the first collection comes at 8 MB of heap instead of 2 MB: a run
	// of ten tool turns, start-up included, never collects. A collection
	// there frees little and costs more than it frees: the sweeper's span
	// sets and the metadata of every frame it scans (pages of the
	// binary's function table). After the first collection the
	// process runs at cliGCPercent, as any other command.
	oneShotGCPercent = 200
	// cpuBoundGCPercent is GOGC of a one-shot tool call (cpuBound) until
	// its first collection, Go's default after it: the first collection
	// comes at 16 MB of heap instead of 4 MB. A Grep with a large result
	// collected once, at its end, while its result was formatted and
	// saved (CPU and two more threads woken); now it never collects.
	cpuBoundGCPercent = 400
)

// tuneMemory sets the collector for the command about to run. A one-shot
// headless run also unmaps the binary's pages its start-up touched
// (dropStartupPages): they are mapped again as the run needs them.
func tuneMemory(cmd *cobra.Command) {
	userGC := os.Getenv("GOGC") != "" // the user's GOGC stands; the rest is not the collector's
	if cmd.Annotations[cpuBound] != "" {
		if !userGC {
			// Raising the goal starts no collection (lowering it
			// began one at once, a visible share of a short Grep).
			collectLate(cpuBoundGCPercent, 100)
		}
		return
	}
	if oneShot(cmd) {
		if !userGC {
			collectLate(oneShotGCPercent, cliGCPercent)
		}
		presizeStack()
		// Best effort: on failure the pages stay mapped.
		dropStartupPages()
		cmd.SetContext(agent.InlineDeepCalls(cmd.Context())) // one session: no idle stack to keep small
		return
	}
	if !userGC {
		debug.SetGCPercent(cliGCPercent)
	}
}

// oneShot reports whether cmd is a headless run of one prompt (gantry -p
// without stream-json input, which may carry many prompts).
func oneShot(cmd *cobra.Command) bool {
	if cmd != cmd.Root() {
		return false
	}
	p, _ := cmd.Flags().GetBool("print")
	in, _ := cmd.Flags().GetString("input-format")
	return p && in != "stream-json"
}

// collectLate sets GOGC to first until the first collection has run, then
// to then.
func collectLate(first, then int) {
	debug.SetGCPercent(first)
	// The sentinel is unreachable at once; its finalizer runs after the
	// first collection. (16 bytes with pointers: a smaller pointer-free
	// object may share a block with others and never be finalized.)
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { debug.SetGCPercent(then) })
}

type gcSentinel struct{ _ [2]*byte }

// presizeIndex keeps presizeStack's frame from being optimised away.
var presizeIndex = 1

// presizeStack grows the calling goroutine's stack to 64 KB in one step,
// while it is shallow. The agent's deepest paths (JSON encoding of nested
// schemas, the SDK's reflection) need about that much; grown by doubling
// from 8 KB, each growth copies the stack and reads the metadata (stack
// maps, frame sizes) of every function on it, deep in the run — pages of
// the binary's function table a -p run touches for nothing else. With no collection
// (collectFromLimit) the stack is not shrunk back either.
//
//go:noinline
func presizeStack() byte {
	var frame [48 << 10]byte
	frame[presizeIndex] = 1
	return frame[len(frame)-presizeIndex]
}
