// Package ask holds the built-in tool AskUserQuestion: the model asks the
// user 1–4 multiple-choice questions (2–4 options each, single or multiple
// choice, and always a free "other" answer) and gets the answers keyed by
// question.
//
// The questions go to the session's interaction channel
// (tool.Use[interaction.Channel]). When nobody can answer — a headless run
// without a person or an answering callback — the result says so at once
// (it never waits). A permission callback may also answer in advance by
// allowing the call with an updated input that carries "answers" (how the
// reference agent's SDK and --permission-prompt-tool answer questions);
// such answers are used as they are.
package ask

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
)

// Name is the tool's name.
const Name = "AskUserQuestion"

// Limits of the input.
const (
	MinQuestions = 1
	MaxQuestions = 4
	MinOptions   = 2
	MaxOptions   = 4
	// MaxHeader is the longest header (runes): it is a chip or tab label.
	MaxHeader = 30
)

// Input is AskUserQuestion's input.
type Input struct {
	Questions []interaction.Question `json:"questions" jsonschema:"The questions to ask (1-4)."`
	// Answers are answers given in advance (by a permission callback's
	// updated input), keyed by question text.
	Answers map[string]string `json:"answers,omitempty" jsonschema:"Leave out: filled in by the user's client."`
}

// Result is the structured result: the questions and the answers keyed by
// question text (a question left out of Answers was not answered).
type Result struct {
	Questions []interaction.Question `json:"questions"`
	Answers   map[string]string      `json:"answers"`
	// Unanswered is true when nobody could be asked.
	Unanswered bool `json:"unanswered,omitempty"`
}

const description = `Ask the user one to four multiple-choice questions and wait for the answers.

Use it when a decision is the user's to make and you cannot infer it: a preference, an ambiguous requirement, a choice between approaches. Each question has a short header (a label of a few words), 2-4 options with a label and a description of what choosing it means, and multiSelect when several options may be chosen together. The user can always give their own answer instead ("other"), so do not add an "Other" option. If you recommend an option, put it first and add "(Recommended)" to its label. The answers come back keyed by question text.`

// Tools returns AskUserQuestion.
func Tools() []tool.Tool { return []tool.Tool{New()} }

// New returns AskUserQuestion.
func New() tool.Tool {
	return tool.Must(tool.New(Name, description, call,
		tool.WithTraits(tool.Traits{ReadOnly: true, NonDestructive: true, Planning: true}),
		tool.WithAnnotations(tool.Annotations{Title: "Ask the user", ReadOnlyHint: true, DestructiveHint: new(bool), OpenWorldHint: new(bool)}),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in Input) error { return Validate(in) }),
		tool.DescribeFunc(func(in Input) string {
			if len(in.Questions) == 0 {
				return "Ask the user"
			}
			return "Ask the user: " + in.Questions[0].Question
		}),
		tool.WithSpec(func(s *tool.Spec) { s.MaxResultChars = -1 }),
	))
}

