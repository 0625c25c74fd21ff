// Command policyserver is a small MCP server (stdio) for the tests of
// gantry's --permission-prompt-tool: its tool "approve" answers permission
// asks by a fixed CI policy, in the reference agent's shapes.
//
// Policy: Write and Edit inside ./allowed/ are allowed; Bash is denied with
// a message; AskUserQuestion is answered with each question's first option;
// ExitPlanMode is approved; anything else is denied. Every request is
// appended, one JSON line each, to the file named by POLICY_LOG (if set).
package main

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type input struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

func decide(in input) map[string]any {
	var fields map[string]any
	_ = json.Unmarshal(in.Input, &fields)
	switch in.ToolName {
	case "Write", "Edit":
		if p, _ := fields["file_path"].(string); strings.Contains(p, "/allowed/") {
			return map[string]any{"behavior": "allow", "updatedInput": fields}
		}
		return map[string]any{"behavior": "deny", "message": "CI policy: writes only under ./allowed/"}
	case "Bash":
		return map[string]any{"behavior": "deny", "message": "CI policy: no shell commands"}
	case "AskUserQuestion":
		answers := map[string]string{}
		qs, _ := fields["questions"].([]any)
		for _, q := range qs {
			qm, _ := q.(map[string]any)
			opts, _ := qm["options"].([]any)
			if len(opts) == 0 {
				continue
			}
			first, _ := opts[0].(map[string]any)
			text, _ := qm["question"].(string)
			label, _ := first["label"].(string)
			answers[text] = label
		}
		fields["answers"] = answers
		return map[string]any{"behavior": "allow", "updatedInput": fields}
	case "ExitPlanMode":
		return map[string]any{"behavior": "allow", "updatedInput": fields}
	}
	return map[string]any{"behavior": "deny", "message": "CI policy: " + in.ToolName + " is not allowed"}
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "policy", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "approve", Description: "Answers permission asks by CI policy.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"tool_name":{"type":"string"},"input":{"type":"object"},"tool_use_id":{"type":"string"}},"required":["tool_name","input"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in input
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if path := os.Getenv("POLICY_LOG"); path != "" {
				if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
					json.NewEncoder(f).Encode(in)
					f.Close()
				}
			}
			out, _ := json.Marshal(decide(in))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
