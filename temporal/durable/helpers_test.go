package durable

import (
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/temporal/internal/fakemodel"
)

// fakeModel starts the scripted model and returns a provider for it.
func fakeModel(t *testing.T) (*llmtest.Server, llm.Provider) { return fakemodel.Start(t) }

// testSpec is a spec for dir with Bash allowed and nothing read from the
// machine's settings.
func testSpec(dir string, allow ...string) Spec {
	return Spec{WorkDir: dir, Allow: allow, NoSettings: true, NoEnvFacts: true, NoMemoryFiles: true, NoTranscript: true, Model: "claude-test"}
}

func testActivities(t *testing.T, p llm.Provider) *Activities {
	home := t.TempDir()
	a, err := NewActivities(WorkerOptions{Provider: p, Getenv: fakemodel.Getenv(home), UserHome: home, SessionHome: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// runToEnd executes the workflow to its end and returns its result.
func runToEnd(t *testing.T, env *testsuite.TestWorkflowEnvironment, in RunInput) Result {
	t.Helper()
	env.ExecuteWorkflow(WorkflowName, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}
