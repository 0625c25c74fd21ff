// Package tooltest runs a [tool.Tool] in a test the way the executor hands
// it a call, without an executor: the tool's own input check, then the
// call. It is for the tests of tool packages; programs run tools through
// the executor.
package tooltest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// Call runs tl on in with env and returns the result the model would see.
//
// in is the call's input: a string, []byte or [json.RawMessage] is the
// JSON itself; anything else is marshalled (a failure fails the test).
// The tool's [tool.InputValidator], if it has one, runs first; then
// [tool.Tool.Call] runs under t.Context(). An error from either comes back
// as an error result ([tool.ErrorResult]), as the executor turns a tool
// failure into one. A nil result with no error fails the test: the tool
// broke its contract. Use [Run] to tell a tool's Go error from a result it
// returned.
//
// What the executor adds around a call is not done here: the input-schema
// check and its coercions (see executor.ValidateInput), hooks, the
// permission decision, deadlines and the result budget. The result's
// ContextModifier is returned, not applied.
func Call(t testing.TB, tl tool.Tool, env *tool.Env, in any) *tool.Result {
	t.Helper()
	return CallContext(t.Context(), t, tl, env, in)
}

// CallContext is [Call] under ctx: for a test that cancels the call or
// gives it a deadline.
func CallContext(ctx context.Context, t testing.TB, tl tool.Tool, env *tool.Env, in any) *tool.Result {
	t.Helper()
	raw, err := Input(in)
	if err != nil {
		t.Fatalf("%s: %v", tl.Spec().Name, err)
	}
	if v, ok := tl.(tool.InputValidator); ok {
		if err := v.ValidateInput(ctx, env, raw); err != nil {
			return tool.ErrorResult(err)
		}
	}
	r, err := tl.Call(ctx, env, raw)
	if err != nil {
		return tool.ErrorResult(err)
	}
	if r == nil {
		t.Fatalf("%s(%s): nil result", tl.Spec().Name, raw)
	}
	return r
}

// Run runs tl on in with env as [Call] does, but returns the input check's
// error or the call's Go error as it is, for a test that checks which
// failures a tool reports as errors and which as results.
func Run(ctx context.Context, tl tool.Tool, env *tool.Env, in any) (*tool.Result, error) {
	raw, err := Input(in)
	if err != nil {
		return nil, err
	}
	if v, ok := tl.(tool.InputValidator); ok {
		if err := v.ValidateInput(ctx, env, raw); err != nil {
			return nil, err
		}
	}
	return tl.Call(ctx, env, raw)
}

// Input returns in as a call's raw JSON input: a string, []byte or
// [json.RawMessage] as it is, anything else marshalled.
func Input(in any) (json.RawMessage, error) {
	switch v := in.(type) {
	case json.RawMessage:
		return v, nil
	case []byte:
		return v, nil
	case string:
		return json.RawMessage(v), nil
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("tooltest: marshal the input: %w", err)
	}
	return raw, nil
}
