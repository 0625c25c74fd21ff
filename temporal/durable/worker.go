package durable

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers [RunWorkflow] and the activities with w.
func Register(w worker.Registry, a *Activities) {
	w.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(a.Prepare, activity.RegisterOptions{Name: activityPrepare})
	w.RegisterActivityWithOptions(a.Model, activity.RegisterOptions{Name: activityModel})
	w.RegisterActivityWithOptions(a.Tool, activity.RegisterOptions{Name: activityTool})
	w.RegisterActivityWithOptions(a.Release, activity.RegisterOptions{Name: activityRelease})
	w.RegisterActivityWithOptions(a.Transcript, activity.RegisterOptions{Name: activityTranscript})
}
