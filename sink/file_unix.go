//go:build unix

package sink

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"simpler.dev/log/envelope"
)

// fileState is what a logFile keeps about the file it has open.
type fileState struct {
	fd int          // f's descriptor (f.Fd would make it blocking)
	id fileIdentity // device and inode, to notice a replaced path
}

type fileIdentity struct{ dev, ino uint64 }

// dirHandle is the bound directory, held open: the file is created and
// looked up relative to it, so a directory renamed or removed after the
// bind, and a symbolic link planted at its old path, never take the file
// elsewhere. The path the caller gave is followed once, at the bind.
type dirHandle struct{ fd int }

func openDir(abs string) (dirHandle, error) {
	fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return dirHandle{fd: -1}, &os.PathError{Op: "open", Path: abs, Err: err}
	}
	return dirHandle{fd: fd}, nil
}

func (d dirHandle) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}

// open opens the log file: append-only, close-on-exec, non-blocking
// (a FIFO without a reader fails at once instead of hanging), refusing a
// symbolic link at the last component; then it checks what it opened and
// refuses anything but a regular file with one link owned by this user. A
// file this call creates gets mode 0640 whatever the umask; an existing
// file keeps its mode. It returns the file, its state, and whether this
// call created it. The file is share-locked (flock) while open, so that
// another run's retention can tell it is live; a lock that cannot be had
// changes nothing else.
func (d *logDir) open() (*os.File, fileState, bool, error) {
	const flags = unix.O_WRONLY | unix.O_APPEND | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK
	fd, err := unix.Openat(d.dh.fd, d.name, flags|unix.O_CREAT|unix.O_EXCL, 0o640)
	created := err == nil
	if errors.Is(err, unix.EEXIST) {
		fd, err = unix.Openat(d.dh.fd, d.name, flags, 0)
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, fileState{}, false, fmt.Errorf("%w %s: it is a symbolic link", ErrUnsafeFile, d.filePath)
	case errors.Is(err, unix.ENXIO):
		return nil, fileState{}, false, fmt.Errorf("%w %s: it is a FIFO or socket", ErrUnsafeFile, d.filePath)
	case err != nil:
		return nil, fileState{}, false, &os.PathError{Op: "open", Path: d.filePath, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fileState{}, false, &os.PathError{Op: "fstat", Path: d.filePath, Err: err}
	}
	if why := unsafeFile(&st); why != "" {
		unix.Close(fd)
		return nil, fileState{}, false, fmt.Errorf("%w %s: %s", ErrUnsafeFile, d.filePath, why)
	}
	if created {
		_ = unix.Fchmod(fd, 0o640)
	}
	_ = unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
	return os.NewFile(uintptr(fd), d.filePath), fileState{fd: fd, id: fileIdentity{uint64(st.Dev), st.Ino}}, created, nil
}

// heads reports whether the file open at the path (fh, state st) starts
// with run's [HOSTLOG_RUN] record: it was written by this run (another
// sink of this process). Its first line is read through a descriptor of
// its own (fh is write-only), opened as fh was, and only if that is the
// same file.
func (d *logDir) heads(_ *os.File, st fileState, run *envelope.Run) bool {
	fd, err := unix.Openat(d.dh.fd, d.name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var fs unix.Stat_t
	if unix.Fstat(fd, &fs) != nil || (fileIdentity{uint64(fs.Dev), fs.Ino}) != st.id {
		return false
	}
	var buf [slotSize]byte
	n, _ := unix.Pread(fd, buf[:], 0)
	return runHeads(buf[:max(n, 0)], run)
}

// live reports whether a writer holds name (a regular file in the
// directory) open: a lock of its own cannot be had. A file that cannot be
// opened is not live.
// livenessKnown says live can tell: the sweep of killed runs' debris
// relies on it.
const livenessKnown = true

func (d dirHandle) live(_ string, name string) bool {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return errors.Is(unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB), unix.EWOULDBLOCK)
}

// same reports whether s and o are the same file.
func (s fileState) same(o fileState) bool { return s.id == o.id }

// unsafeFile says why an opened log file must not be written, or "".
func unsafeFile(st *unix.Stat_t) string {
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Sprintf("it is not a regular file (mode %#o)", st.Mode&unix.S_IFMT)
	case st.Nlink != 1:
		return fmt.Sprintf("it has %d hard links", st.Nlink)
	case int(st.Uid) != os.Geteuid():
		return fmt.Sprintf("it is owned by uid %d, not %d", st.Uid, os.Geteuid())
	}
	return ""
}

// replaced reports whether the path no longer names the open file, whose
// state is open (removed, or replaced by another).
func (d *logDir) replaced(open fileState) bool {
	var st unix.Stat_t
	return unix.Fstatat(d.dh.fd, d.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || (fileIdentity{uint64(st.Dev), st.Ino}) != open.id
}

// unlinked reports whether the open file has no link left: what was
// just written there reached no file anyone can read.
func (lf *logFile) unlinked() bool {
	var st unix.Stat_t
	return unix.Fstat(lf.state.fd, &st) == nil && st.Nlink == 0
}

// list returns the names in the directory, read through the held handle
// (a fresh descriptor for ".", so no offset is shared).
func (d dirHandle) list(string) ([]string, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	dir := os.NewFile(uintptr(fd), ".")
	defer dir.Close()
	return dir.Readdirnames(-1)
}

// remove unlinks name.
func (d dirHandle) remove(_ string, name string) error { return unix.Unlinkat(d.fd, name, 0) }

// renameNew renames from to to, both in the directory, failing with
// errNameTaken rather than replace a file at to.
func (d dirHandle) renameNew(_ string, from, to string) error {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, to, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return errNameTaken
	}
	return unix.Renameat(d.fd, from, d.fd, to)
}
