package file

import (
	"context"

	"github.com/gantry-dev/gantry/tool"
)

// WriteObserver is an optional session service (see [tool.Use]) told about
// every file Write and Edit changed. A non-empty answer is appended to the
// tool's result for the model: builtin/lsp's Manager answers with the new
// errors a language server reports, so the model sees that it broke the
// build. FileWritten runs after the file is written and its lock released;
// it must bound its own time and cannot fail the write. An observer that
// learns more after the result was returned (a language server still
// starting) may also implement the agent's Reminder,
// Remind(ctx, env) (text string, ack func(), err error): the agent asks it
// before every model request and gives the text to the model.
type WriteObserver interface {
	FileWritten(ctx context.Context, env *tool.Env, path string) string
}

// observed wraps a writing tool's body: after a successful change it asks
// the session's WriteObserver, if there is one, what to add.
func observed[In any](pathOf func(In) string, fn tool.Func[In]) tool.Func[In] {
	return func(ctx context.Context, env *tool.Env, in In) (*tool.Result, error) {
		res, err := fn(ctx, env, in)
		if err != nil || res == nil || res.IsError {
			return res, err
		}
		obs, oerr := tool.Use[WriteObserver](env)
		if oerr != nil || obs == nil {
			return res, nil
		}
		path, perr := resolvePath(envWorkDir(env), pathOf(in))
		if perr != nil {
			return res, nil
		}
		if note := obs.FileWritten(ctx, env, path); note != "" {
			res.Content = append(res.Content, tool.Text(note))
			if res.Display != nil {
				res.Display = append(res.Display, tool.Text(EscapeDisplay(note)))
			}
		}
		return res, nil
	}
}
