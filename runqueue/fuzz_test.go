package runqueue_test

import (
	"encoding/json"
	"testing"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/runqueue"
)

// FuzzDecodeAnswer: an answer from the API either decodes to the answer of
// its kind and passes or fails CheckAnswer, or is refused; it never panics.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{`{"choice":"allow_once"}`, `{"answers":{"Q?":"A"}}`, `{"approved":true,"mode":"acceptEdits"}`,
		`{"action":"accept","content":{"a":1}}`, `{"trust":true}`, `{"choice":"deny","updated_input":"{"}`, `null`, `[]`} {
		for _, k := range []string{"permission", "question", "plan", "elicitation", "trust", "other"} {
			f.Add(k, s)
		}
	}
	f.Fuzz(func(t *testing.T, kind, body string) {
		a, err := runqueue.DecodeAnswer(interaction.Kind(kind), []byte(body))
		if err != nil {
			return
		}
		if a == nil || string(a.Kind()) != kind {
			t.Fatalf("kind %q decoded to %T", kind, a)
		}
		if runqueue.CheckAnswer(a) == nil {
			if _, err := json.Marshal(a); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzRequestValidate: Validate never panics and accepts only absolute
// directories and non-empty prompts.
func FuzzRequestValidate(f *testing.F) {
	f.Add(`{"prompt":"x","dir":"/tmp"}`)
	f.Add(`{"prompt":"","dir":"/"}`)
	f.Add(`{"prompt":"x","dir":"/tmp","options":{"mode":"plan","max_turns":-1}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var r runqueue.Request
		if json.Unmarshal([]byte(s), &r) != nil {
			return
		}
		if r.Validate() == nil && (r.Prompt == "" || r.Dir == "" || r.Dir[0] != '/') {
			t.Fatalf("accepted %+v", r)
		}
	})
}
