package streamjson

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/builtin/ask"
	"github.com/gantry-dev/gantry/builtin/crontool"
	"github.com/gantry-dev/gantry/builtin/mcpres"
	"github.com/gantry-dev/gantry/builtin/plan"
	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/builtin/task"
	"github.com/gantry-dev/gantry/builtin/web"
	"github.com/gantry-dev/gantry/builtin/worktree"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// This file is the one home of the tool_use_result shapes: for every
// built-in tool the Agent SDK declares an output type for (its
// sdk-tools.d.ts, ToolOutputSchemas), the tool's result is given in that
// type, field for field. The file tools (Read, Write, Edit, NotebookEdit)
// and the search tools (Glob, Grep) and WebFetch already keep their
// structured result in the SDK's shape; the others keep Gantry's own and
// are converted here. A failed call is the SDK's error string ("Error:
// …"); a tool the SDK declares nothing for gives its structured result
// as it is, else its text.

// callFacts is what the Writer knows of one tool call besides its outcome:
// when it was asked for, and (for an Agent call) what its subagent did.
type callFacts struct {
	asked    time.Time
	toolUses int
	usage    llm.Usage
	models   []string
}

// sdkToolResult is the tool_use_result of a tool result message.
func sdkToolResult(o *executor.Outcome, facts *callFacts, b llm.Block, now func() time.Time) any {
	var r *tool.Result
	if o != nil {
		r = o.Result
	}
	if b.IsError || r == nil || r.IsError {
		return "Error: " + blockText(b)
	}
	if conv := sdkShapes[cmpOr(o.Tool, o.Name)]; conv != nil {
		if v := conv(o, facts, b, now); v != nil {
			return v
		}
	}
	if r.Structured != nil {
		return r.Structured
	}
	return blockText(b)
}

func blockText(b llm.Block) string {
	var sb strings.Builder
	for _, c := range b.Content {
		if c.Type == tool.TypeText {
			sb.WriteString(c.Text)
		}
	}
	return sb.String()
}

// shapeFunc converts one tool's outcome into the SDK's declared output; nil
// means "no conversion" (the structured result or the text is given).
type shapeFunc func(o *executor.Outcome, facts *callFacts, b llm.Block, now func() time.Time) any

// sdkShapes holds the conversions by tool name (the SDK's names; Gantry's
// aliases of them resolve to these before the outcome is made).
var sdkShapes = map[string]shapeFunc{
	"Bash":                 bashShape,
	"TaskStop":             taskStopShape,
	"Agent":                agentShape,
	"Task":                 agentShape,
	"TaskCreate":           taskCreateShape,
	"TaskGet":              taskGetShape,
	"TaskList":             taskListShape,
	"TaskUpdate":           taskUpdateShape,
	"ExitPlanMode":         exitPlanShape,
	"EnterPlanMode":        messageShape,
	"AskUserQuestion":      askShape,
	"EnterWorktree":        enterWorktreeShape,
	"ExitWorktree":         exitWorktreeShape,
	"CronCreate":           cronCreateShape,
	"CronDelete":           cronDeleteShape,
	"CronList":             cronListShape,
	"ListMcpResources":     listResourcesShape,
	"ListMcpResourcesTool": listResourcesShape,
	"ReadMcpResource":      readResourceShape,
	"ReadMcpResourceTool":  readResourceShape,
	"WebSearch":            webSearchShape,
	"RemoteTrigger":        remoteTriggerShape,
}

// input decodes the call's input into v (best effort: a field the model
// left out stays zero).
func input(o *executor.Outcome, v any) {
	if len(o.Input) > 0 {
		_ = json.Unmarshal(o.Input, v)
	}
}