// Validate checks the limits: 1–4 questions with distinct non-empty texts,
// each with a non-empty header of at most MaxHeader runes and 2–4 options
// with distinct non-empty labels; answers given in advance must name asked
// questions.
func Validate(in Input) error {
	if n := len(in.Questions); n < MinQuestions || n > MaxQuestions {
		return fmt.Errorf("ask %d to %d questions at a time (got %d)", MinQuestions, MaxQuestions, n)
	}
	var errs []error
	seen := map[string]bool{}
	for i, q := range in.Questions {
		at := fmt.Sprintf("questions[%d]", i)
		switch {
		case strings.TrimSpace(q.Question) == "":
			errs = append(errs, fmt.Errorf("%s: the question is empty", at))
		case seen[q.Question]:
			errs = append(errs, fmt.Errorf("%s: the question %q is asked twice (answers are keyed by question)", at, q.Question))
		}
		seen[q.Question] = true
		if strings.TrimSpace(q.Header) == "" {
			errs = append(errs, fmt.Errorf("%s: the header is empty", at))
		} else if utf8.RuneCountInString(q.Header) > MaxHeader {
			errs = append(errs, fmt.Errorf("%s: the header is longer than %d characters", at, MaxHeader))
		}
		if n := len(q.Options); n < MinOptions || n > MaxOptions {
			errs = append(errs, fmt.Errorf("%s: give %d to %d options (got %d); the user can always answer in their own words", at, MinOptions, MaxOptions, n))
		}
		labels := map[string]bool{}
		for j, o := range q.Options {
			switch {
			case strings.TrimSpace(o.Label) == "":
				errs = append(errs, fmt.Errorf("%s.options[%d]: the label is empty", at, j))
			case labels[o.Label]:
				errs = append(errs, fmt.Errorf("%s.options[%d]: the label %q is used twice", at, j, o.Label))
			}
			labels[o.Label] = true
		}
	}
	for q := range in.Answers {
		if !seen[q] {
			errs = append(errs, fmt.Errorf("answers: %q is not one of the questions", q))
		}
	}
	return errors.Join(errs...)
}

func call(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
	if len(in.Answers) > 0 {
		return answered(in.Questions, in.Answers), nil
	}
	ch, err := tool.Use[interaction.Channel](env)
	if err != nil {
		ch = interaction.Nobody
	}
	ans, err := interaction.AskQuestions(ctx, ch, &interaction.QuestionRequest{
		Who: interaction.Who{SessionID: env.SessionID}, ToolUseID: env.ToolUseID, Questions: in.Questions,
	})
	switch {
	case errors.Is(err, interaction.ErrNobody):
		why := "no one is there to ask"
		var ne *interaction.NobodyError
		if errors.As(err, &ne) {
			why = ne.Why
		}
		r := tool.TextResult("Nobody can answer these questions in this session (" + why + "). " +
			"Do not ask again: go on with the choice you judge best and say which assumption you made, " +
			"or, if the choice really is the user's, end your turn and put the questions in your answer.")
		r.IsError = true
		r.Structured = Result{Questions: in.Questions, Answers: map[string]string{}, Unanswered: true}
		return r, nil
	case err != nil:
		return nil, fmt.Errorf("asking the user: %w", err)
	}
	return answered(in.Questions, ans.Answers), nil
}

// answered renders the answers for the model, in the questions' order.
func answered(qs []interaction.Question, answers map[string]string) *tool.Result {
	var b strings.Builder
	b.WriteString("The user answered your questions:")
	missing := 0
	for _, q := range qs {
		a, ok := answers[q.Question]
		if !ok || strings.TrimSpace(a) == "" {
			missing++
			fmt.Fprintf(&b, "\n- %q: (no answer)", q.Question)
			continue
		}
		fmt.Fprintf(&b, "\n- %q = %q", q.Question, a)
		if !isOption(q, a) {
			b.WriteString(" (in their own words)")
		}
	}
	if missing > 0 {
		b.WriteString("\nUse your judgement for the unanswered ones and say what you assumed.")
	} else {
		b.WriteString("\nGo on with these answers in mind.")
	}
	out := make(map[string]string, len(answers))
	for k, v := range answers {
		out[k] = v
	}
	r := tool.TextResult(b.String())
	r.Structured = Result{Questions: qs, Answers: out}
	return r
}

// isOption reports whether an answer is one option's label or, for a
// multi-select, a list of them.
func isOption(q interaction.Question, a string) bool {
	has := func(l string) bool {
		return slices.ContainsFunc(q.Options, func(o interaction.Option) bool { return o.Label == l })
	}
	if has(a) {
		return true
	}
	if !q.MultiSelect {
		return false
	}
	for _, l := range strings.Split(a, ", ") {
		if !has(l) {
			return false
		}
	}
	return true
}
