//go:build !unix

package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// dup stands for a descriptor of the directory of the job's own: without
// the POSIX calls files are named by path.
func (d dirHandle) dup() (dirHandle, error) { return d, nil }

// openRotated opens name for reading, refusing a symbolic link or
// anything but a regular file, and returns it with its state.
func (dirHandle) openRotated(abs, name string) (*os.File, fileState, error) {
	path := filepath.Join(abs, name)
	if fi, err := os.Lstat(path); err != nil {
		return nil, fileState{}, err
	} else if !fi.Mode().IsRegular() {
		return nil, fileState{}, fmt.Errorf("%w %s: it is not a regular file (%v)", ErrUnsafeFile, path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fileState{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileState{}, err
	}
	return f, fileState{fi: fi}, nil
}

// createTemp creates name for writing, mode 0640, failing rather than
// open an existing file; a regular file already there (left by a process
// killed while compressing) is removed first.
func (d dirHandle) createTemp(abs, name string) (*os.File, int, error) {
	path := filepath.Join(abs, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if os.IsExist(err) {
		if _, ok := d.removable(abs, name); ok && d.remove(abs, name) == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		}
	}
	return f, -1, err
}

// stamp sets the file's modification time, by its path; a failure leaves
// the time it has.
func stamp(f *os.File, _ int, mtime time.Time) { _ = os.Chtimes(f.Name(), mtime, mtime) }

// sync does nothing: without the POSIX calls a directory is not fsync'd.
func (dirHandle) sync() {}

// exists reports whether name is in the directory, a link or not.
func (dirHandle) exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}
