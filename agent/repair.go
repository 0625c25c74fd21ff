package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
)

// Texts of the results repairHistory gives to tool calls without one.
const (
	lostResultText  = "The result of this tool call was lost from the session transcript; it may or may not have run."
	endedResultText = "The session ended before this tool call finished; it may or may not have run."
	lostStartText   = "[The start of this conversation was lost from its transcript.]"
)

// repairStats counts what repairHistory changed.
type repairStats struct {
	corrupt, duplicates, empty, dupUses, orphanResults, closed, merged int
	placeholder                                                        bool
}

func (s repairStats) notes() []string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.corrupt, "corrupt or torn line(s) skipped")
	add(s.duplicates, "duplicated record(s) dropped")
	add(s.empty, "empty message(s) dropped")
	add(s.dupUses, "repeated tool call(s) dropped")
	add(s.orphanResults, "tool result(s) without their call dropped")
	add(s.closed, "tool call(s) without a result closed with an error result")
	add(s.merged, "consecutive message(s) of one role merged")
	if s.placeholder {
		parts = append(parts, "a placeholder added for the lost start")
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{"the session transcript was damaged and has been repaired for resuming: " + strings.Join(parts, ", ") + "."}
}

// historyFromRecords rebuilds the conversation from a transcript: from the
// last compaction summary on (or from the start), every user and assistant
// message, each record once (by uuid), repaired so that the next request is
// valid (see [repairHistory]). corrupt is the number of lines loading
// skipped; notes say what was repaired, for the user.
func historyFromRecords(recs []transcript.Record, corrupt int) (msgs []llm.Message, notes []string) {
	st := repairStats{corrupt: corrupt}
	start := 0
	for i, r := range recs {
		if r.Type == transcript.TypeSummary {
			start = i
		}
	}
	seen := map[string]bool{}
	var out []llm.Message
	for _, r := range recs[start:] {
		if r.Type != transcript.TypeUser && r.Type != transcript.TypeAssistant && r.Type != transcript.TypeSummary {
			continue
		}
		if r.UUID != "" {
			if seen[r.UUID] {
				st.duplicates++
				continue
			}
			seen[r.UUID] = true
		}
		var m llm.Message
		if len(r.Message) == 0 || json.Unmarshal(r.Message, &m) != nil {
			st.empty++
			continue
		}
		out = append(out, m)
	}
	out = repairHistory(out, &st)
	return out, st.notes()
}

// repairHistory makes a conversation sendable whatever a crash or a
// corrupt line did to it, counting what it changes in st:
//
//   - empty text blocks, empty messages and messages of other roles go;
//   - a tool use whose id was used before goes (a duplicated record);
//   - a tool result that answers no tool use of the assistant message right
//     before it goes (its call was lost), as does a second result for one
//     call;
//   - a tool use without a result in the next message gets an error result
//     there (results first in that user message, as the APIs require);
//   - consecutive messages of one role are merged;
//   - the conversation starts with a user message (a placeholder when the
//     start was lost).
func repairHistory(msgs []llm.Message, st *repairStats) []llm.Message {
	if st == nil {
		st = &repairStats{}
	}
	var out []llm.Message
	usedIDs := map[string]bool{}
	var pending []string // tool uses of the last assistant message awaiting results
	closeResults := func(ids []string, text string) []llm.Block {
		blocks := make([]llm.Block, 0, len(ids))
		for _, id := range ids {
			blocks = append(blocks, llm.ToolResult(id, []tool.Content{tool.Text(text)}, true))
		}
		st.closed += len(ids)
		return blocks
	}
	for _, m := range msgs {
		var blocks []llm.Block
		switch m.Role {
		case llm.RoleAssistant:
			for _, b := range m.Content {
				switch {
				case b.Type == llm.TypeText && b.Text == "":
				case b.Type == llm.TypeToolUse && (b.ID == "" || usedIDs[b.ID]):
					st.dupUses++
				case b.Type == llm.TypeToolResult:
					st.orphanResults++ // never valid in an assistant message
				default:
					if b.Type == llm.TypeToolUse {
						usedIDs[b.ID] = true
					}
					blocks = append(blocks, b)
				}
			}
			if len(blocks) == 0 {
				st.empty++
				continue
			}
			if len(pending) > 0 {
				out = append(out, llm.UserMessage(closeResults(pending, lostResultText)...))
				pending = nil
			}
			if n := len(out); n > 0 && out[n-1].Role == llm.RoleAssistant {
				st.merged++
				out[n-1].Content = append(out[n-1].Content, blocks...)
			} else {
				out = append(out, llm.Message{Role: llm.RoleAssistant, Content: blocks})
			}
			for _, b := range blocks {
				if b.Type == llm.TypeToolUse {
					pending = append(pending, b.ID)
				}
			}
		case llm.RoleUser:
			want := map[string]bool{}
			for _, id := range pending {
				want[id] = true
			}
			var results, rest []llm.Block
			for _, b := range m.Content {
				switch {
				case b.Type == llm.TypeText && b.Text == "":
				case b.Type == llm.TypeToolResult:
					if !want[b.ToolUseID] {
						st.orphanResults++
						continue
					}
					delete(want, b.ToolUseID)
					results = append(results, b)
				case b.Type == llm.TypeToolUse:
					st.dupUses++ // never valid in a user message
				default:
					rest = append(rest, b)
				}
			}
			var missing []string
			for _, id := range pending {
				if want[id] {
					missing = append(missing, id)
				}
			}
			pending = nil
			blocks = append(append(results, closeResults(missing, lostResultText)...), rest...)
			if len(blocks) == 0 {
				st.empty++
				continue
			}
			if n := len(out); n > 0 && out[n-1].Role == llm.RoleUser {
				st.merged++
				out[n-1].Content = append(out[n-1].Content, blocks...)
			} else {
				out = append(out, llm.Message{Role: llm.RoleUser, Content: blocks})
			}
		default:
			st.empty++
		}
	}
	if len(pending) > 0 {
		out = append(out, llm.UserMessage(closeResults(pending, endedResultText)...))
	}
	if len(out) > 0 && out[0].Role != llm.RoleUser {
		st.placeholder = true
		out = append([]llm.Message{llm.UserText(lostStartText)}, out...)
	}
	return out
}
