//go:build linux

package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroup is a cgroup v2 made for one command.
type cgroup struct {
	dir string
	fd  int
}

// newCgroup makes a cgroup under parent ("" = this process's own cgroup in
// the unified hierarchy).
func newCgroup(parent string) (*cgroup, error) {
	if parent == "" {
		var err error
		if parent, err = ownCgroup(); err != nil {
			return nil, err
		}
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(parent, "gantry-sandbox-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		return nil, errors.New("cgroup.kill not supported (Linux 5.14+)")
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return &cgroup{dir: dir, fd: fd}, nil
}

// destroy kills every process in the cgroup and removes it.
func (c *cgroup) destroy() {
	_ = unix.Close(c.fd)
	_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	// The cgroup can be removed once the killed processes are gone.
	for i := 0; i < 200; i++ {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ownCgroup returns the directory of this process's cgroup in the cgroup v2
// hierarchy, if it is writable.
func ownCgroup() (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			dir := filepath.Join(mount, rest)
			if unix.Access(dir, unix.W_OK) != nil {
				return "", errors.New("own cgroup is not writable")
			}
			return dir, nil
		}
	}
	return "", errors.New("no cgroup v2 membership")
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint options … - fstype source opts
		fields := strings.Fields(sc.Text())
		for i, fld := range fields {
			if fld == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4], nil
			}
		}
	}
	return "", errors.New("cgroup v2 is not mounted")
}

// CgroupCheck reports whether commands can be put in cgroups of their own
// here (nil) or why not.
func CgroupCheck() error {
	c, err := newCgroup("")
	if err != nil {
		return err
	}
	c.destroy()
	return nil
}
