package executor

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// TestValidateInput: the exported check sees what a run sees — schema,
// coercion, the tool's own validation.
func TestValidateInput(t *testing.T) {
	k := newKit(t)
	var checked tool.Tool
	for _, tl := range k.tools {
		if tl.Spec().Name == "Checked" {
			checked = tl
		}
	}
	cases := []struct {
		in, want, errHas string
	}{
		{in: `{"text":"hi"}`, want: `{"text":"hi"}`},
		{in: `{"text":"hi","count":"3"}`, want: `{"count":3,"text":"hi"}`}, // coerced
		{in: `{"count":3}`, errHas: "text"},                                // required
		{in: `{"text":"bad input"}`, errHas: "must not start with bad"},    // the tool's own check
		{in: `{`, errHas: "JSON"},
	}
	for _, c := range cases {
		got, err := ValidateInput(context.Background(), checked, &tool.Env{}, json.RawMessage(c.in))
		if c.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("%s: err %v, want %q", c.in, err, c.errHas)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %s %v, want %s", c.in, got, err, c.want)
		}
	}
}
