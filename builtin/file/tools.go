package file

import "github.com/gantry-dev/gantry/tool"

// Tools returns Read, Write, Edit and NotebookEdit, in that order, sharing
// one set of per-path write locks (opts.Locks, or a new set) and one
// journal of temporary files (when opts.JournalDir is set).
func Tools(opts Options) []tool.Tool {
	if opts.Locks == nil {
		opts.Locks = NewLocks()
	}
	opts.journal = &journalHolder{dir: opts.JournalDir}
	return []tool.Tool{NewRead(opts), NewWrite(opts), NewEdit(opts), NewNotebookEdit(opts)}
}
