package tui

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
)

// maxHistory is how many earlier prompts ↑ reaches; the file is cut back
// to that many when it holds twice as many.
const maxHistory = 500

// loadHistory reads the prompt history file (one JSON string per line,
// oldest first) and returns its last maxHistory entries. A missing file is
// an empty history; lines that do not parse are skipped.
func loadHistory(path string) []string {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var all []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			all = append(all, s)
		}
	}
	if len(all) > 2*maxHistory {
		all = all[len(all)-maxHistory:]
		rewriteHistory(path, all)
	}
	if len(all) > maxHistory {
		all = all[len(all)-maxHistory:]
	}
	return all
}

// appendHistory adds one prompt to the file (created 0600: prompts may hold
// what the user pasted).
func appendHistory(path, entry string) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(entry)
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rewriteHistory replaces the file with entries, atomically (a temporary
// file in the same directory, renamed over it).
func rewriteHistory(path string, entries []string) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".history-*")
	if err != nil {
		return
	}
	w := bufio.NewWriter(tmp)
	for _, e := range entries {
		b, _ := json.Marshal(e)
		w.Write(append(b, '\n'))
	}
	if w.Flush() != nil || tmp.Chmod(0o600) != nil || tmp.Close() != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
