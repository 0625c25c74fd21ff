package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Ledger records the commands a process is running, in a directory shared
// by the processes of one Gantry home, so that the next process to start
// after one died (even by SIGKILL) can kill what the dead one left and
// remove its temporary files ([ReapLedger]). `gantry serve` keeps one.
// The zero value records nothing. A Ledger is safe for concurrent use.
type Ledger struct {
	// Dir is the directory of the records (created when needed).
	Dir string
	// Owner names the recording process as [ReapLedger]'s dead function
	// understands it (serve's owner: host/pid/start).
	Owner string
}

// ledgerRecord is one running command.
type ledgerRecord struct {
	Owner string `json:"owner"`
	// Pid and Start name the command's first process (its supervisor, or
	// the shell when unsupervised): its process id and start time in clock
	// ticks since boot, from /proc/PID/stat, so a reused pid is never taken
	// for it. Pgid is its process group.
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
	Pgid  int    `json:"pgid"`
	// Temp are files and directories to remove once it is dead.
	Temp []string `json:"temp,omitempty"`
}

// Record records that pid (a started command leading process group pgid)
// runs for l's owner, with temp to remove if it is reaped. The returned
// function removes the record; call it once the command was waited for.
// On a nil or zero Ledger it records nothing.
func (l *Ledger) Record(pid, pgid int, temp ...string) (done func(), err error) {
	if l == nil || l.Dir == "" {
		return func() {}, nil
	}
	start, err := startTime(pid)
	if err != nil {
		return func() {}, fmt.Errorf("sandbox: ledger: %w", err)
	}
	b, _ := json.Marshal(ledgerRecord{Owner: l.Owner, Pid: pid, Start: start, Pgid: pgid, Temp: temp})
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return func() {}, fmt.Errorf("sandbox: ledger: %w", err)
	}
	path := filepath.Join(l.Dir, strconv.Itoa(pid)+"-"+strconv.FormatUint(start, 10)+".json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return func() {}, fmt.Errorf("sandbox: ledger: %w", err)
	}
	return func() { os.Remove(path) }, nil
}

// Reaped is what [ReapLedger] cleaned up.
type Reaped struct {
	// Commands is how many recorded commands of dead owners it found;
	// Killed how many processes it killed; Removed how many temporary
	// files and directories it removed.
	Commands, Killed, Removed int
}

// ReapLedger kills what the commands recorded in dir by a dead owner left
// (each recorded process if it is still the one that started then, every
// process below it, and every later process of its process group), removes
// their temporary files, and removes their records. dead reports whether
// an owner is known dead; records of live owners stay. A missing dir is
// not an error.
func ReapLedger(dir string, dead func(owner string) bool) (Reaped, error) {
	var r Reaped
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("sandbox: ledger: %w", err)
	}
	var errs []error
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue // removed meanwhile by its owner
		}
		var rec ledgerRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: ledger %s: %w", e.Name(), err))
			os.Remove(path)
			continue
		}
		if !dead(rec.Owner) {
			continue
		}
		r.Commands++
		if rec.Pid > 0 {
			r.Killed += killRecorded(rec.Pid, rec.Start, rec.Pgid)
		}
		for _, t := range rec.Temp {
			if t == "" || !filepath.IsAbs(t) {
				continue
			}
			if _, err := os.Lstat(t); err == nil {
				if err := os.RemoveAll(t); err == nil {
					r.Removed++
				}
			}
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return r, errors.Join(errs...)
}