// BashOutput is the SDK's BashOutput as Gantry fills it: stdout holds the
// command's output with stderr interleaved (Gantry runs both into one
// stream, as the model reads them), so stderr is empty.
type sdkBashOutput struct {
	Stdout                   string `json:"stdout"`
	Stderr                   string `json:"stderr"`
	Interrupted              bool   `json:"interrupted"`
	BackgroundTaskID         string `json:"backgroundTaskId,omitempty"`
	ReturnCodeInterpretation string `json:"returnCodeInterpretation,omitempty"`
	NoOutputExpected         bool   `json:"noOutputExpected,omitempty"`
	PersistedOutputPath      string `json:"persistedOutputPath,omitempty"`
	PersistedOutputSize      int64  `json:"persistedOutputSize,omitempty"`
}

func bashShape(o *executor.Outcome, _ *callFacts, b llm.Block, _ func() time.Time) any {
	out, ok := o.Result.Structured.(shell.BashOutput)
	if !ok {
		return nil
	}
	s := sdkBashOutput{Stdout: out.Output, Interrupted: out.Interrupted || out.TimedOut, BackgroundTaskID: out.TaskID}
	if out.TaskID != "" {
		s.Stdout = ""
	}
	if out.ExitCode != 0 && out.TaskID == "" {
		s.ReturnCodeInterpretation = fmt.Sprintf("exit code %d", out.ExitCode)
	}
	if out.Truncated && out.OutputFile != "" {
		s.PersistedOutputPath, s.PersistedOutputSize = out.OutputFile, out.OutputBytes
	}
	return s
}

func taskStopShape(o *executor.Outcome, _ *callFacts, b llm.Block, _ func() time.Time) any {
	info, ok := o.Result.Structured.(shell.JobInfo)
	if !ok {
		return nil
	}
	return struct {
		Message  string `json:"message"`
		TaskID   string `json:"task_id"`
		TaskType string `json:"task_type"`
		Command  string `json:"command,omitempty"`
	}{blockText(b), info.ID, taskType(info.Kind), cmpOr(info.Command, info.Description)}
}

// taskType is the SDK's name of a background task's kind.
func taskType(kind string) string {
	switch kind {
	case "shell":
		return "local_bash"
	case "agent":
		return "local_agent"
	}
	return kind
}

