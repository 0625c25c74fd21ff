package serve

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/serveapi"
)

// NewOwner names this process in leases: host, process id and start
// time, so that a later process on the same host can tell that the owner
// of a lease is dead without waiting for the lease to run out.
func NewOwner() string {
	return fmt.Sprintf("%s/%d/%d", hostname(), os.Getpid(), time.Now().UnixNano())
}

func hostname() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	return strings.ReplaceAll(host, "/", "_")
}

// Dead reports whether the process named by owner (a [NewOwner] name) is
// known to be dead: it ran on this host and its process id is gone. An
// owner of another host, a name of another form, this process's id, or a
// process id now used by another process is not known dead (its lease
// decides).
func Dead(owner string) bool {
	parts := strings.Split(owner, "/")
	if len(parts) != 3 || parts[0] != hostname() {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return !serveapi.Alive(pid)
}
