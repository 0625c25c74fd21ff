// Package shell provides the shell tools: Bash (run a command), TaskOutput
// (aliases BashOutput, AgentOutput: read a background command's new output)
// and TaskStop (alias KillShell: stop one).
//
// # Bash
//
// A command runs as `bash --noprofile --norc -c` in the session's working
// directory ([tool.Env.WorkDir]), in its own process group, with stdin from
// /dev/null and stdout and stderr on one pipe, so they interleave as the
// command wrote them. The environment is built from an allow-list
// ([Options.AllowEnv], default [procenv.DefaultAllow]): only the listed
// variables of the process's environment pass, never one whose name looks
// like a credential, nor BASH_ENV/ENV; then the variables the user
// configured ([Options.Env], settings "env"; never Gantry's own provider
// keys), then settings that keep commands from waiting on a terminal
// ([DefaultSetEnv]).
//
// The working directory persists: when a command ends normally in another
// existing directory, the result's [tool.Result.ContextModifier] moves the
// session there (subject to [Options.AllowCwd]).
//
// A command has 120 s by default, at most 600 s (`timeout` in ms, capped
// before it is converted, so no value overflows; the tool implements
// [tool.Timeouter]). On timeout or cancellation its process group
// gets SIGTERM, then SIGKILL after [Options.Grace]. When the shell exits, any
// process left in its group is killed as well: nothing a foreground command
// starts outlives the call (use run_in_background for servers). A process
// that leaves the group (setsid) is not tracked; if it keeps the output pipe
// open the call stops reading after the grace period.
//
// Output is kept in bounded memory (internal/outbuf): the model gets at most
// 30,000 characters, the first and last halves when longer, with a note
// naming a file in [tool.Env.ToolResultsDir] that holds the whole output.
// Past 100 MiB ([Options.MaxOutputBytes]) the command is killed. The model
// channel has terminal escapes stripped; the display channel shows them
// escaped, as well as invisible and bidirectional-control characters.
// A non-zero exit, a timeout, an interruption or the output limit make an
// error result. Spec.CancelSiblingsOnError is set: a failing Bash call
// cancels its parallel siblings.
//
// A foreground command is read-only (and non-destructive) only when
// internal/shellparse's command-risk model (Analyze) finds every command and
// option in it known read-only; everything else is fail-closed. A read-only
// command is concurrency-safe unless it may change the shell's directory
// (cd, pushd or popd anywhere in it, Analysis.ChangesDir): the executor
// tracks the working directory only of calls that run alone, so
// "cd sub && ls" is never in a parallel batch and moves the session like any
// other cd. Such a line runs with git's repository programs switched off
// (shellparse.GitReadEnv), since it may run without a prompt. Bash declares
// its command line through [tool.Accessor]: the permission layer analyses it
// with the same model.
//
// # Background tasks
//
// With run_in_background the command starts at once and its output goes to a
// file; the call returns the task id. Background tasks need a [*Jobs] in the
// environment's services (tool.Provide[*shell.Tasks](services, shell.NewTasks())),
// created by the session owner, who must call [Jobs.Close] when the session
// ends: it kills and reaps every task. Without one, run_in_background is an
// error result that says so.
package shell
