package texttools

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

var benchNames = []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "TaskList", "WebFetch"}

// BenchmarkChunk is the parse overhead per streamed chunk (a typical
// 16-byte delta of a reply mixing text and calls). Target ≤ 2 µs.
func BenchmarkChunk(b *testing.B) {
	reply := strings.Repeat("Some text with a < b. <Read>\n<file_path>/src/a.go</file_path>\n</Read>\n<Write><content>\nif a < b && c {\n}\n</content></Write>", 8)
	var chunks []string
	for i := 0; i < len(reply); i += 16 {
		chunks = append(chunks, reply[i:min(i+16, len(reply))])
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		p := newParser(benchNames)
		for _, c := range chunks {
			p.feed(c)
		}
		p.finish()
		n += len(chunks)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/chunk")
}

// BenchmarkTenCallReply turns a whole 10-call reply, streamed in 16-byte
// deltas, into events through the provider wrapper. Target ≤ 200 µs.
func BenchmarkTenCallReply(b *testing.B) {
	var sb strings.Builder
	for i := range 10 {
		sb.WriteString("Step " + string(rune('0'+i)) + ".\n<Bash>\n<command>go test ./... 2>&1 | grep -v '^ok' && echo \"<done>\"</command>\n<timeout>60000</timeout>\n</Bash>\n")
	}
	reply := sb.String()
	inner := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
		return func(yield func(llm.Event, error) bool) {
			if !yield(llm.Event{Type: llm.EventMessageStart}, nil) {
				return
			}
			for i := 0; i < len(reply); i += 16 {
				if !yield(llm.Event{Type: llm.EventTextDelta, Text: reply[i:min(i+16, len(reply))]}, nil) {
					return
				}
			}
			yield(llm.Event{Type: llm.EventMessageEnd, StopReason: llm.StopEndTurn}, nil)
		}
	})
	specs := []*tool.Spec{{Name: "Bash", InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"}}}`)}}
	p := New(inner)
	req := &llm.Request{Tools: specs, Messages: []llm.Message{llm.UserText("go")}}
	b.ReportAllocs()
	for b.Loop() {
		calls := 0
		for ev := range p.Stream(context.Background(), req) {
			if ev.Type == llm.EventToolUseEnd {
				calls++
			}
		}
		if calls != 10 {
			b.Fatalf("%d calls", calls)
		}
	}
}
