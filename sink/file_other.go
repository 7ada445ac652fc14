//go:build !unix

package sink

import (
	"fmt"
	"os"
	"path/filepath"
)

// fileState is what a logFile keeps about the file it has open.
type fileState struct {
	fi os.FileInfo // the open file, to notice a replaced path
}

// dirHandle stands for the bound directory; without the POSIX calls the
// file is opened by path.
type dirHandle struct{}

func openDir(string) (dirHandle, error) { return dirHandle{}, nil }

func (dirHandle) close() {}

// open opens the log file append-only with mode 0640, refusing a
// symbolic link or anything but a regular file at the path, and returns
// the file and its state. Without the POSIX calls, link counts and owners
// are not checked, and a file replaced between the check and the open is
// not noticed until the next path check.
func (d *logDir) open() (*os.File, fileState, error) {
	if fi, err := os.Lstat(d.filePath); err == nil && !fi.Mode().IsRegular() {
		return nil, fileState{}, fmt.Errorf("%w %s: it is not a regular file (%v)", ErrUnsafeFile, d.filePath, fi.Mode().Type())
	}
	fh, err := os.OpenFile(d.filePath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fileState{}, err
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fileState{}, err
	}
	return fh, fileState{fi: fi}, nil
}

// same reports whether s and o are the same file.
func (s fileState) same(o fileState) bool {
	return s.fi != nil && o.fi != nil && os.SameFile(s.fi, o.fi)
}

// replaced reports whether the path no longer names the open file, whose
// state is open.
func (d *logDir) replaced(open fileState) bool {
	fi, err := os.Stat(d.filePath)
	return err != nil || !os.SameFile(fi, open.fi)
}

// unlinked cannot tell here; the path check (at least once a second)
// notices a removed file.
func (lf *logFile) unlinked() bool { return false }

// list returns the names in the directory.
func (dirHandle) list(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// remove removes name.
func (dirHandle) remove(dir, name string) error { return os.Remove(filepath.Join(dir, name)) }

// renameNew renames from to to, failing with errNameTaken rather than
// replace a file at to.
func (dirHandle) renameNew(dir, from, to string) error {
	if _, err := os.Lstat(filepath.Join(dir, to)); err == nil {
		return errNameTaken
	}
	return os.Rename(filepath.Join(dir, from), filepath.Join(dir, to))
}
