package tui

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/transcript"
)

// StoreSessions returns an [Options.Sessions] over a session store: the
// sessions of dir, newest first, each titled with its first prompt. Empty
// sessions (no prompt yet) are left out.
func StoreSessions(st *transcript.Store, dir string) func() ([]SessionInfo, error) {
	return func() ([]SessionInfo, error) {
		infos, err := st.List(dir)
		if err != nil {
			return nil, err
		}
		var out []SessionInfo
		for _, in := range infos {
			if len(out) == maxPicker {
				break
			}
			title, err := firstPrompt(in.Path)
			if err != nil || title == "" {
				continue
			}
			out = append(out, SessionInfo{ID: in.ID, Time: in.ModTime, Title: title})
		}
		return out, nil
	}
}

// firstPrompt reads a transcript up to its first user text.
func firstPrompt(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, 8<<20))
	for {
		var r transcript.Record
		if err := dec.Decode(&r); err != nil {
			if errors.Is(err, io.EOF) {
				return "", nil
			}
			return "", err
		}
		if r.Type != transcript.TypeUser || len(r.Message) == 0 {
			continue
		}
		var m llm.Message
		if json.Unmarshal(r.Message, &m) != nil {
			continue
		}
		for _, b := range m.Content {
			if b.Type == llm.TypeText && strings.TrimSpace(b.Text) != "" {
				return textutil.Truncate(oneLine(b.Text), 70), nil
			}
		}
	}
}
