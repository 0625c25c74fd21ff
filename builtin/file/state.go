package file

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/gantry-dev/gantry/tool"
)

// errNoFileStates is the error of Write, Edit and NotebookEdit in an
// environment without a file-state cache.
var errNoFileStates = errors.New("this session has no file-state cache (env.Files is nil), so it cannot check that the file was read and is unchanged; file edits are disabled")

func hashBytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// readState is the state Read records. Offset is the 1-based first line
// (always >= 1 for a read, which is how a read is told apart from a write's
// state, whose Offset is 0).
func readState(path string, info fs.FileInfo, hash string, offset, limit int, partial bool, at time.Time) tool.FileState {
	return tool.FileState{
		Path: path, Size: info.Size(), ModTime: info.ModTime(), Hash: hash,
		Offset: offset, Limit: limit, Partial: partial, At: at,
	}
}

// writtenState is the state Write, Edit and NotebookEdit record after a
// write: the whole file is known.
func writtenState(path string, info fs.FileInfo, content []byte, at time.Time) tool.FileState {
	return tool.FileState{Path: path, Size: info.Size(), ModTime: info.ModTime(), Hash: hashBytes(content), At: at}
}

// checkFresh reports whether the file now holding content (with info) is the
// one recorded in st: by hash when st has one (authoritative: a touched file
// is still fresh, a same-size change within the clock's granularity is
// not), else by size and modification time.
func checkFresh(path string, st tool.FileState, info fs.FileInfo, content []byte) error {
	if st.Hash != "" {
		if hashBytes(content) == st.Hash {
			return nil
		}
	} else if st.Size == info.Size() && st.ModTime.Equal(info.ModTime()) {
		return nil
	}
	return fmt.Errorf("%s has changed since it was last read (now %d bytes, modified %s; read at %d bytes, modified %s). Read it again before changing it",
		path, info.Size(), info.ModTime().Format(time.RFC3339), st.Size, st.ModTime.Format(time.RFC3339))
}

// requireRead returns the recorded state of path, or an error telling the
// model to read the file first. With whole it also requires a state that
// covers the whole file.
func requireRead(files tool.FileStates, path string, whole bool) (tool.FileState, error) {
	if files == nil {
		return tool.FileState{}, errNoFileStates
	}
	st, ok := files.Get(path)
	if !ok {
		return st, fmt.Errorf("%s has not been read in this session. Read it first, then change it", path)
	}
	if whole && st.Partial {
		return st, fmt.Errorf("only part of %s has been read in this session; read the whole file before overwriting it (or use Edit to change a part)", path)
	}
	return st, nil
}
