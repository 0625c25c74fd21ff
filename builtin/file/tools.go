package file

import "github.com/gantry-dev/gantry/tool"

// Tools returns Read, Write, Edit and NotebookEdit, in that order, sharing
// one set of per-path write locks (opts.Locks, or a new set).
func Tools(opts Options) []tool.Tool {
	if opts.Locks == nil {
		opts.Locks = NewLocks()
	}
	return []tool.Tool{NewRead(opts), NewWrite(opts), NewEdit(opts), NewNotebookEdit(opts)}
}