type sdkAgentUsage struct {
	InputTokens              int       `json:"input_tokens"`
	OutputTokens             int       `json:"output_tokens"`
	CacheCreationInputTokens int       `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int       `json:"cache_read_input_tokens"`
	ServerToolUse            *struct{} `json:"server_tool_use"`
	ServiceTier              *string   `json:"service_tier"`
	CacheCreation            *struct{} `json:"cache_creation"`
}

func agentShape(o *executor.Outcome, facts *callFacts, b llm.Block, now func() time.Time) any {
	var in agenttool.Input
	input(o, &in)
	switch out := o.Result.Structured.(type) {
	case *agenttool.Started:
		return struct {
			Status      string `json:"status"`
			IsAsync     bool   `json:"isAsync"`
			AgentID     string `json:"agentId"`
			Description string `json:"description"`
			Prompt      string `json:"prompt"`
			OutputFile  string `json:"outputFile"`
		}{"async_launched", true, out.AgentID, in.Description, in.Prompt, out.OutputPath}
	case *agenttool.Outcome:
		text := out.Text
		if len(out.Structured) > 0 {
			text = string(out.Structured)
		}
		var f callFacts
		if facts != nil {
			f = *facts
		}
		var dur int64
		if !f.asked.IsZero() {
			dur = now().Sub(f.asked).Milliseconds()
		}
		usage := sdkAgentUsage{InputTokens: f.usage.InputTokens, OutputTokens: f.usage.OutputTokens,
			CacheCreationInputTokens: f.usage.CacheCreationInputTokens, CacheReadInputTokens: f.usage.CacheReadInputTokens}
		res := struct {
			AgentID           string           `json:"agentId"`
			AgentType         string           `json:"agentType,omitempty"`
			Content           []map[string]any `json:"content"`
			ModelsUsed        []string         `json:"modelsUsed,omitempty"`
			TotalToolUseCount int              `json:"totalToolUseCount"`
			TotalDurationMs   int64            `json:"totalDurationMs"`
			TotalTokens       int              `json:"totalTokens"`
			Usage             sdkAgentUsage    `json:"usage"`
			Status            string           `json:"status"`
			Prompt            string           `json:"prompt"`
			WorktreePath      string           `json:"worktreePath,omitempty"`
			WorktreeBranch    string           `json:"worktreeBranch,omitempty"`
		}{AgentID: out.AgentID, AgentType: out.AgentType, Content: []map[string]any{{"type": "text", "text": text}},
			ModelsUsed: f.models, TotalToolUseCount: f.toolUses, TotalDurationMs: dur, TotalTokens: out.Tokens,
			Usage: usage, Status: "completed", Prompt: in.Prompt}
		if w := out.Worktree; w != nil && w.Kept {
			res.WorktreePath, res.WorktreeBranch = w.Path, w.Branch
		}
		return res
	}
	return nil
}

// sdkTaskStatus is a task's status in the SDK's three values (a deleted
// task is not shown).
func sdkTaskStatus(s store.TaskStatus) string {
	switch s {
	case store.TaskInProgress, store.TaskCompleted:
		return string(s)
	}
	return string(store.TaskPending)
}

func taskOf(o *executor.Outcome) (store.Task, bool) {
	switch t := o.Result.Structured.(type) {
	case store.Task:
		return t, true
	case *store.Task:
		if t != nil {
			return *t, true
		}
	}
	return store.Task{}, false
}

func taskCreateShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	t, ok := taskOf(o)
	if !ok {
		return nil
	}
	type created struct {
		ID          string `json:"id"`
		Subject     string `json:"subject"`
		Description string `json:"description,omitempty"`
	}
	return struct {
		Task created `json:"task"`
	}{created{t.ID, t.Subject, t.Description}}
}

func taskGetShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	type got struct {
		ID          string   `json:"id"`
		Subject     string   `json:"subject"`
		Description string   `json:"description"`
		Status      string   `json:"status"`
		Blocks      []string `json:"blocks"`
		BlockedBy   []string `json:"blockedBy"`
	}
	out := struct {
		Task *got `json:"task"`
	}{}
	if t, ok := taskOf(o); ok && t.Status != store.TaskDeleted {
		out.Task = &got{t.ID, t.Subject, t.Description, sdkTaskStatus(t.Status), nonNil(t.Blocks), nonNil(t.BlockedBy)}
	}
	return out
}

func taskListShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	var tasks []store.Task
	switch l := o.Result.Structured.(type) {
	case task.ListResult:
		tasks = l.Tasks
	case *task.ListResult:
		tasks = l.Tasks
	default:
		return nil
	}
	type listed struct {
		ID        string   `json:"id"`
		Subject   string   `json:"subject"`
		Status    string   `json:"status"`
		Owner     string   `json:"owner,omitempty"`
		BlockedBy []string `json:"blockedBy"`
	}
	out := struct {
		Tasks []listed `json:"tasks"`
	}{Tasks: []listed{}}
	for _, t := range tasks {
		if t.Status == store.TaskDeleted {
			continue
		}
		out.Tasks = append(out.Tasks, listed{t.ID, t.Subject, sdkTaskStatus(t.Status), t.Owner, nonNil(t.BlockedBy)})
	}
	return out
}

func taskUpdateShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	t, ok := taskOf(o)
	if !ok {
		return nil
	}
	var in map[string]json.RawMessage
	input(o, &in)
	fields := []string{}
	for k := range in {
		if k != "taskId" {
			fields = append(fields, k)
		}
	}
	slices.Sort(fields)
	return struct {
		Success       bool     `json:"success"`
		TaskID        string   `json:"taskId"`
		UpdatedFields []string `json:"updatedFields"`
	}{true, t.ID, fields}
}

func exitPlanShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	var in struct {
		Plan *string `json:"plan"`
	}
	input(o, &in)
	var file string
	switch r := o.Result.Structured.(type) {
	case plan.ExitResult:
		file = r.PlanFile
	case *plan.ExitResult:
		file = r.PlanFile
	}
	return struct {
		Plan     *string `json:"plan"`
		IsAgent  bool    `json:"isAgent"`
		FilePath string  `json:"filePath,omitempty"`
	}{in.Plan, false, file}
}

func messageShape(o *executor.Outcome, _ *callFacts, b llm.Block, _ func() time.Time) any {
	return struct {
		Message string `json:"message"`
	}{blockText(b)}
}

func askShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	var r ask.Result
	switch v := o.Result.Structured.(type) {
	case ask.Result:
		r = v
	case *ask.Result:
		r = *v
	default:
		return nil
	}
	type option struct {
		Label       string `json:"label"`
		Description string `json:"description"`
		Preview     string `json:"preview,omitempty"`
	}
	type question struct {
		Question    string   `json:"question"`
		Header      string   `json:"header"`
		Options     []option `json:"options"`
		MultiSelect bool     `json:"multiSelect"`
	}
	qs := make([]question, 0, len(r.Questions))
	for _, q := range r.Questions {
		opts := make([]option, 0, len(q.Options))
		for _, op := range q.Options {
			opts = append(opts, option{Label: op.Label, Description: op.Description})
		}
		qs = append(qs, question{q.Question, q.Header, opts, q.MultiSelect})
	}
	answers := r.Answers
	if answers == nil {
		answers = map[string]string{}
	}
	return struct {
		Questions []question        `json:"questions"`
		Answers   map[string]string `json:"answers"`
	}{qs, answers}
}

func enterWorktreeShape(o *executor.Outcome, _ *callFacts, b llm.Block, _ func() time.Time) any {
	var w worktree.Worktree
	switch v := o.Result.Structured.(type) {
	case *worktree.Worktree:
		w = *v
	case worktree.Worktree:
		w = v
	default:
		return nil
	}
	return struct {
		WorktreePath   string `json:"worktreePath"`
		WorktreeBranch string `json:"worktreeBranch,omitempty"`
		Message        string `json:"message"`
	}{cmpOr(w.Sub, w.Path), w.Branch, blockText(b)}
}

func exitWorktreeShape(o *executor.Outcome, _ *callFacts, b llm.Block, _ func() time.Time) any {
	var in struct {
		Action string `json:"action"`
	}
	input(o, &in)
	out := struct {
		Action         string `json:"action"`
		OriginalCwd    string `json:"originalCwd"`
		WorktreePath   string `json:"worktreePath"`
		WorktreeBranch string `json:"worktreeBranch,omitempty"`
		Message        string `json:"message"`
	}{Action: "keep", Message: blockText(b)}
	if in.Action == "remove" {
		out.Action = "remove"
	}
	switch v := o.Result.Structured.(type) {
	case *worktree.Worktree:
		out.OriginalCwd, out.WorktreePath, out.WorktreeBranch = v.Root, v.Path, v.Branch
	case worktree.Worktree:
		out.OriginalCwd, out.WorktreePath, out.WorktreeBranch = v.Root, v.Path, v.Branch
	}
	return out
}

func cronJob(o *executor.Outcome) (crontool.Job, bool) {
	switch v := o.Result.Structured.(type) {
	case crontool.Job:
		return v, true
	case *crontool.Job:
		return *v, v != nil
	}
	return crontool.Job{}, false
}

// The SDK's humanSchedule is the schedule in words; Gantry gives the cron
// expression itself.
func cronCreateShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	j, ok := cronJob(o)
	if !ok {
		return nil
	}
	out := struct {
		ID            string `json:"id"`
		HumanSchedule string `json:"humanSchedule"`
		Recurring     bool   `json:"recurring"`
		Durable       bool   `json:"durable"`
		NextFireAt    int64  `json:"nextFireAt,omitempty"`
	}{ID: j.ID, HumanSchedule: j.Cron, Recurring: j.Recurring, Durable: j.Durable}
	if !j.NextRun.IsZero() {
		out.NextFireAt = j.NextRun.UnixMilli()
	}
	return out
}

func cronDeleteShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	var in struct {
		ID string `json:"id"`
	}
	input(o, &in)
	return struct {
		ID string `json:"id"`
	}{in.ID}
}

func cronListShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	m, ok := o.Result.Structured.(map[string]any)
	if !ok {
		return nil
	}
	jobs, _ := m["jobs"].([]crontool.Job)
	type listed struct {
		ID            string `json:"id"`
		Cron          string `json:"cron"`
		HumanSchedule string `json:"humanSchedule"`
		Prompt        string `json:"prompt"`
		Recurring     bool   `json:"recurring"`
		Durable       bool   `json:"durable"`
		NextFireAt    int64  `json:"nextFireAt,omitempty"`
	}
	out := struct {
		Jobs []listed `json:"jobs"`
	}{Jobs: []listed{}}
	for _, j := range jobs {
		l := listed{ID: j.ID, Cron: j.Cron, HumanSchedule: j.Cron, Prompt: j.Prompt, Recurring: j.Recurring, Durable: j.Durable}
		if !j.NextRun.IsZero() {
			l.NextFireAt = j.NextRun.UnixMilli()
		}
		out.Jobs = append(out.Jobs, l)
	}
	return out
}

func listResourcesShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	type listed struct {
		URI         string `json:"uri"`
		Name        string `json:"name"`
		MIMEType    string `json:"mimeType,omitempty"`
		Description string `json:"description,omitempty"`
		Server      string `json:"server"`
	}
	out := []listed{}
	list, _ := o.Result.Structured.([]mcpres.Resource)
	for _, r := range list {
		out = append(out, listed{r.URI, r.Name, r.MIMEType, r.Description, r.Server})
	}
	return out
}

func readResourceShape(o *executor.Outcome, _ *callFacts, _ llm.Block, _ func() time.Time) any {
	var in struct {
		URI string `json:"uri"`
	}
	input(o, &in)
	type part struct {
		URI         string `json:"uri"`
		MIMEType    string `json:"mimeType,omitempty"`
		Text        string `json:"text,omitempty"`
		BlobSavedTo string `json:"blobSavedTo,omitempty"`
	}
	out := struct {
		Contents []part `json:"contents"`
	}{Contents: []part{}}
	for _, c := range o.Result.Content {
		switch c.Type {
		case tool.TypeResource:
			out.Contents = append(out.Contents, part{URI: cmpOr(c.URI, in.URI), MIMEType: c.MIMEType, Text: c.Text})
		case tool.TypeImage:
			out.Contents = append(out.Contents, part{URI: in.URI, MIMEType: c.MIMEType})
		}
	}
	return out
}

func webSearchShape(o *executor.Outcome, facts *callFacts, _ llm.Block, now func() time.Time) any {
	rs, ok := o.Result.Structured.([]web.SearchResult)
	if !ok {
		return nil
	}
	var in struct {
		Query string `json:"query"`
	}
	input(o, &in)
	type hit struct {
		Title string `json:"title"`
		URL   string `json:"url"`
	}
	hits := make([]hit, 0, len(rs))
	for _, r := range rs {
		hits = append(hits, hit{r.Title, r.URL})
	}
	var secs float64
	if facts != nil && !facts.asked.IsZero() {
		secs = now().Sub(facts.asked).Seconds()
	}
	return struct {
		Query           string  `json:"query"`
		Results         []any   `json:"results"`
		DurationSeconds float64 `json:"durationSeconds"`
	}{in.Query, []any{struct {
		ToolUseID string `json:"tool_use_id"`
		Content   []hit  `json:"content"`
	}{o.ID, hits}}, secs}
}

func remoteTriggerShape(o *executor.Outcome, _ *callFacts, b llm.Block, _ func() time.Time) any {
	js, err := json.Marshal(o.Result.Structured)
	if err != nil || o.Result.Structured == nil {
		js = []byte("null")
	}
	return struct {
		Status  int    `json:"status"`
		JSON    string `json:"json"`
		Summary string `json:"summary,omitempty"`
	}{200, string(js), blockText(b)}
}
