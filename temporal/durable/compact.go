package durable

import (
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/llm"
)

// maybeCompact summarises the older part of the conversation when the
// last model call's size crossed the threshold, as the in-process loop
// does at its context threshold: the summary is a model call (an
// activity, with tool use off) on the messages before a clean boundary;
// the conversation becomes the summary followed by the kept messages, the
// tools loaded through ToolSearch are unloaded and the workers forget the
// file reads. A failed compaction is a notice; the run goes on.
func (r *runner) maybeCompact() {
	threshold := r.spec.CompactThreshold
	if threshold == 0 {
		threshold = agent.DefaultCompactThreshold
	}
	window := r.spec.ContextWindow
	if window <= 0 {
		window = agent.DefaultContextWindow
	}
	if threshold < 0 || float64(r.st.LastSize) < threshold*float64(window) {
		return
	}
	keep := r.spec.KeepMessages
	if keep <= 0 {
		keep = agent.DefaultKeepMessages
	}
	split := agent.CompactSplit(r.st.Messages, keep)
	if split < 1 {
		return // too short to compact
	}
	// The transcript gets everything before the summary replaces it.
	r.transcript(nil)
	msgs := append(append([]llm.Message(nil), r.st.Messages[:split]...), llm.UserText(agent.CompactPrompt))
	var out modelOutput
	mctx := r.activity(activityModel, orDur(r.to.Model, 10*time.Minute), 5)
	err := workflow.ExecuteActivity(mctx, activityModel, modelInput{
		RunID: r.runID, Spec: r.spec, System: r.st.System, Loaded: r.st.Loaded, Messages: msgs, Summary: true,
	}).Get(mctx, &out)
	if err != nil {
		if r.ctx.Err() == nil {
			r.emit(Event{Type: EventNotice, Text: "compaction failed: " + rootMessage(err)})
		}
		return
	}
	r.st.Usage = r.st.Usage.Add(out.Usage)
	r.st.CostUSD += r.cost(out.Usage)
	summary := strings.TrimSpace(out.Message.Text())
	if summary == "" {
		r.emit(Event{Type: EventNotice, Text: "compaction failed: the model returned an empty summary"})
		return
	}
	before := len(r.st.Messages)
	kept := r.st.Messages[split:]
	r.st.Base += r.st.Written
	r.st.Messages = append([]llm.Message{llm.UserText(agent.CompactSummaryPrefix + summary)}, kept...)
	// As in-process: the reads are forgotten (the model no longer sees
	// what it read) and the tools loaded through ToolSearch unloaded.
	r.st.Written, r.st.Compacted, r.st.Loaded, r.st.Files = 0, true, nil, nil
	r.st.Compactions++
	prompt := r.st.LastSize
	r.st.LastSize = 0
	r.emit(Event{Type: EventCompact, Compact: &CompactInfo{Before: before, After: len(r.st.Messages), PromptTokens: prompt}})
	r.transcript(nil)
}
