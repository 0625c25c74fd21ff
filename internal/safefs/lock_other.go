//go:build !unix

package safefs

import (
	"errors"
	"os"
)

// tryLock cannot tell a live process's journal from an ended one here:
// journals are never swept.
func tryLock(*os.File) (bool, error) { return false, errors.ErrUnsupported }
