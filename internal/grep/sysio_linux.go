package grep

import (
	"bytes"
	"io/fs"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// The walk's file-system access on Linux: plain system calls, no os.File.
// os.Open would register every descriptor with the runtime poller (an
// epoll_ctl that fails for files and directories, and fcntl calls), and
// reading a directory through os.File allocates two objects per entry.
// Files are opened relative to their open directory (openat), which spares
// the kernel a walk of the whole path for every file.

// readDirectory reads the directory at path. With keep, the directory stays open
// and fd is its descriptor (the caller closes it with closeDir); otherwise
// fd is -1. complete reports whether the directory's file system reads
// completely (see completeReads): its regular files end at a short read,
// and its listing at a directory read that left room for more entries.
func readDirectory(w *worker, path string, keep bool) (fd int, ents []dirEntry, complete bool, err error) {
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return -1, nil, false, err
	}
	complete = completeReads(fd)
	if len(w.dirBuf) == 0 {
		w.dirBuf = make([]byte, 32<<10)
	}
	for {
		n, err := syscall.Getdents(fd, w.dirBuf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
		ents = parseDirents(w.dirBuf[:n], ents)
		if complete && n < len(w.dirBuf)-maxDirent {
			break // these file systems fill the buffer unless the listing ended
		}
	}
	for i := range ents {
		if ents[i].typ == fs.ModeIrregular { // DT_UNKNOWN: ask
			ents[i].typ = lstatType(path, ents[i].name)
		}
	}
	if !keep {
		syscall.Close(fd)
		fd = -1
	}
	return fd, ents, complete, nil
}

// maxDirent is the largest getdents64 record: the header, a 255-byte name,
// its NUL, padding.
const maxDirent = 19 + 256 + 8

func closeDir(fd int) { syscall.Close(fd) }

// File-system magic numbers (statfs f_type) of the file systems whose
// regular files are read through the page cache: a read returns fewer bytes
// than asked for only at the end of the file.
const (
	ext4Magic    = 0xef53 // also ext2 and ext3
	xfsMagic     = 0x58465342
	btrfsMagic   = 0x9123683e
	tmpfsMagic   = 0x01021994
	f2fsMagic    = 0xf2f52010
	overlayMagic = 0x794c7630
)

// completeReads reports whether the file system of the open directory fd is
// one whose regular files are read completely (see ext4Magic): then a short
// read is the end of the file, and readFile spares the read that would
// return 0. Others — network and FUSE file systems, /proc — may return
// less, and their files are read until a read returns 0.
func completeReads(fd int) bool {
	var st syscall.Statfs_t
	if syscall.Fstatfs(fd, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case ext4Magic, xfsMagic, btrfsMagic, tmpfsMagic, f2fsMagic, overlayMagic:
		return true
	}
	return false
}

// parseDirents appends the entries of a getdents64 buffer to dst, without
// "." and "..". An entry whose type the file system did not record has
// type fs.ModeIrregular. A malformed record ends the parse.
func parseDirents(buf []byte, dst []dirEntry) []dirEntry {
	// One string for the whole buffer: the names are slices of it.
	s := string(buf)
	const nameOff = int(unsafe.Offsetof(syscall.Dirent{}.Name))
	for off := 0; off+nameOff <= len(s); {
		reclen := int(s[off+16]) | int(s[off+17])<<8
		if reclen < nameOff || off+reclen > len(s) {
			break
		}
		name := s[off+nameOff : off+reclen]
		for i := 0; i < len(name); i++ {
			if name[i] == 0 {
				name = name[:i]
				break
			}
		}
		typ := direntType(s[off+18])
		off += reclen
		if name == "" || name == "." || name == ".." {
			continue
		}
		dst = append(dst, dirEntry{name: name, typ: typ})
	}
	return dst
}

func direntType(t byte) fs.FileMode {
	switch t {
	case syscall.DT_REG:
		return 0
	case syscall.DT_DIR:
		return fs.ModeDir
	case syscall.DT_LNK:
		return fs.ModeSymlink
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe
	case syscall.DT_SOCK:
		return fs.ModeSocket
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.DT_BLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// lstatType returns the type of the entry name of the directory dir,
// without following a symbolic link (fs.ModeIrregular when it cannot be
// told).
func lstatType(dir, name string) fs.FileMode {
	fi, err := os.Lstat(joinPath(dir, name))
	if err != nil {
		return fs.ModeIrregular
	}
	return fi.Mode().Type()
}

// openFile is a file opened by readFile. complete: a short read is its
// end (see readDirectory).
type openFile struct {
	fd       int
	complete bool
}

// readFile opens the file ent (relative to its open directory, else by
// path) and reads it into w's buffer. There is no fstat: the walk knows the
// entry is a regular file, and the size cap is enforced while reading (a
// file that fills the buffer is stat'ed once to size the next one;
// O_NONBLOCK keeps a FIFO swapped in meanwhile from blocking the open, and
// its read then fails). ok is false when the file cannot be read, is
// larger than limit, or fills the buffer and is binary by its first
// binaryChunk bytes (the search would skip it: the rest is not read);
// otherwise the caller closes f. With chunked, a file larger than the
// buffer is not read whole: buf is the full buffer, more is set, and the
// caller reads on with f.readMore.
func readFile(w *worker, ent fileEntry, limit int64, chunked bool) (f openFile, buf []byte, more, ok bool) {
	const flags = syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NOCTTY | syscall.O_NONBLOCK
	var (
		fd  int
		err error
	)
	for {
		if ent.dir.fd >= 0 {
			fd, err = openat(w, ent.dir.fd, ent.name, flags)
		} else {
			fd, err = syscall.Open(ent.path(), flags, 0)
		}
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return openFile{}, nil, false, false
	}
	if cap(w.buf) < minBuffer {
		w.buf = make([]byte, minBuffer)
	}
	b := w.buf[:cap(w.buf)]
	n := 0
	for {
		m, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return openFile{}, nil, false, false
		}
		if m == 0 {
			break
		}
		n += m
		if int64(n) > limit {
			syscall.Close(fd)
			return openFile{}, nil, false, false
		}
		if n < len(b) && ent.dir.complete {
			break // a short read on such a file system is the end
		}
		if n == len(b) {
			// A binary file (see cutBinary) is skipped before the
			// rest of it is read: .so, .a and image files are
			// often large.
			if bytes.IndexByte(b[:min(n, binaryChunk)], 0) >= 0 {
				syscall.Close(fd)
				return openFile{}, nil, false, false
			}
			// A large file: size the buffer once (the size may be
			// stale; reading goes on until EOF either way), or
			// hand it over in chunks.
			size := 2 * int64(len(b))
			var st syscall.Stat_t
			if syscall.Fstat(fd, &st) == nil && st.Size >= int64(n) {
				if st.Size > limit {
					syscall.Close(fd)
					return openFile{}, nil, false, false
				}
				if chunked {
					return openFile{fd: fd, complete: ent.dir.complete}, b, true, true
				}
				size = max(size, st.Size+1)
			}
			nb := make([]byte, size)
			copy(nb, b[:n])
			b, w.buf = nb, nb
		}
	}
	return openFile{fd: fd}, b[:n], false, true
}

// readMore fills b from the file: more is false at the end of the file.
// ok is false when a read failed.
func (f openFile) readMore(b []byte) (n int, more, ok bool) {
	for n < len(b) {
		m, err := syscall.Read(f.fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, false, false
		}
		if m == 0 {
			return n, false, true
		}
		n += m
		if n < len(b) && f.complete {
			return n, false, true
		}
	}
	return n, true, true
}

// openat is syscall.Openat without its allocation of the name's C string:
// the name is copied into w's scratch buffer. A name from a directory
// listing holds no NUL byte.
func openat(w *worker, dirfd int, name string, flags int) (int, error) {
	w.name = append(append(w.name[:0], name...), 0)
	fd, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&w.name[0])), uintptr(flags), 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// modTime returns the open file's modification time.
func (f openFile) modTime() time.Time {
	var st syscall.Stat_t
	if syscall.Fstat(f.fd, &st) != nil {
		return time.Time{}
	}
	return time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
}

func (f openFile) close() { syscall.Close(f.fd) }
