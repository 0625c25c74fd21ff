package llmtest

import (
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/llm"
)

// CheckConversation applies the rules both providers enforce on a
// request's conversation (system and developer messages aside):
//
//   - it starts with a user message;
//   - every message has content (an empty text block counts as none),
//     except that a final assistant message may be empty;
//   - tool-use ids are unique;
//   - every tool use of an assistant message is answered by a tool result
//     right after it: in the next message (Anthropic: a user message whose
//     results come before any other block) or in the tool messages that
//     follow it (OpenAI);
//   - every tool result answers a tool use of the assistant message right
//     before it, once.
func CheckConversation(msgs []Message) error {
	used := map[string]bool{}
	pending := map[string]bool{} // tool uses awaiting their result
	var order []string
	first := true
	missing := func(i int) error {
		var ids []string
		for _, id := range order {
			if pending[id] {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		return fmt.Errorf("messages.%d: tool_use ids were found without tool_result blocks immediately after: %s", i, strings.Join(ids, ", "))
	}
	for i, m := range msgs {
		if m.Role == "system" || m.Role == "developer" {
			continue
		}
		if first && m.Role != "user" {
			return fmt.Errorf("messages.%d: the first message must use the user role, not %q", i, m.Role)
		}
		first = false
		nonEmpty := 0
		for _, b := range m.Content {
			if b.Type == llm.TypeText && b.Text == "" {
				return fmt.Errorf("messages.%d: text content blocks must be non-empty", i)
			}
			nonEmpty++
		}
		last := i == len(msgs)-1
		if nonEmpty == 0 && !(last && m.Role == "assistant") {
			return fmt.Errorf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		switch m.Role {
		case "assistant":
			if err := missing(i); err != nil {
				return err
			}
			pending, order = map[string]bool{}, nil
			for _, b := range m.Content {
				switch b.Type {
				case llm.TypeToolUse:
					if used[b.ID] {
						return fmt.Errorf("messages.%d: tool_use ids must be unique: %s", i, b.ID)
					}
					used[b.ID] = true
					pending[b.ID] = true
					order = append(order, b.ID)
				case llm.TypeToolResult:
					return fmt.Errorf("messages.%d: tool_result blocks are not allowed in assistant messages", i)
				}
			}
		case "user", "tool":
			other := false
			for _, b := range m.Content {
				switch b.Type {
				case llm.TypeToolResult:
					if !pending[b.ToolUseID] {
						return fmt.Errorf("messages.%d: unexpected tool_use_id found in tool_result blocks: %s. Each tool_result block must have a corresponding tool_use block in the previous message", i, b.ToolUseID)
					}
					if other && m.Role == "user" {
						return fmt.Errorf("messages.%d: tool_result blocks must come before any other content", i)
					}
					pending[b.ToolUseID] = false
				case llm.TypeToolUse:
					return fmt.Errorf("messages.%d: tool_use blocks are only allowed in assistant messages", i)
				default:
					other = true
				}
			}
			if m.Role == "user" {
				if err := missing(i); err != nil {
					return err
				}
				pending, order = map[string]bool{}, nil
			}
		default:
			return fmt.Errorf("messages.%d: unknown role %q", i, m.Role)
		}
	}
	return missing(len(msgs))
}
