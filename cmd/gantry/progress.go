package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
)

// progress draws a spinner and one line per finished tool call on a
// terminal (stderr), so that the result on stdout stays clean.
type progress struct {
	w     io.Writer
	mu    sync.Mutex
	label string
	start time.Time
	desc  map[string]string
	done  chan struct{}
	wg    sync.WaitGroup
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, label: "thinking", start: time.Now(), desc: map[string]string{}, done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.mu.Lock()
				fmt.Fprintf(p.w, "\r\033[K%s %s… %ds", spinnerFrames[i%len(spinnerFrames)], p.label, int(time.Since(p.start).Seconds()))
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *progress) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\033[K%s\n", s)
}

func (p *progress) event(ev agent.Event) {
	switch e := ev.(type) {
	case *agent.ToolStatus:
		if e.Status.Description != "" {
			p.mu.Lock()
			p.desc[e.Status.ToolUseID] = e.Status.Description
			if e.Status.Phase == tool.PhaseDoing {
				p.label = e.Status.Description
			}
			p.mu.Unlock()
		}
	case *agent.ToolResultEvent:
		o := e.Outcome
		p.mu.Lock()
		d := p.desc[o.ID]
		p.label = "thinking"
		p.mu.Unlock()
		if d == "" {
			d = o.Name
		}
		mark, detail := "✓", fmt.Sprintf("(%s)", o.Duration.Round(time.Millisecond))
		if o.Result != nil && o.Result.IsError {
			mark = "✗"
			msg := firstLine(o.Result.TextContent())
			detail = "— " + msg
		}
		p.line(file.EscapeDisplay(fmt.Sprintf("%s %s %s", mark, oneLine(d, 100), detail)))
	case *agent.SubagentEvent:
		if tr, ok := e.Event.(*agent.ToolResultEvent); ok && tr.Outcome != nil {
			mark := "✓"
			if tr.Outcome.Result != nil && tr.Outcome.Result.IsError {
				mark = "✗"
			}
			p.line(file.EscapeDisplay(fmt.Sprintf("  ↳ %s: %s %s", e.AgentType, mark, tr.Outcome.Name)))
		}
	case *agent.RetryEvent:
		p.line(fmt.Sprintf("… the model's reply broke off; retrying (%d)", e.Attempt))
	case *agent.CompactEvent:
		p.line(fmt.Sprintf("… compacted the conversation (%d → %d messages)", e.Before, e.After))
	case *agent.ModeEvent:
		p.line(fmt.Sprintf("… permission mode %s → %s", e.From, e.To))
	case *agent.NoticeEvent:
		p.line(file.EscapeDisplay("! " + oneLine(e.Text, 200)))
	}
}

// hold stops the spinner and clears its line until the returned function
// is called (while a question is asked on the terminal).
func (p *progress) hold() func() {
	p.mu.Lock()
	fmt.Fprint(p.w, "\r\033[K")
	return p.mu.Unlock
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	fmt.Fprint(p.w, "\r\033[K")
	p.mu.Unlock()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return oneLine(s, 120)
}

// oneLine is [interaction.OneLine], the CLI's usual way to show text on one line.
func oneLine(s string, max int) string { return interaction.OneLine(s, max) }
