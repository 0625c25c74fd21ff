package executor

import (
	"context"
	"encoding/json"

	"github.com/gantry-dev/gantry/tool"
)

// ValidateInput checks raw as the executor checks a call's input before the
// hooks and the permission decision see it: against t's input schema, with
// the same coercion of common model mistakes (a number sent as a string, an
// object sent as a JSON string, …), then t's own [tool.InputValidator].
// It returns the input the call would get. A bad input gives an
// *InputError (listing the fields) or the tool's own error. Tools and
// commands that decide about an input outside a run (such as `gantry
// permissions check`) use it so they see what a run would.
func ValidateInput(ctx context.Context, t tool.Tool, env *tool.Env, raw json.RawMessage) (json.RawMessage, error) {
	e := Executor{schemas: newSchemaCache()}
	in, _, err := e.validate(t.Spec(), raw)
	if err != nil {
		return nil, err
	}
	if v, ok := t.(tool.InputValidator); ok {
		if err := v.ValidateInput(ctx, env, in); err != nil {
			return nil, err
		}
	}
	return in, nil
}
