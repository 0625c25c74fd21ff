package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/checkpoint"
)

// /rewind: a picker of the session's turn checkpoints, a confirmation
// showing the dry run, then Agent.RewindFiles (and, for the conversation
// too, Agent.ForkBefore and a resume of the fork). Every decision about
// files is the agent's and the checkpoint store's; the UI only asks.

type (
	rewindListMsg struct {
		list []checkpoint.Info
		err  error
		arg  string
	}
	rewindPlanMsg struct {
		info checkpoint.Info
		rep  *checkpoint.Report
		err  error
	}
	rewindDoneMsg struct {
		info         checkpoint.Info
		rep          *checkpoint.Report
		err          error
		conversation bool
		fork         string
		forkErr      error
	}
)

// maxListedPaths is how many paths of each kind the confirmation lists.
const maxListedPaths = 8

func (m *model) cmdRewind(arg string) tea.Cmd {
	if m.busy("/rewind") || m.sess == nil {
		return nil
	}
	return m.rewindStep(func(ag *agent.Agent) tea.Msg {
		l, err := ag.Checkpoints()
		return rewindListMsg{list: l, err: err, arg: arg}
	})
}

// rewindStep runs one step of /rewind off the event loop, on the open
// agent; its message comes back through the bus.
func (m *model) rewindStep(step func(*agent.Agent) tea.Msg) tea.Cmd {
	if m.sess == nil {
		return nil
	}
	m.rewinding = true
	ag := m.sess.Agent
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		m.bus.send(step(ag))
	}()
	return m.tick()
}

func (m *model) showRewindPicker(msg rewindListMsg) tea.Cmd {
	m.rewinding = false
	if msg.err != nil {
		if errors.Is(msg.err, agent.ErrNoCheckpoints) {
			m.print(m.st.warn.Render("/rewind: checkpoints are off in this session (--no-checkpoints, or no session store)"))
		} else {
			m.print(m.st.bad.Render("✗ listing checkpoints: " + esc(msg.err.Error())))
		}
		return m.next()
	}
	var turns []checkpoint.Info
	for _, in := range slices.Backward(msg.list) { // newest first
		if in.Kind == checkpoint.KindTurn {
			turns = append(turns, in)
		}
	}
	if msg.arg != "" {
		for _, in := range msg.list {
			if in.ID == msg.arg {
				return m.rewindPlan(in)
			}
		}
		m.print(m.st.warn.Render("/rewind: no checkpoint " + esc(msg.arg) + " in this session"))
		return m.next()
	}
	if len(turns) == 0 {
		m.print(m.st.faint.Render("no checkpoints in this session yet (one is recorded before each prompt)"))
		return m.next()
	}
	turns = turns[:min(len(turns), maxPicker)]
	var items []item
	for _, in := range turns {
		label := oneLine(in.Label)
		if label == "" {
			label = "(no prompt)"
		}
		items = append(items, item{label: esc(label), hint: in.Created.Local().Format("2006-01-02 15:04:05") + " · " + in.ID})
	}
	m.showChoice(&pickerState{title: "Rewind to before a prompt", m: newMenu(items, false), pick: func(i int) tea.Cmd {
		return m.rewindPlan(turns[i])
	}})
	return nil
}

// rewindPlan computes the rewind without doing it: a dry run that also
// lists the conflicts (Force with DryRun reports them as Overwritten and
// changes nothing).
func (m *model) rewindPlan(info checkpoint.Info) tea.Cmd {
	return m.rewindStep(func(ag *agent.Agent) tea.Msg {
		rep, err := ag.RewindFiles(m.ctx, info.ID, checkpoint.RewindOptions{DryRun: true, Force: true})
		return rewindPlanMsg{info: info, rep: rep, err: err}
	})
}

func (m *model) showRewindPlan(msg rewindPlanMsg) tea.Cmd {
	m.rewinding = false
	if msg.err != nil {
		m.print(m.st.bad.Render("✗ /rewind: " + esc(msg.err.Error())))
		return m.next()
	}
	rep, info := msg.rep, msg.info
	st := m.st
	var b strings.Builder
	b.WriteString(st.faint.Render("before ") + esc(oneLine(info.Label)) + st.faint.Render(" · "+info.Created.Local().Format("2006-01-02 15:04:05")) + "\n")
	if !rep.Changed() {
		b.WriteString(st.faint.Render("the files are as they were then: nothing to change") + "\n")
	}
	m.listPaths(&b, "restore", rep.Restored, st.ok.Render)
	m.listPaths(&b, "remove ", rep.Removed, st.bad.Render)
	m.listPaths(&b, "mode   ", rep.ModeChanged, st.faint.Render)
	if n := len(rep.Overwritten); n > 0 {
		b.WriteString(st.warn.Render(fmt.Sprintf("⚠ %d changed by someone else since the agent's last change (kept unless you confirm twice):", n)) + "\n")
		m.listPaths(&b, "changed", rep.Overwritten, st.warn.Render)
	}
	if n := len(rep.NotCovered); n > 0 {
		b.WriteString(st.faint.Render(fmt.Sprintf("%d paths the checkpoint does not cover (ignored, too large) are left as they are", n)) + "\n")
	}
	items := []item{
		{label: "Rewind the files", hint: "the conversation goes on as it is"},
		{label: "Rewind the files and the conversation", hint: "go on from before this prompt, in a fork of this session"},
		{label: "Cancel"},
	}
	m.showChoice(&pickerState{title: "Rewind", body: strings.TrimRight(b.String(), "\n"), m: newMenu(items, false), pick: func(i int) tea.Cmd {
		if i == 2 {
			m.print(st.faint.Render("/rewind cancelled"))
			return m.next()
		}
		conv := i == 1
		if len(rep.Overwritten) > 0 {
			return m.confirmForce(info, rep.Overwritten, conv)
		}
		return m.rewind(info, false, conv)
	}})
	return nil
}

