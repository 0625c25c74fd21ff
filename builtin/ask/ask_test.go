package ask

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
)

func q(text string, labels ...string) interaction.Question {
	qq := interaction.Question{Question: text, Header: "H"}
	for _, l := range labels {
		qq.Options = append(qq.Options, interaction.Option{Label: l, Description: "d"})
	}
	return qq
}

func TestValidate(t *testing.T) {
	long := q("Q?", "a", "b")
	long.Header = strings.Repeat("h", MaxHeader+1)
	cases := []struct {
		name string
		in   Input
		want string // "" = valid
	}{
		{"one question", Input{Questions: []interaction.Question{q("Q?", "a", "b")}}, ""},
		{"four questions, four options", Input{Questions: []interaction.Question{q("1?", "a", "b", "c", "d"), q("2?", "a", "b"), q("3?", "a", "b"), q("4?", "a", "b")}}, ""},
		{"no questions", Input{}, "1 to 4 questions"},
		{"five questions", Input{Questions: []interaction.Question{q("1?", "a", "b"), q("2?", "a", "b"), q("3?", "a", "b"), q("4?", "a", "b"), q("5?", "a", "b")}}, "1 to 4 questions"},
		{"one option", Input{Questions: []interaction.Question{q("Q?", "a")}}, "2 to 4 options"},
		{"five options", Input{Questions: []interaction.Question{q("Q?", "a", "b", "c", "d", "e")}}, "2 to 4 options"},
		{"same question twice", Input{Questions: []interaction.Question{q("Q?", "a", "b"), q("Q?", "c", "d")}}, "asked twice"},
		{"same label twice", Input{Questions: []interaction.Question{q("Q?", "a", "a")}}, "used twice"},
		{"empty question", Input{Questions: []interaction.Question{q(" ", "a", "b")}}, "question is empty"},
		{"empty label", Input{Questions: []interaction.Question{q("Q?", "", "b")}}, "label is empty"},
		{"long header", Input{Questions: []interaction.Question{long}}, "header is longer"},
		{"answer to another question", Input{Questions: []interaction.Question{q("Q?", "a", "b")}, Answers: map[string]string{"X?": "a"}}, "not one of the questions"},
	}
	for _, tc := range cases {
		err := Validate(tc.in)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestCall(t *testing.T) {
	in, _ := json.Marshal(Input{Questions: []interaction.Question{q("Q?", "a", "b")}})
	ctx := context.Background()
	// Answers given in advance are used without asking.
	pre, _ := json.Marshal(Input{Questions: []interaction.Question{q("Q?", "a", "b")}, Answers: map[string]string{"Q?": "b"}})
	r, err := New().Call(ctx, &tool.Env{}, pre)
	if err != nil || !strings.Contains(r.TextContent(), `"Q?" = "b"`) {
		t.Fatalf("pre-answered: %v %v", r, err)
	}
	// A channel error other than nobody fails the call.
	services := tool.Provide(&tool.Services{}, interaction.Channel(interaction.ChannelFunc(func(context.Context, interaction.Request) (interaction.Answer, error) {
		return nil, errors.New("terminal gone")
	})))
	if _, err := New().Call(ctx, &tool.Env{Services: services}, in); err == nil || !strings.Contains(err.Error(), "terminal gone") {
		t.Errorf("channel error: %v", err)
	}
	// Unanswered questions are listed as such.
	services = tool.Provide(&tool.Services{}, interaction.Channel(interaction.Funcs{Question: func(context.Context, *interaction.QuestionRequest) (*interaction.QuestionAnswer, error) {
		return &interaction.QuestionAnswer{Answers: map[string]string{}}, nil
	}}))
	r, err = New().Call(ctx, &tool.Env{Services: services}, in)
	if err != nil || !strings.Contains(r.TextContent(), "(no answer)") {
		t.Errorf("unanswered: %v %v", r, err)
	}
	// The tool is read-only and planning by its traits.
	if tr := tool.TraitsOf(New(), in); !tr.ReadOnly || !tr.Planning || tr.ConcurrencySafe {
		t.Errorf("traits %+v", tr)
	}
}

func FuzzValidate(f *testing.F) {
	f.Add(`{"questions":[{"question":"Q?","header":"H","options":[{"label":"a","description":""},{"label":"b","description":""}],"multiSelect":false}]}`)
	f.Add(`{"questions":[]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var in Input
		if json.Unmarshal([]byte(raw), &in) != nil {
			return
		}
		if Validate(in) != nil {
			return
		}
		if n := len(in.Questions); n < MinQuestions || n > MaxQuestions {
			t.Fatalf("valid with %d questions", n)
		}
		for _, qq := range in.Questions {
			if n := len(qq.Options); n < MinOptions || n > MaxOptions {
				t.Fatalf("valid with %d options", n)
			}
		}
	})
}
