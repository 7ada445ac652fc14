//go:build unix

package sink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// dup returns a descriptor of the directory of its own (a fresh open of
// "." relative to the one held), for a compression that may outlive the
// handle the dirFile holds (closed by Reopen and Close).
func (d dirHandle) dup() (dirHandle, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return dirHandle{fd: -1}, err
	}
	return dirHandle{fd: fd}, nil
}

// openRotated opens name in the directory for reading, without following
// a symbolic link and without blocking on a FIFO, and returns it with its
// state; anything but a regular file with one link owned by this user
// (unsafeFile) is refused with an error wrapping ErrUnsafeFile.
func (d dirHandle) openRotated(abs, name string) (*os.File, fileState, error) {
	path := filepath.Join(abs, name)
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, fileState{}, fmt.Errorf("%w %s: it is a symbolic link", ErrUnsafeFile, path)
	case err != nil:
		return nil, fileState{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fileState{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if why := unsafeFile(&st); why != "" {
		unix.Close(fd)
		return nil, fileState{}, fmt.Errorf("%w %s: %s", ErrUnsafeFile, path, why)
	}
	return os.NewFile(uintptr(fd), path), fileState{fd: fd, id: fileIdentity{uint64(st.Dev), st.Ino}}, nil
}

// createTemp creates name in the directory, mode 0640 whatever the umask,
// for writing, without following a symbolic link and failing rather than
// open an existing file; one already there that retention could remove
// (left by a process of this pid killed while compressing) is removed
// first. It returns the file and its descriptor.
func (d dirHandle) createTemp(abs, name string) (*os.File, int, error) {
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	fd, err := unix.Openat(d.fd, name, flags, 0o640)
	if errors.Is(err, unix.EEXIST) {
		if _, ok := d.removable(abs, name); ok && d.remove(abs, name) == nil {
			fd, err = unix.Openat(d.fd, name, flags, 0o640)
		}
	}
	if err != nil {
		return nil, -1, &os.PathError{Op: "create", Path: filepath.Join(abs, name), Err: err}
	}
	_ = unix.Fchmod(fd, 0o640)
	return os.NewFile(uintptr(fd), filepath.Join(abs, name)), fd, nil
}

// stamp sets the open file's modification time, through its descriptor,
// fd; a failure leaves the time it has.
func stamp(_ *os.File, fd int, mtime time.Time) {
	tv := unix.NsecToTimeval(mtime.UnixNano())
	_ = unix.Futimes(fd, []unix.Timeval{tv, tv})
}

// sync fsyncs the directory, so a rename in it is on the disk before
// the file it replaces is removed.
func (d dirHandle) sync() { _ = unix.Fsync(d.fd) }

// exists reports whether name is in the directory, a link or not.
func (d dirHandle) exists(_ string, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}