// confirmForce asks a second time before overwriting a person's changes.
func (m *model) confirmForce(info checkpoint.Info, paths []string, conv bool) tea.Cmd {
	st := m.st
	var b strings.Builder
	b.WriteString(st.warn.Render(fmt.Sprintf("%d paths were changed by someone else after the agent's last change; rewinding overwrites them:", len(paths))) + "\n")
	m.listPaths(&b, "changed", paths, st.warn.Render)
	items := []item{
		{label: "No, keep them", hint: "nothing is rewound"},
		{label: "Yes, overwrite them", hint: "the state before the rewind is kept as a checkpoint"},
	}
	m.showChoice(&pickerState{title: "Overwrite changes made by someone else?", body: strings.TrimRight(b.String(), "\n"), m: newMenu(items, false), pick: func(i int) tea.Cmd {
		if i != 1 {
			m.print(st.faint.Render("/rewind cancelled: the changes are kept"))
			return m.next()
		}
		return m.rewind(info, true, conv)
	}})
	return nil
}

func (m *model) rewind(info checkpoint.Info, force, conv bool) tea.Cmd {
	return m.rewindStep(func(ag *agent.Agent) tea.Msg {
		done := rewindDoneMsg{info: info, conversation: conv}
		done.rep, done.err = ag.RewindFiles(m.ctx, info.ID, checkpoint.RewindOptions{Force: force})
		if done.err == nil && conv {
			done.fork, done.forkErr = ag.ForkBefore(info.ID)
		}
		return done
	})
}

func (m *model) rewound(msg rewindDoneMsg) tea.Cmd {
	m.rewinding = false
	st := m.st
	if msg.err != nil {
		var ce *checkpoint.ConflictError
		if errors.As(msg.err, &ce) {
			// Someone changed files between the plan and the rewind.
			return m.confirmForce(msg.info, ce.Paths, msg.conversation)
		}
		m.print(st.bad.Render("✗ /rewind: " + esc(msg.err.Error())))
		return m.next()
	}
	rep := msg.rep
	var b strings.Builder
	b.WriteString(st.accent.Render("⏪ rewound the files") + st.faint.Render(" to before ") + esc(oneLine(msg.info.Label)) + "\n")
	if !rep.Changed() {
		b.WriteString(st.faint.Render("  nothing had changed") + "\n")
	}
	m.listPaths(&b, "restored", rep.Restored, st.ok.Render)
	m.listPaths(&b, "removed ", rep.Removed, st.bad.Render)
	m.listPaths(&b, "mode    ", rep.ModeChanged, st.faint.Render)
	m.listPaths(&b, "overwrote", rep.Overwritten, st.warn.Render)
	if rep.Before != "" {
		b.WriteString(st.faint.Render("  the state before the rewind is checkpoint "+rep.Before+" (gantry rewind "+rep.Before+" undoes it)") + "\n")
	}
	var cmd tea.Cmd
	switch {
	case !msg.conversation:
	case msg.forkErr != nil:
		b.WriteString(st.bad.Render("  the conversation was not rewound: "+esc(msg.forkErr.Error())) + "\n")
	default:
		b.WriteString(st.faint.Render("  the conversation goes on from before that prompt (session "+msg.fork+"); the prompt is back in the input") + "\n")
		m.open(OpenRequest{SessionID: msg.fork, Model: m.model, Mode: m.mode}, false, false)
		m.input.SetValue(msg.info.Label)
		cmd = m.tick()
	}
	m.print(strings.TrimRight(b.String(), "\n"))
	return tea.Batch(cmd, m.next())
}

// listPaths writes up to maxListedPaths paths, one a line, and how many
// more there are.
func (m *model) listPaths(b *strings.Builder, verb string, paths []string, style func(...string) string) {
	for i, p := range paths {
		if i == maxListedPaths {
			b.WriteString(m.st.faint.Render(fmt.Sprintf("  … and %d more", len(paths)-i)) + "\n")
			return
		}
		b.WriteString("  " + style(verb) + " " + esc(truncate(p, max(m.width-12, 20))) + "\n")
	}
}
